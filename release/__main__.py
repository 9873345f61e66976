"""`python -m release`: the release tools' command line."""

import sys

from release.cli import main

sys.exit(main())
