"""Tests for the shared peek state and planning in ``_core``."""

from __future__ import annotations

import httpx
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
