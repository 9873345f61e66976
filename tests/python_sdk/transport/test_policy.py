"""Table tests for the transports' decisions in ``_policy``."""

from __future__ import annotations

import gzip
import json
import logging
import zlib

import httpx
import pytest
from e2b._transport import _policy as p
from e2b._transport._policy import Action, PeekState, Plan, RequestContext, RetryPolicy, Stop, is_replayable

REFUSAL = json.dumps({"code": 503, "error_code": "sandbox_pause_refused"}).encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("0", 0.0),
        ("-1", None),
        ("nan", None),
        ("inf", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("", None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert p.parse_retry_after(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("true", True), ("TRUE ", True), ("false", False), ("False", False), ("yes", None), ("", None)],
)
def test_parse_should_retry(value: str | None, expected: bool | None) -> None:
    assert p.parse_should_retry(value) is expected


@pytest.mark.parametrize(
    ("status", "should_retry", "expected"),
    [
        (503, None, True),
        (429, None, True),
        (502, None, True),
        (504, None, True),
        (500, None, False),
        (200, None, False),
        (503, False, False),
        (500, True, True),
        (200, True, False),
        (404, True, True),
    ],
)
def test_is_retryable(status: int, should_retry: bool | None, expected: bool) -> None:
    assert p.is_retryable(status, should_retry) is expected


@pytest.mark.parametrize(
    ("attempt", "draw", "expected"),
    [
        (0, 0.0, 0.5),
        (1, 0.0, 1.0),
        (2, 0.0, 2.0),
        (4, 0.0, 8.0),
        (10, 0.0, 8.0),
        (0, 0.999999, 0.25),
        (3, 0.5, 3.0),
        (10_000, 0.0, 8.0),
    ],
)
def test_backoff_delay(attempt: int, draw: float, expected: float) -> None:
    assert p.backoff_delay(RetryPolicy(), attempt, draw) == pytest.approx(expected, rel=1e-5)


def test_retry_after_replaces_backoff() -> None:
    assert p.retry_delay(RetryPolicy(), 3, 0.25, 0.0) == 0.25
    assert p.retry_delay(RetryPolicy(), 0, None, 0.0) == 0.5


@pytest.mark.parametrize(
    ("extensions", "expected"),
    [
        ({}, None),
        ({"timeout": {"connect": 5, "read": 5, "write": 5, "pool": 5}}, 5.0),
        ({"timeout": {"connect": 2, "read": 0.3, "write": 2, "pool": 2}}, 2.0),
        ({"timeout": {"connect": 9, "read": 1, "write": 1, "pool": None}}, 9.0),
        ({"timeout": {"read": None, "write": 5}}, None),
        ({"timeout": {"read": "soon", "write": 5}}, None),
        ({"timeout": {"read": 2}}, 2.0),
        ({"timeout": {"connect": 1}}, None),
        ({"timeout": {"read": -1, "write": 3}}, 3.0),
        ({"timeout": "bogus"}, None),
    ],
)
def test_overall_timeout(extensions: dict[str, object], expected: float | None) -> None:
    assert p.overall_timeout(extensions) == expected


def test_operation_timeout_puts_the_total_where_pyqwest_sums() -> None:
    timeout = {"connect": 2.0, "read": 0.3, "write": 2.0, "pool": 2.0}
    converted = p.operation_timeout({"timeout": timeout})
    assert converted == {"connect": 2.0, "read": 2.0, "write": 0.0, "pool": 2.0}
    assert p.operation_timeout({"timeout": {"read": None, "write": 1.0}}) == {"read": None, "write": 0.0}
    assert p.operation_timeout({}) is None


def test_clamp_timeout_cuts_each_phase_to_the_time_left() -> None:
    timeout = {"connect": 2.0, "read": 0.3, "write": 2.0, "pool": None}
    assert p.clamp_timeout(timeout, 1.0) == {"connect": 1.0, "read": 0.3, "write": 1.0, "pool": None}
    assert p.clamp_timeout(timeout, -1.0) == {"connect": 0.001, "read": 0.001, "write": 0.001, "pool": None}
    assert p.clamp_timeout("bogus", 1.0) is None


@pytest.mark.parametrize(
    ("read", "now", "deadline", "expected"),
    [
        (None, 0.0, None, None),
        (5.0, 0.0, None, 5.0),
        (None, 1.0, 3.0, 2.0),
        (5.0, 1.0, 3.0, 2.0),
        (1.0, 0.0, 3.0, 1.0),
        (5.0, 4.0, 3.0, 0.0),
    ],
)
def test_read_bound(read: float | None, now: float, deadline: float | None, expected: float | None) -> None:
    assert p.read_bound(read, now, deadline) == expected


@pytest.mark.parametrize(
    ("read", "now", "deadline", "budget_end", "expected"),
    [
        (None, 0.0, None, 1.0, (1.0, True)),  # no read timeout, no deadline: the budget alone
        (None, 0.0, 30.0, 1.0, (1.0, True)),  # the SDK's case: the budget, not the 30 s deadline
        (5.0, 0.0, 30.0, 1.0, (1.0, True)),  # a read timeout longer than the budget
        (0.3, 0.0, 30.0, 1.0, (0.3, False)),  # a shorter read timeout ends the wait first: a timeout
        (None, 0.0, 0.5, 1.0, (0.5, False)),  # the deadline comes first: a timeout
        (None, 2.0, None, 1.0, (0.0, True)),  # past the budget: no wait
    ],
)
def test_peek_read_bound(
    read: float | None, now: float, deadline: float | None, budget_end: float, expected: tuple[float, bool]
) -> None:
    assert p.peek_read_bound(read, now, deadline, budget_end) == expected


@pytest.mark.parametrize(
    ("delay", "now", "deadline", "expected"),
    [(0.1, 0.0, None, 1.0), (3.0, 0.0, None, 3.0), (3.0, 0.0, 2.0, 2.0), (0.1, 5.0, 5.5, 0.5), (1.0, 9.0, 8.0, 0.0)],
)
def test_peek_budget(delay: float, now: float, deadline: float | None, expected: float) -> None:
    assert p.peek_budget(RetryPolicy(), delay, now, deadline) == expected


@pytest.mark.parametrize(
    ("now", "delay", "deadline", "expected"),
    [(0.0, 1.0, None, True), (0.0, 1.0, 2.0, True), (0.0, 2.0, 2.0, False), (3.0, 0.0, 2.0, False)],
)
def test_retry_fits(now: float, delay: float, deadline: float | None, expected: bool) -> None:
    assert p.retry_fits(now, delay, deadline) is expected


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/json", True),
        ("Application/JSON; charset=utf-8", True),
        ("application/problem+json", True),
        ("application/vnd.e2b+JSON ;q=1", True),
        ("text/json", False),
        ("application/jsonp", False),
        ("text/html", False),
        (None, False),
        ("", False),
        ("application/json-seq", False),
        ("  application/json  ", True),
    ],
)
def test_is_json_media_type(content_type: str | None, expected: bool) -> None:
    assert p.is_json_media_type(content_type) is expected


@pytest.mark.parametrize(
    ("status", "content_type", "length", "expected"),
    [
        (503, "application/json", None, True),
        (503, "application/json", "8192", True),
        (503, "application/json", "8193", False),
        (503, "application/json", "12, 12", True),
        (503, "application/json", "1, 99999", True),
        (503, "application/json", "x", True),
        (503, "text/plain", None, False),
        (502, "application/json", None, False),
    ],
)
def test_should_peek(status: int, content_type: str, length: str | None, expected: bool) -> None:
    assert p.should_peek(status, content_type, length, 8192) is expected


def _deflate(data: bytes, wbits: int) -> bytes:
    c = zlib.compressobj(wbits=wbits)
    return c.compress(data) + c.flush()


# mtime=0: gzip stamps the time in its header, and these bytes are in the test ids, which must be the same
# in every pytest-xdist worker (and in every run, to rerun one by its id).
@pytest.mark.parametrize(
    ("raw", "encoding", "complete", "expected"),
    [
        (b"abc", None, True, b"abc"),
        (b"abc", "identity", True, b"abc"),
        (gzip.compress(b"abc", mtime=0), "gzip", True, b"abc"),
        (gzip.compress(b"abc", mtime=0), "X-GZIP", True, b"abc"),
        (_deflate(b"abc", 15), "deflate", True, b"abc"),
        (_deflate(b"abc", -15), "deflate", True, b"abc"),
        (gzip.compress(b"abc", mtime=0)[:-4], "gzip", True, None),
        (gzip.compress(b"abc" * 50, mtime=0)[:-4], "gzip", False, b"abc" * 50),
        (b"abc", "br", True, None),
        (b"abc", "gzip, gzip", True, None),
        (b"not gzip", "gzip", True, None),
        (gzip.compress(b" " * 100_000, mtime=0), "gzip", True, None),
        (b"x" * 70_000, None, True, None),
    ],
)
def test_decode_bounded(raw: bytes, encoding: str | None, complete: bool, expected: bytes | None) -> None:
    assert p.decode_bounded(raw, encoding, 64 * 1024, complete=complete) == expected


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
    decoded = p.refusal_body(stop, raw, encoding, 64 * 1024)
    assert (decoded is not None) == refusal
    headers = {"content-type": "application/json", **({"content-encoding": encoding} if encoding else {})}
    response = httpx.Response(503, headers=headers)
    for may_retry, expected in ((False, last), (True, retrying)):
        ctx = _ctx(httpx.Request("GET", "http://x/"), [0.0])
        plan = Plan(delay=0.5, may_retry=may_retry, peek=True, started=0.0)
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


def test_rebuilt_headers_and_plain_extensions() -> None:
    items = [
        ("Content-Encoding", "gzip"),
        ("transfer-encoding", "chunked"),
        ("Content-Length", "9"),
        ("X-A", "1"),
        ("content-type", "application/json"),
    ]
    assert p.rebuilt_headers(items) == [("X-A", "1"), ("content-type", "application/json")]
    ext = {"http_version": b"HTTP/1.1", "reason_phrase": b"x", "network_stream": object(), "get_trailers": lambda: None}
    assert p.plain_extensions(ext) == {"http_version": b"HTTP/1.1", "reason_phrase": b"x"}


@pytest.mark.parametrize("kwargs", [{"retries": -1}, {"jitter": 1.5}, {"backoff_base": -1.0}, {"peek_cap": -1}])
def test_policy_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


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
