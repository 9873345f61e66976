"""The flavour-free half of the retrying transports.

The sync and async transports differ only in how they read, close and sleep.
Everything they decide (whether to peek, how long for, whether to re-send,
what to hand the caller) lives here so that both make the same decisions.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from e2b._transport import _policy as p

Clock = Callable[[], float]
Random = Callable[[], float]

# One INFO record per re-send, so that an application (the CLI does) can say
# why a call is taking its time. Documented name: the README's "Retries".
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
    stop: p.Stop | None = None
    error: Exception | None = None

    def wants_more(self, now: float) -> bool:
        # The budget is checked only before a wait begins, so a chunk whose
        # wait started inside the budget is always kept.
        if self.stop is not None:
            return False
        if self.size > self.cap:
            self.stop = p.Stop.CAP
        elif now >= self.budget_end:
            self.stop = p.Stop.BUDGET
        return self.stop is None

    def add(self, chunk: bytes) -> None:
        if chunk:
            self.chunks.append(chunk)
            self.size += len(chunk)

    def eof(self) -> None:
        self.stop = p.Stop.EOF

    def fail(self, error: Exception) -> None:
        self.stop = p.Stop.ERROR
        self.error = error

    @property
    def raw(self) -> bytes:
        return b"".join(self.chunks)


@dataclass
class Outcome:
    action: Action
    sleep: float = 0.0
    decoded: bytes | None = None


@dataclass
class RequestContext:
    """Per-request constants: deadline, read timeout, replayability."""

    request: httpx.Request
    policy: p.RetryPolicy
    clock: Clock
    random: Random
    deadline: float | None
    read_timeout: float | None
    replayable: bool

    @classmethod
    def start(
        cls,
        request: httpx.Request,
        policy: p.RetryPolicy,
        clock: Clock,
        random: Random,
        started: float,
        replayable: bool,
    ) -> RequestContext:
        total = p.overall_timeout(request.extensions)
        return cls(
            request=request,
            policy=policy,
            clock=clock,
            random=random,
            deadline=None if total is None else started + total,
            read_timeout=p.read_timeout(request.extensions),
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
        clamped = p.clamp_timeout(timeout, self.deadline - self.clock())
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
        should_retry = p.parse_should_retry(headers.get("should-retry"))
        status = response.status_code
        if not p.is_retryable(status, should_retry):
            return None
        now = self.clock()
        retry_after = p.parse_retry_after(headers.get("retry-after"))
        delay = p.retry_delay(self.policy, attempt, retry_after, self.random())
        may_retry = (
            self.replayable
            and attempt < self.policy.retries
            and (retry_after is None or retry_after <= self.policy.max_retry_after)
            and p.retry_fits(now, delay, self.deadline)
        )
        peek = p.should_peek(
            status,
            headers.get("content-type"),
            headers.get("content-length"),
            self.policy.peek_cap,
        )
        return Plan(delay=delay, may_retry=may_retry, peek=peek, started=now)

    def without_peek(self, plan: Plan) -> Outcome:
        if plan.may_retry:
            return Outcome(Action.RETRY, sleep=plan.delay)
        return Outcome(Action.RETURN)

    def new_peek(self, plan: Plan) -> PeekState:
        budget = p.peek_budget(self.policy, plan.delay, plan.started, self.deadline)
        return PeekState(cap=self.policy.peek_cap, budget_end=plan.started + budget)

    def read_bound(self) -> float | None:
        return p.read_bound(self.read_timeout, self.clock(), self.deadline)

    def after_peek(self, plan: Plan, state: PeekState, response: httpx.Response) -> Outcome:
        assert state.stop is not None
        verdict, decoded = p.judge(
            state.stop,
            state.raw,
            response.headers.get("content-encoding"),
            self.policy.decoded_cap,
        )
        if verdict is p.Verdict.REFUSAL:
            return Outcome(Action.REFUSAL, decoded=decoded)
        now = self.clock()
        # Time spent peeking is part of the wait, not added to it.
        remaining = max(plan.started + plan.delay - now, 0.0)
        if plan.may_retry and p.retry_fits(now, remaining, self.deadline):
            return Outcome(Action.RETRY, sleep=remaining)
        if verdict is p.Verdict.COMPLETE:
            return Outcome(Action.COMPLETE)
        if verdict is p.Verdict.PARTIAL:
            return Outcome(Action.PARTIAL)
        return Outcome(Action.RAISE)

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
        headers=p.rebuilt_headers(response.headers.multi_items()),
        stream=httpx.ByteStream(decoded),
        extensions=p.plain_extensions(response.extensions),
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
