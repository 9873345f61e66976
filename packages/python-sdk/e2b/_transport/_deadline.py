"""The request's total time budget, and how each wait is cut to it.

httpx has no total timeout; the transports derive one from the request's
timeout phases and make every re-send, read and peek end by it. Pure
arithmetic on the timeout mapping and clock readings passed in.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

# The longest any wait of the transports may be: what a lock's or a future's timeout
# takes on this platform (about 292 years on Linux, 49 days on Windows). A longer one
# raises OverflowError there, so every bound handed to a wait is cut to it, whatever
# the timeout or the answer's headers said.
LONGEST_WAIT = float(threading.TIMEOUT_MAX)


def overall_timeout(extensions: Mapping[str, object]) -> float | None:
    """The request's total budget in seconds, or None for unbounded.

    httpx has no total timeout, and no phase of a request can outlast the
    whole of it, so the total is the longest phase given: ``httpx.Timeout(5)``
    means 5 s in all, retries included, not read + write = 10 s. An explicit
    None read or write means "no limit" and makes the total unbounded.
    """
    timeout = extensions.get("timeout")
    if not isinstance(timeout, Mapping):
        return None
    total = 0.0
    exchange = False  # a connect or pool limit alone says nothing about the exchange
    for phase, value in timeout.items():
        if phase == "read" or phase == "write":
            if not isinstance(value, (int, float)):
                return None  # None is httpx's "no limit"; anything else is not a timeout
            exchange = True
        if isinstance(value, (int, float)) and value > total:
            total = float(value)
    return min(total, LONGEST_WAIT) if exchange else None


def _bounded(value: object) -> float | None:
    """A timeout phase within LONGEST_WAIT; anything but a number is httpx's None, "no limit"."""
    return min(float(value), LONGEST_WAIT) if isinstance(value, (int, float)) else None


def clamp_timeout(timeout: object, left: float) -> dict[str, float | None] | None:
    """httpx timeout phases, each cut to ``left``: a re-send ends by the deadline.

    None when there is nothing to clamp.
    """
    if not isinstance(timeout, Mapping):
        return None
    left = max(left, 0.001)  # zero would mean "non-blocking" to a socket
    out: dict[str, float | None] = {}
    for phase in ("connect", "read", "write", "pool"):
        value = timeout.get(phase)
        out[phase] = None if not isinstance(value, (int, float)) else min(float(value), left, LONGEST_WAIT)
    return out


def operation_timeout(extensions: Mapping[str, object]) -> dict[str, float | None] | None:
    """The timeout phases to hand pyqwest so that its one operation timeout is the total.

    pyqwest's httpx adapter takes read + write as the operation timeout, which
    would double ``httpx.Timeout(5)``; this puts the whole total in ``read``.
    None when the request has no timeout to translate.
    """
    timeout = extensions.get("timeout")
    if not isinstance(timeout, Mapping):
        return None
    # Every phase within LONGEST_WAIT: pyqwest panics on a duration it cannot hold (inf, 1e308).
    phases = {str(phase): _bounded(value) for phase, value in timeout.items()}
    return {**phases, "read": overall_timeout(extensions), "write": 0.0}


def read_timeout(extensions: Mapping[str, object]) -> float | None:
    timeout = extensions.get("timeout")
    if not isinstance(timeout, Mapping):
        return None
    value = timeout.get("read")
    if isinstance(value, (int, float)):
        return max(float(value), 0.0)
    return None


def read_bound(read_timeout_s: float | None, now: float, deadline: float | None) -> float | None:
    """How long one read may wait: the read timeout, cut at the deadline."""
    bounds = [b for b in (read_timeout_s, None if deadline is None else deadline - now) if b is not None]
    if not bounds:
        return None
    return min(max(min(bounds), 0.0), LONGEST_WAIT)


def peek_read_bound(
    read_timeout_s: float | None, now: float, deadline: float | None, budget_end: float
) -> tuple[float, bool]:
    """How long one read of a peek may wait, and whether the peek's budget is what cuts it.

    The budget ends the wait, not just the reads begun after it: a stalled
    body must cost the peek's budget, never a whole read timeout.
    """
    bound = read_bound(read_timeout_s, now, deadline)
    left = min(max(budget_end - now, 0.0), LONGEST_WAIT)
    if bound is None or left < bound:
        return left, True
    return bound, False


def retry_fits(now: float, delay: float, deadline: float | None) -> bool:
    """A re-send must start before the deadline to have any chance."""
    return deadline is None or now + delay < deadline
