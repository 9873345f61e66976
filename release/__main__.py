import sys

from release.cli import main

sys.exit(main())
