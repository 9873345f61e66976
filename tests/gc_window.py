"""No automatic garbage collection for a block in which a test interrupts its own main thread.

Python runs a signal's handler in the main thread at its next bytecode check, wherever that is.
Inside a gc callback (hypothesis installs one in every worker that has run a hypothesis test) or a
finalizer a collection calls, the handler's KeyboardInterrupt is only reported to sys.unraisablehook
and the interrupted code goes on as if no Ctrl-C had come. With automatic collection off, the main
thread runs only the test's code and the code under test, so the interrupt lands there.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_collection() -> Iterator[None]:
    """No automatic collection in the block (an explicit gc.collect() still runs); as it was after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
