"""The signal dispositions a test that sends or expects a signal relies on, set by the test itself.

How the suite is started must not decide what a signal does: a shell runs a
background job (`nox -s tests &` in a script) with SIGINT ignored, nohup
ignores SIGHUP, and a CI runner may hand down anything. A test that sends
SIGINT, SIGTERM or SIGHUP, to itself or to a subprocess, therefore sets what
it expects first, with `default_dispositions()` (or the `default_signals`
fixture of tests/conftest.py, which wraps it):

- in this process, SIGINT raises KeyboardInterrupt (`signal.default_int_handler`,
  what Python installs at start-up unless SIGINT was ignored), SIGTERM and
  SIGHUP terminate (SIG_DFL);
- in every subprocess started inside the block, all three are SIG_DFL when it
  starts: exec resets a caught signal (SIGINT here) to SIG_DFL and keeps
  SIG_DFL, whereas an ignored one would stay ignored across fork and exec.
  A Python child then installs its own SIGINT handler, as when started from
  a terminal.

Only the main thread may set a handler; pytest and pytest-xdist's workers run
the tests there.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from types import FrameType

Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None

DEFAULTS: dict[signal.Signals, Handler] = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGTERM: signal.SIG_DFL,
    # The e2b CLI keeps an ignored SIGHUP ignored, as `nohup e2b ...` asks: a suite started by nohup
    # once left its SIGHUP test waiting for a death that never came.
    signal.SIGHUP: signal.SIG_DFL,
}


@contextmanager
def dispositions(handlers: Mapping[signal.Signals, Handler]) -> Iterator[None]:
    """Each signal's handler as `handlers` says, for the block; the previous ones after."""
    previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            # None: a handler installed outside Python, which cannot be put back; SIG_DFL is the closest.
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


def default_dispositions() -> AbstractContextManager[None]:
    """SIGINT, SIGTERM and SIGHUP as a terminal would give them, for the block; the previous ones after."""
    return dispositions(DEFAULTS)
