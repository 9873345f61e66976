"""Every decision of the retrying transports, free of I/O.

The sync and async transports (`_sync`, `_async`) differ only in how they
read, close and sleep. What they decide (whether to retry, after how long,
whether to peek at a 503 body and for how long, what to hand the caller)
lives here, once: the clock, the random draw and the response metadata are
passed in, so both flavours make the same decisions and the rules can be
table-tested.
"""

from __future__ import annotations

import enum
import json
import logging
import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx

from e2b._exceptions import is_json_media_type as is_json_media_type  # one definition; the policy asks it too
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


def peek_read_bound(
    read_timeout_s: float | None, now: float, deadline: float | None, budget_end: float
) -> tuple[float, bool]:
    """How long one read of a peek may wait, and whether the peek's budget is what cuts it.

    The budget ends the wait, not just the reads begun after it: a stalled
    body must cost the peek's budget, never a whole read timeout.
    """
    bound = read_bound(read_timeout_s, now, deadline)
    left = max(budget_end - now, 0.0)
    if bound is None or left < bound:
        return left, True
    return bound, False


class BudgetSpent(Exception):
    """A peek's read outlasted the peek's budget; the read stays pending, the peek stops."""


def peek_budget(policy: RetryPolicy, delay: float, now: float, deadline: float | None) -> float:
    """Wall-clock seconds the peek may spend: min(max(delay, floor), time left)."""
    budget = max(delay, policy.min_peek_budget)
    if deadline is not None:
        budget = min(budget, deadline - now)
    return max(budget, 0.0)


def retry_fits(now: float, delay: float, deadline: float | None) -> bool:
    """A re-send must start before the deadline to have any chance."""
    return deadline is None or now + delay < deadline


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


def refusal_body(stop: Stop, raw: bytes, content_encoding: str | None, decoded_cap: int) -> bytes | None:
    """The decoded body when what a peek read is a pause refusal, else None.

    A body cut off by the cap is never one (a refusal is small); one cut off
    by the budget is when a whole refusal object leads it.
    """
    if stop is Stop.ERROR or stop is Stop.CAP:
        return None
    complete = stop is Stop.EOF
    decoded = decode_bounded(raw, content_encoding, decoded_cap, complete=complete)
    if decoded is None:
        return None
    value = parse_json(decoded) if complete else parse_leading_object(decoded)
    return decoded if is_refusal_object(value) else None


def rebuilt_headers(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in items if k.lower() not in _WIRE_HEADERS]


def plain_extensions(extensions: Mapping[str, object]) -> dict[str, object]:
    """Extensions safe to outlive the inner response (no streams, callbacks)."""
    return {k: v for k, v in extensions.items() if isinstance(v, _PLAIN_EXTENSION_TYPES)}


Clock = Callable[[], float]
Random = Callable[[], float]

# One INFO record per re-send, so that an application (the CLI does) can say
# why a call is taking its time. Documented name: docs/users/retries.md.
RETRY_LOG = logging.getLogger("e2b.retries")
_REASONS = {429: "rate limited", 502: "bad gateway", 503: "busy", 504: "gateway timeout"}


class Action(enum.Enum):
    RETURN = "return"  # hand the response over untouched
    RETRY = "retry"
    REFUSAL = "refusal"  # a rebuilt refusal, at once
    COMPLETE = "complete"  # the whole body was read: replay it
    PARTIAL = "partial"  # replay what was read, then stream the rest
    RAISE = "raise"  # the peek's read failed on the last attempt


@dataclass(frozen=True)
class Plan:
    """What to do with one retryable response, fixed before any body I/O."""

    delay: float
    may_retry: bool
    peek: bool
    started: float  # clock reading the delay counts from


@dataclass
class PeekState:
    """The bytes a peek has read and why it stopped; I/O loops feed it."""

    cap: int
    budget_end: float
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    stop: Stop | None = None
    error: Exception | None = None

    def wants_more(self, now: float) -> bool:
        # Checked before each wait; the wait itself ends with the budget
        # (`peek_read_bound`), so a chunk that arrives inside it is kept.
        if self.stop is not None:
            return False
        if self.size > self.cap:
            self.stop = Stop.CAP
        elif now >= self.budget_end:
            self.stop = Stop.BUDGET
        return self.stop is None

    def add(self, chunk: bytes) -> None:
        if chunk:
            self.chunks.append(chunk)
            self.size += len(chunk)

    def eof(self) -> None:
        self.stop = Stop.EOF

    def out_of_budget(self) -> None:
        self.stop = Stop.BUDGET

    def fail(self, error: Exception) -> None:
        self.stop = Stop.ERROR
        self.error = error

    @property
    def raw(self) -> bytes:
        return b"".join(self.chunks)


@dataclass(frozen=True)
class Outcome:
    """What a transport does next, and what it needs to do it."""

    action: Action
    sleep: float = 0.0
    body: bytes | None = None  # REFUSAL: the decoded refusal; COMPLETE: the whole body
    error: Exception | None = None  # RAISE: the failed read


@dataclass
class RequestContext:
    """Per-request constants: deadline, read timeout, replayability."""

    request: httpx.Request
    policy: RetryPolicy
    clock: Clock
    random: Random
    deadline: float | None
    read_timeout: float | None
    replayable: bool

    @classmethod
    def start(
        cls,
        request: httpx.Request,
        policy: RetryPolicy,
        clock: Clock,
        random: Random,
        started: float,
        replayable: bool,
    ) -> RequestContext:
        total = overall_timeout(request.extensions)
        return cls(
            request=request,
            policy=policy,
            clock=clock,
            random=random,
            deadline=None if total is None else started + total,
            read_timeout=read_timeout(request.extensions),
            replayable=replayable,
        )

    def attempt_request(self, attempt: int) -> httpx.Request:
        """The request for this attempt, its timeouts cut to the time left.

        Inner transports start their timeouts afresh per request; without
        this a re-send could outlive the overall deadline by a full timeout.
        """
        if attempt == 0 or self.deadline is None:
            return self.request
        timeout = self.request.extensions.get("timeout")
        clamped = clamp_timeout(timeout, self.deadline - self.clock())
        if clamped is None:
            return self.request
        request = self.request
        return httpx.Request(
            request.method,
            request.url,
            headers=request.headers,
            stream=request.stream,
            extensions={**request.extensions, "timeout": clamped},
        )

    def plan(self, response: httpx.Response, attempt: int) -> Plan | None:
        """None when the response is not retryable at all."""
        headers = response.headers
        should_retry = parse_should_retry(headers.get("should-retry"))
        status = response.status_code
        if not is_retryable(status, should_retry):
            return None
        now = self.clock()
        retry_after = parse_retry_after(headers.get("retry-after"))
        delay = retry_delay(self.policy, attempt, retry_after, self.random())
        may_retry = (
            self.replayable
            and attempt < self.policy.retries
            and (retry_after is None or retry_after <= self.policy.max_retry_after)
            and retry_fits(now, delay, self.deadline)
        )
        peek = should_peek(
            status,
            headers.get("content-type"),
            headers.get("content-length"),
            self.policy.peek_cap,
        )
        return Plan(delay=delay, may_retry=may_retry, peek=peek, started=now)

    def new_peek(self, plan: Plan) -> PeekState:
        budget = peek_budget(self.policy, plan.delay, plan.started, self.deadline)
        return PeekState(cap=self.policy.peek_cap, budget_end=plan.started + budget)

    def read_bound(self) -> float | None:
        return read_bound(self.read_timeout, self.clock(), self.deadline)

    def peek_read_bound(self, budget_end: float) -> tuple[float, bool]:
        return peek_read_bound(self.read_timeout, self.clock(), self.deadline, budget_end)

    def decide(self, plan: Plan, state: PeekState | None, response: httpx.Response) -> Outcome:
        """What to do with a retryable response once its peek, if any, has stopped."""
        if state is None:
            return Outcome(Action.RETRY, sleep=plan.delay) if plan.may_retry else Outcome(Action.RETURN)
        assert state.stop is not None
        encoding = response.headers.get("content-encoding")
        refusal = refusal_body(state.stop, state.raw, encoding, self.policy.decoded_cap)
        if refusal is not None:
            # Also when the budget ran out after a complete refusal object: a
            # refusal is an answer, and a stalled tail must not make it a timeout.
            return Outcome(Action.REFUSAL, body=refusal)
        now = self.clock()
        # Time spent peeking is part of the wait, not added to it.
        remaining = max(plan.started + plan.delay - now, 0.0)
        if plan.may_retry and retry_fits(now, remaining, self.deadline):
            return Outcome(Action.RETRY, sleep=remaining)
        if state.stop is Stop.EOF:
            return Outcome(Action.COMPLETE, body=state.raw)
        if state.stop is Stop.ERROR:
            return Outcome(Action.RAISE, error=state.error)
        return Outcome(Action.PARTIAL)

    def final_response(self, outcome: Outcome, response: httpx.Response) -> httpx.Response:
        """The caller's response for a REFUSAL or COMPLETE outcome, built from bytes
        already read (the inner response is closed); RAISE raises the failed read."""
        if outcome.error is not None:
            raise outcome.error
        assert outcome.body is not None
        if outcome.action is Action.REFUSAL:
            return refusal_response(response, self.request, outcome.body)
        return replayed_response(response, self.request, httpx.ByteStream(outcome.body))

    def announce_retry(self, status: int, sleep: float, attempt: int) -> None:
        """Log the coming re-send ``attempt + 1`` of ``policy.retries``."""
        if not RETRY_LOG.isEnabledFor(logging.INFO):
            return
        RETRY_LOG.info(
            "%s (%d), retrying in %.1f s (%d/%d)",
            _REASONS.get(status, "status"),
            status,
            sleep,
            attempt + 1,
            self.policy.retries,
            extra={
                "status_code": status,
                "retry_in": sleep,
                "attempt": attempt + 1,
                "retries": self.policy.retries,
                "method": self.request.method,
                "url": str(self.request.url),
            },
        )

    def past_deadline(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline

    def read_timeout_error(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout("request deadline passed while reading a 503 body", request=self.request)


def is_replayable(request: httpx.Request) -> bool:
    """Only an in-memory body can be sent twice; a generator is drained by
    the first attempt and would resend nothing. Asked before that attempt:
    some transports buffer the body into the request as they send it.
    """
    return isinstance(request.stream, httpx.ByteStream)


def refusal_response(response: httpx.Response, request: httpx.Request, decoded: bytes) -> httpx.Response:
    """The refusal as plain bytes; the stream must stay unread for the caller."""
    return httpx.Response(
        status_code=response.status_code,
        headers=rebuilt_headers(response.headers.multi_items()),
        stream=httpx.ByteStream(decoded),
        extensions=plain_extensions(response.extensions),
        request=request,
    )


def replayed_response(
    response: httpx.Response,
    request: httpx.Request,
    stream: httpx.SyncByteStream | httpx.AsyncByteStream,
) -> httpx.Response:
    """The same response with a stream that replays what the peek consumed."""
    return httpx.Response(
        status_code=response.status_code,
        headers=response.headers,
        stream=stream,
        extensions=dict(response.extensions),
        request=request,
    )
