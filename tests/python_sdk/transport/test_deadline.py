"""Table tests for the deadline arithmetic in ``_deadline``."""

from __future__ import annotations

import threading

import pytest
from e2b._transport import _deadline


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
    assert _deadline.overall_timeout(extensions) == expected


def test_operation_timeout_puts_the_total_where_pyqwest_sums() -> None:
    timeout = {"connect": 2.0, "read": 0.3, "write": 2.0, "pool": 2.0}
    converted = _deadline.operation_timeout({"timeout": timeout})
    assert converted == {"connect": 2.0, "read": 2.0, "write": 0.0, "pool": 2.0}
    assert _deadline.operation_timeout({"timeout": {"read": None, "write": 1.0}}) == {"read": None, "write": 0.0}
    assert _deadline.operation_timeout({}) is None


def test_clamp_timeout_cuts_each_phase_to_the_time_left() -> None:
    timeout = {"connect": 2.0, "read": 0.3, "write": 2.0, "pool": None}
    assert _deadline.clamp_timeout(timeout, 1.0) == {"connect": 1.0, "read": 0.3, "write": 1.0, "pool": None}
    assert _deadline.clamp_timeout(timeout, -1.0) == {"connect": 0.001, "read": 0.001, "write": 0.001, "pool": None}
    assert _deadline.clamp_timeout("bogus", 1.0) is None


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
    assert _deadline.read_bound(read, now, deadline) == expected


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
    assert _deadline.peek_read_bound(read, now, deadline, budget_end) == expected


@pytest.mark.parametrize(
    ("now", "delay", "deadline", "expected"),
    [(0.0, 1.0, None, True), (0.0, 1.0, 2.0, True), (0.0, 2.0, 2.0, False), (3.0, 0.0, 2.0, False)],
)
def test_retry_fits(now: float, delay: float, deadline: float | None, expected: bool) -> None:
    assert _deadline.retry_fits(now, delay, deadline) is expected


def test_no_bound_is_longer_than_a_lock_can_wait() -> None:
    """A bound over `threading.TIMEOUT_MAX` raises OverflowError in `Future.result()` (Retry-After: 1e308)."""
    assert _deadline.LONGEST_WAIT == threading.TIMEOUT_MAX
    assert _deadline.read_bound(1e308, 0.0, None) == _deadline.LONGEST_WAIT
    assert _deadline.read_bound(None, 0.0, 1e308) == _deadline.LONGEST_WAIT
    assert _deadline.peek_read_bound(None, 0.0, None, 1e308) == (_deadline.LONGEST_WAIT, True)
    assert _deadline.peek_read_bound(1e308, 0.0, 1e308, 1e308)[0] == _deadline.LONGEST_WAIT
    lock = threading.Lock()
    assert lock.acquire(timeout=_deadline.LONGEST_WAIT)  # free: answers at once, the bound accepted
    with pytest.raises(OverflowError):
        threading.Lock().acquire(timeout=1e308)  # what the unclamped bound met


def test_a_timeout_of_infinity_reaches_no_clock_as_such() -> None:
    """pyqwest panics on a duration it cannot hold: `httpx.Timeout(float("inf"))` on `default_transport`."""
    endless = {"timeout": {"connect": float("inf"), "read": 1e308, "write": 1e308, "pool": float("inf")}}
    longest = _deadline.LONGEST_WAIT
    assert _deadline.overall_timeout(endless) == longest
    assert _deadline.operation_timeout(endless) == {"connect": longest, "read": longest, "write": 0.0, "pool": longest}
    assert _deadline.clamp_timeout(endless["timeout"], float("inf")) == dict.fromkeys(endless["timeout"], longest)
