"""`python -m codegen`: the pipeline's own dependencies checked first, then the command line."""

import os
import sys
from importlib.util import find_spec

# The pipeline's own dependencies (requirements/codegen.in). Checked before
# anything imports them, so that running outside the codegen environment is
# one line saying how to get it, not a traceback halfway through a verb.
REQUIRED = ("git", "jinja2", "openapi_spec_validator", "platformdirs", "yaml")

missing = [name for name in REQUIRED if find_spec(name.partition(".")[0]) is None or find_spec(name) is None]
if missing:
    print(
        f"codegen: error: missing {', '.join(missing)}: run it through nox (`nox -s codegen`, "
        "`nox -s generated-files`, `nox -s bump -- <ref>`, `nox -s rebuild-runtime -- DIR`), "
        "or `pip install --require-hashes -r requirements/codegen.txt` first",
        file=sys.stderr,
    )
    sys.exit(2)

from codegen.cli import main  # noqa: E402  (after the dependency check, on purpose)

status = main()
# Every verb has settled by now: its locks released, its scratch folder removed, its generators
# stopped, its cache records written.  os._exit skips the interpreter's teardown of every module
# the pipeline loaded (some 20 ms of the `nox -s codegen` loop), once the output is out.
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except (OSError, ValueError):
        pass  # a closed stdout: the status is already chosen
os._exit(status)
