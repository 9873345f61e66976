"""`python -m tests.codegen.memo_codegen MEMO -- ARGS`: `python -m codegen ARGS`, its tools answered by the memo.

The test suite's codegen processes, for the tests whose subject is codegen's own logic: the same entry point
(codegen/__main__.py: exit statuses, signal handlers, os._exit), with the toolchain and the readings of the
in-process runs (tests/codegen/memo_toolchain.py and memo_readings.py, sharing the folder MEMO).  The swap is
made here, in a process the suite starts: nothing in codegen/ can be told to make it.  tests/codegen/conftest.py
(`codegen_module`) decides which runs use it.
"""

from __future__ import annotations

import runpy
import sys
from functools import partial
from pathlib import Path

from codegen.generation.generators import using_toolchain
from tests.codegen.memo_readings import READINGS, memoized_readings
from tests.codegen.memo_toolchain import MemoToolchain


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[2] != "--":
        sys.exit("usage: python -m tests.codegen.memo_codegen MEMO -- CODEGEN-ARGS")
    memo, args = Path(sys.argv[1]), sys.argv[3:]
    sys.argv = [sys.argv[0], *args]  # what codegen's parser reads, as `python -m codegen ARGS` leaves it
    # codegen/__main__.py ends the process with os._exit: the block is never left, and need not be.
    with using_toolchain(partial(MemoToolchain, shared=memo)), memoized_readings(memo / READINGS):
        runpy.run_module("codegen", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
