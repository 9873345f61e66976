"""Table tests for the per-request plan in ``_plan``: rules, deadline and peek together."""

from __future__ import annotations

import gzip
import json
import logging

import httpx
import pytest
from e2b._transport import _peek
from e2b._transport._peek import PeekState, Stop
from e2b._transport._plan import Action, RequestContext, RetryPlan
from e2b._transport._retry_rules import RetryPolicy, is_replayable

REFUSAL = json.dumps({"code": 503, "error_code": "sandbox_pause_refused"}).encode()


# (what the peek read, why it stopped) -> is it a refusal; what a transport
# does with it on its last attempt; and when it may still retry.
@pytest.mark.parametrize(
    ("stop", "raw", "encoding", "refusal", "last", "retrying"),
    [
        (Stop.EOF, REFUSAL, None, True, Action.REFUSAL, Action.REFUSAL),
        (Stop.EOF, gzip.compress(REFUSAL, mtime=0), "gzip", True, Action.REFUSAL, Action.REFUSAL),
        (Stop.EOF, b'{"error_code": "busy"}', None, False, Action.COMPLETE, Action.RETRY),
        (Stop.EOF, b'[{"error_code": "sandbox_pause_refused"}]', None, False, Action.COMPLETE, Action.RETRY),
        (Stop.EOF, b'{"error_code": 7}', None, False, Action.COMPLETE, Action.RETRY),
        (Stop.EOF, b"[" * 5000, None, False, Action.COMPLETE, Action.RETRY),
        (Stop.EOF, b"[" * 4000 + b"]" * 4000, None, False, Action.COMPLETE, Action.RETRY),
        (Stop.EOF, b"\xff", None, False, Action.COMPLETE, Action.RETRY),
        # A complete refusal object cut off by the budget is answered at once, never retried.
        (Stop.BUDGET, REFUSAL + b" \n", None, True, Action.REFUSAL, Action.REFUSAL),
        (Stop.BUDGET, b"  " + REFUSAL, None, True, Action.REFUSAL, Action.REFUSAL),
        (Stop.BUDGET, REFUSAL + b"{", None, False, Action.PARTIAL, Action.RETRY),
        (Stop.BUDGET, REFUSAL[:-1], None, False, Action.PARTIAL, Action.RETRY),
        (Stop.BUDGET, b'{"a":' * 2000, None, False, Action.PARTIAL, Action.RETRY),
        (Stop.BUDGET, b'{"error_code": "busy"}', None, False, Action.PARTIAL, Action.RETRY),
        (Stop.CAP, REFUSAL, None, False, Action.PARTIAL, Action.RETRY),
        (Stop.ERROR, REFUSAL, None, False, Action.RAISE, Action.RETRY),
    ],
)
def test_peek_decision(
    stop: Stop, raw: bytes, encoding: str | None, refusal: bool, last: Action, retrying: Action
) -> None:
    decoded = _peek.refusal_body(stop, raw, encoding, 64 * 1024)
    assert (decoded is not None) == refusal
    headers = {"content-type": "application/json", **({"content-encoding": encoding} if encoding else {})}
    response = httpx.Response(503, headers=headers)
    for may_retry, expected in ((False, last), (True, retrying)):
        ctx = _ctx(httpx.Request("GET", "http://x/"), [0.0])
        plan = RetryPlan(delay=0.5, may_retry=may_retry, peek=True, started=0.0)
        state = PeekState(cap=8192, budget_end=1.0, chunks=[raw], size=len(raw), stop=stop, error=OSError("x"))
        outcome = ctx.decide(plan, state, response)
        assert outcome.action is expected
        if expected is Action.REFUSAL:
            assert outcome.body == decoded
            assert ctx.final_response(outcome, response).read() == decoded
        if expected is Action.COMPLETE:
            assert ctx.final_response(outcome, response).read() == raw
        if expected is Action.RAISE:
            with pytest.raises(OSError, match="x"):
                ctx.final_response(outcome, response)


def _ctx(request: httpx.Request, now: list[float]) -> RequestContext:
    return RequestContext.start(
        request, RetryPolicy(retries=1), lambda: now[0], lambda: 0.0, now[0], is_replayable(request)
    )


def test_plan_counts_peek_time_towards_the_delay() -> None:
    now = [0.0]
    request = httpx.Request("GET", "http://x/", extensions={"timeout": {"read": 5, "write": 10}})
    ctx = _ctx(request, now)
    assert ctx.deadline == 10.0
    response = httpx.Response(503, headers={"content-type": "application/json"})
    plan = ctx.plan(response, 0)
    assert plan is not None and plan.peek and plan.may_retry and plan.delay == 0.5
    state = ctx.new_peek(plan)
    assert state.budget_end == 1.0
    state.add(b'{"a"')
    now[0] = 0.3
    state.wants_more(1.0)
    outcome = ctx.decide(plan, state, response)
    assert outcome.action is Action.RETRY
    assert outcome.sleep == 0.2


def test_plan_none_for_success_and_no_retry_for_streams() -> None:
    now = [0.0]
    ctx = _ctx(httpx.Request("POST", "http://x/", content=iter([b"a"])), now)
    assert not ctx.replayable
    assert ctx.plan(httpx.Response(200), 0) is None
    plan = ctx.plan(httpx.Response(429), 0)
    assert plan is not None and not plan.may_retry and not plan.peek
    assert ctx.decide(plan, None, httpx.Response(429)).action is Action.RETURN


def test_a_retry_after_of_1e308_without_a_deadline_returns_with_finite_waits() -> None:
    """`Retry-After: 1e308` with `request_timeout=0`: no retry, and no wait that overflows a clock."""
    now = [0.0]
    ctx = _ctx(httpx.Request("GET", "http://x/"), now)  # no timeout at all: no deadline
    assert ctx.deadline is None
    busy = httpx.Response(503, headers={"content-type": "application/json", "retry-after": "1e308"})
    plan = ctx.plan(busy, 0)
    assert plan is not None and not plan.may_retry and plan.peek
    assert plan.delay == RetryPolicy().max_retry_after
    state = ctx.new_peek(plan)
    assert state.budget_end == plan.delay  # the peek's budget is bounded by the clamped delay
    bound, by_budget = ctx.peek_read_bound(state.budget_end)
    assert (bound, by_budget) == (plan.delay, True)
    state.add(b'{"error_code": "busy"}')
    state.eof()
    assert ctx.decide(plan, state, busy).action is Action.COMPLETE


@pytest.mark.parametrize(
    ("status", "sleep", "attempt", "message"),
    [
        (503, 0.73, 0, "busy (503), retrying in 0.7 s (1/1)"),
        (502, 1.0, 0, "bad gateway (502), retrying in 1.0 s (1/1)"),
        (504, 0.05, 0, "gateway timeout (504), retrying in 0.1 s (1/1)"),
        (418, 2.0, 0, "status (418), retrying in 2.0 s (1/1)"),  # a Should-Retry: true
    ],
)
def test_announce_retry_says_why_how_long_and_which(
    caplog: pytest.LogCaptureFixture, status: int, sleep: float, attempt: int, message: str
) -> None:
    request = httpx.Request("POST", "http://x/sandboxes/s/pause")
    with caplog.at_level(logging.INFO, logger="e2b.retries"):
        _ctx(request, [0.0]).announce_retry(status, sleep, attempt)
    (record,) = caplog.records
    assert record.getMessage() == message
    assert record.url == "http://x/sandboxes/s/pause"  # type: ignore[attr-defined]
