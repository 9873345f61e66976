"""One request's plan: the rules, the deadline and the peek, put together.

``RequestContext`` holds a request's constants (policy, deadline, read
timeout, whether it can be re-sent) and turns each busy response into a
``RetryPlan`` before any body I/O, then into an ``Outcome`` once the peek, if any,
has stopped. The sync and async transports (`_sync`, `_async`) differ only in
how they read, close and sleep; the clock and the random draw are passed in,
so both flavours make the same decisions and they can be table-tested.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from e2b._transport._deadline import (
    clamp_timeout,
    overall_timeout,
    peek_read_bound,
    read_bound,
    read_timeout,
    retry_fits,
)
from e2b._transport._peek import (
    PeekState,
    Stop,
    peek_budget,
    refusal_body,
    refusal_response,
    replayed_response,
    should_peek,
)
from e2b._transport._retry_rules import (
    RetryPolicy,
    is_retryable,
    parse_retry_after,
    parse_should_retry,
    retry_delay,
)

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
class RetryPlan:
    """What to do with one retryable response, fixed before any body I/O."""

    delay: float
    may_retry: bool
    peek: bool
    started: float  # clock reading the delay counts from


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

    def plan(self, response: httpx.Response, attempt: int) -> RetryPlan | None:
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
        return RetryPlan(delay=delay, may_retry=may_retry, peek=peek, started=now)

    def new_peek(self, plan: RetryPlan) -> PeekState:
        budget = peek_budget(self.policy, plan.delay, plan.started, self.deadline)
        return PeekState(cap=self.policy.peek_cap, budget_end=plan.started + budget)

    def read_bound(self) -> float | None:
        return read_bound(self.read_timeout, self.clock(), self.deadline)

    def peek_read_bound(self, budget_end: float) -> tuple[float, bool]:
        return peek_read_bound(self.read_timeout, self.clock(), self.deadline, budget_end)

    def decide(self, plan: RetryPlan, state: PeekState | None, response: httpx.Response) -> Outcome:
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
