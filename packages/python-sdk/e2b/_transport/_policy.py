"""Retry rules for the SDK's HTTP transports, as pure functions.

Everything here is free of I/O and of real time: the clock value, the random
draw and the response metadata are passed in, so the sync and async
transports share one set of rules and the rules can be table-tested.
"""

from __future__ import annotations

import enum
import json
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from e2b.api.error_codes import SANDBOX_PAUSE_REFUSED_ERROR_CODE

RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})
PEEK_STATUS = 503
PEEK_CAP = 8 * 1024

# Headers that describe the wire encoding of a body; they are wrong for a
# body rebuilt from decoded bytes.
_WIRE_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})
_PLAIN_EXTENSION_TYPES = (bytes, str, int, float, bool, type(None))


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
    if retry_after is not None:
        return retry_after
    return backoff_delay(policy, attempt, draw)


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
    return total if exchange else None


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
        out[phase] = None if not isinstance(value, (int, float)) else min(float(value), left)
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
    return {**timeout, "read": overall_timeout(extensions), "write": 0.0}


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
    return max(min(bounds), 0.0)


def peek_budget(policy: RetryPolicy, delay: float, now: float, deadline: float | None) -> float:
    """Wall-clock seconds the peek may spend: min(max(delay, floor), time left)."""
    budget = max(delay, policy.min_peek_budget)
    if deadline is not None:
        budget = min(budget, deadline - now)
    return max(budget, 0.0)


def retry_fits(now: float, delay: float, deadline: float | None) -> bool:
    """A re-send must start before the deadline to have any chance."""
    return deadline is None or now + delay < deadline


def is_json_media_type(content_type: str | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def declared_length(content_length: str | None) -> int | None:
    if content_length is None:
        return None
    try:
        # Duplicate Content-Length headers arrive comma-joined.
        values = {int(v.strip()) for v in content_length.split(",")}
    except ValueError:
        return None
    if len(values) != 1:
        return None
    (value,) = values
    return value if value >= 0 else None


def should_peek(
    status: int,
    content_type: str | None,
    content_length: str | None,
    cap: int,
) -> bool:
    """Only a small JSON 503 can be a refusal, so only it is read."""
    if status != PEEK_STATUS or not is_json_media_type(content_type):
        return False
    declared = declared_length(content_length)
    return declared is None or declared <= cap


def decode_bounded(raw: bytes, content_encoding: str | None, limit: int, *, complete: bool) -> bytes | None:
    """Undo a gzip/deflate body without producing more than ``limit`` bytes.

    None means "cannot tell": an unsupported or stacked encoding, corrupt
    data, output over the limit, or (for a complete body) a truncated stream.
    """
    codings = [
        c.strip().lower() for c in (content_encoding or "").split(",") if c.strip() and c.strip().lower() != "identity"
    ]
    if not codings:
        return raw if len(raw) <= limit else None
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        return None
    wbits_options = [zlib.MAX_WBITS | 16] if codings[0] != "deflate" else [zlib.MAX_WBITS, -zlib.MAX_WBITS]
    for wbits in wbits_options:
        decoder = zlib.decompressobj(wbits)
        try:
            out = decoder.decompress(raw, limit + 1)
        except zlib.error:
            continue
        if len(out) > limit:
            return None
        if complete and not decoder.eof:
            return None
        return out
    return None


def is_refusal_object(value: object) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("error_code"), str)
        and value["error_code"] == SANDBOX_PAUSE_REFUSED_ERROR_CODE
    )


def parse_json(body: bytes) -> object:
    """Parse a whole body; anything unparseable (deep nesting too) is None."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def parse_leading_object(body: bytes) -> object:
    """A complete JSON object at the start of a cut-off body, else None.

    Only whitespace may follow it: anything else means the server was still
    sending the value when the budget ran out.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(stripped)
    except (ValueError, RecursionError):
        return None
    if stripped[end:].strip():
        return None
    return value


class Stop(enum.Enum):
    """Why a peek stopped reading."""

    EOF = "eof"
    CAP = "cap"
    BUDGET = "budget"
    ERROR = "error"


class Verdict(enum.Enum):
    REFUSAL = "refusal"
    COMPLETE = "complete"  # whole body read, not a refusal
    PARTIAL = "partial"  # the rest is still on the wire
    FAILED = "failed"  # the read raised


def judge(
    stop: Stop,
    raw: bytes,
    content_encoding: str | None,
    decoded_cap: int,
) -> tuple[Verdict, bytes | None]:
    """Decide what a peek found; returns the decoded body of a refusal."""
    if stop is Stop.ERROR:
        return Verdict.FAILED, None
    if stop is Stop.CAP:
        return Verdict.PARTIAL, None
    complete = stop is Stop.EOF
    decoded = decode_bounded(raw, content_encoding, decoded_cap, complete=complete)
    if decoded is None:
        return (Verdict.COMPLETE if complete else Verdict.PARTIAL), None
    value = parse_json(decoded) if complete else parse_leading_object(decoded)
    if is_refusal_object(value):
        return Verdict.REFUSAL, decoded
    return (Verdict.COMPLETE if complete else Verdict.PARTIAL), None


def rebuilt_headers(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in items if k.lower() not in _WIRE_HEADERS]


def plain_extensions(extensions: Mapping[str, object]) -> dict[str, object]:
    """Extensions safe to outlive the inner response (no streams, callbacks)."""
    return {k: v for k, v in extensions.items() if isinstance(v, _PLAIN_EXTENSION_TYPES)}
