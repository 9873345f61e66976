"""Tests for the shared peek state and planning in ``_core``."""

from __future__ import annotations

import logging

import httpx
import pytest
from e2b._transport._core import Action, PeekState, RequestContext, is_replayable
from e2b._transport._policy import RetryPolicy, Stop


def test_peek_state_stops_at_cap_and_budget() -> None:
    state = PeekState(cap=4, budget_end=10.0)
    assert state.wants_more(0.0)
    state.add(b"abcd")
    assert state.wants_more(0.0)  # exactly at the cap: still looking for EOF
    state.add(b"")
    state.add(b"e")
    assert not state.wants_more(0.0)
    assert state.stop is Stop.CAP
    late = PeekState(cap=4, budget_end=10.0)
    late.add(b"a")
    assert not late.wants_more(10.0)
    assert late.stop is Stop.BUDGET
    assert late.raw == b"a"


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
    outcome = ctx.after_peek(plan, state, response)
    assert outcome.action is Action.RETRY
    assert outcome.sleep == 0.2


def test_plan_none_for_success_and_no_retry_for_streams() -> None:
    now = [0.0]
    ctx = _ctx(httpx.Request("POST", "http://x/", content=iter([b"a"])), now)
    assert not ctx.replayable
    assert ctx.plan(httpx.Response(200), 0) is None
    plan = ctx.plan(httpx.Response(429), 0)
    assert plan is not None and not plan.may_retry and not plan.peek
    assert ctx.without_peek(plan).action is Action.RETURN


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
