"""When a response is worth another attempt, and after how long.

The retry rules, free of I/O: which statuses are busy, what ``Retry-After``
and ``Should-Retry`` say, the capped jittered backoff, and which requests can
be sent twice. ``RetryPolicy`` holds every knob of the transports, the
peek's included, so that one object configures them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import httpx

from e2b._transport._deadline import LONGEST_WAIT

RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})
PEEK_CAP = 8 * 1024


@dataclass(frozen=True)
class RetryPolicy:
    """How busy responses are retried and how much of a 503 body may be read.

    ``retries`` counts re-sends after the first request. The delay before
    re-send ``n`` (0-based) is ``min(backoff_cap, backoff_base *
    backoff_multiplier**n)`` scaled down by up to ``jitter`` (0 = none,
    1 = full jitter). A ``Retry-After`` in seconds replaces the backoff; one
    above ``max_retry_after`` ends the retries.
    """

    retries: int = 3
    backoff_base: float = 0.5
    backoff_cap: float = 8.0
    backoff_multiplier: float = 2.0
    jitter: float = 0.5
    max_retry_after: float = 60.0
    peek_cap: int = PEEK_CAP
    min_peek_budget: float = 1.0
    # gzip of 8 KiB can expand to megabytes, so decoding stops here.
    decoded_cap: int = 64 * 1024
    close_timeout: float = 1.0

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError("retries must be >= 0")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter must be within [0, 1]")
        if self.backoff_base < 0 or self.backoff_cap < 0:
            raise ValueError("backoff must be >= 0")
        if self.peek_cap < 0 or self.decoded_cap < 0:
            raise ValueError("caps must be >= 0")
        # Every wait the transports make comes from these: each must be one a clock can wait.
        for name in ("backoff_base", "backoff_cap", "max_retry_after", "min_peek_budget", "close_timeout"):
            value = getattr(self, name)
            if not 0.0 <= value <= LONGEST_WAIT:
                raise ValueError(f"{name} must be within [0, {LONGEST_WAIT:g}] seconds")


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header; HTTP dates are not honoured."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def parse_should_retry(value: str | None) -> bool | None:
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    return None


def is_retryable(status: int, should_retry: bool | None) -> bool:
    """Whether a status is worth another attempt; the server's word wins."""
    if should_retry is not None:
        return should_retry and status >= 400
    return status in RETRYABLE_STATUSES


def never_retried(status: int) -> bool:
    """The fast path: a success is handed over before any other rule runs."""
    return status < 400


def backoff_delay(policy: RetryPolicy, attempt: int, draw: float) -> float:
    """Capped exponential backoff; ``draw`` is a uniform sample in [0, 1)."""
    try:
        raw = policy.backoff_base * policy.backoff_multiplier**attempt
    except OverflowError:
        raw = policy.backoff_cap
    capped = min(policy.backoff_cap, raw)
    return capped * (1.0 - policy.jitter * draw)


def retry_delay(policy: RetryPolicy, attempt: int, retry_after: float | None, draw: float) -> float:
    """The wait before the next re-send: the ``Retry-After``, else the backoff.

    A ``Retry-After`` above ``max_retry_after`` ends the retries (``RequestContext.plan``);
    the delay is clamped to it all the same, since the peek's budget is derived from it:
    ``Retry-After: 1e308`` must not become a wait no clock can take.
    """
    if retry_after is not None:
        return min(retry_after, policy.max_retry_after)
    return backoff_delay(policy, attempt, draw)


def is_replayable(request: httpx.Request) -> bool:
    """Only an in-memory body can be sent twice; a generator is drained by
    the first attempt and would resend nothing. Asked before that attempt:
    some transports buffer the body into the request as they send it.
    """
    return isinstance(request.stream, httpx.ByteStream)
