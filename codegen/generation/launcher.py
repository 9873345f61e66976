"""A generator's interpreter: it imports the generator ahead, then runs it with the arguments it is handed.

Run as a script, never imported: `python -I -X utf8 launcher.py MODULE...` (generators.py `launcher`;
`-I` keeps this folder off `sys.path`). The modules are imported at once; stdin then brings one JSON
line, `[module, *arguments]`, or nothing when the generator is not needed after all.
"""

from __future__ import annotations

import json
import os
import runpy
import sys


def main() -> None:
    for module in sys.argv[1:]:
        __import__(module)
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    sys.argv = json.loads(line)
    try:
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as stop:
        status = _status(stop.code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # closed by the generator: nothing left in it
    # Its files are written and closed and its hooks have run: the teardown of everything it
    # imported (some 60 ms for openapi-python-client) is skipped. An exception still ends it the
    # usual way, with its traceback.
    os._exit(status)


def _status(code: object) -> int:
    """sys.exit's argument as an exit status; a message is printed as Python prints it, and is status 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    main()
