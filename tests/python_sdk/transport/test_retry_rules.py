"""Table tests for the retry rules in ``_retry_rules``."""

from __future__ import annotations

import pytest
from e2b._transport import _retry_rules
from e2b._transport._retry_rules import RetryPolicy


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
    assert _retry_rules.parse_retry_after(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("true", True), ("TRUE ", True), ("false", False), ("False", False), ("yes", None), ("", None)],
)
def test_parse_should_retry(value: str | None, expected: bool | None) -> None:
    assert _retry_rules.parse_should_retry(value) is expected


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
    assert _retry_rules.is_retryable(status, should_retry) is expected


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
    assert _retry_rules.backoff_delay(RetryPolicy(), attempt, draw) == pytest.approx(expected, rel=1e-5)


def test_retry_after_replaces_backoff() -> None:
    assert _retry_rules.retry_delay(RetryPolicy(), 3, 0.25, 0.0) == 0.25
    assert _retry_rules.retry_delay(RetryPolicy(), 0, None, 0.0) == 0.5


@pytest.mark.parametrize("kwargs", [{"retries": -1}, {"jitter": 1.5}, {"backoff_base": -1.0}, {"peek_cap": -1}])
def test_policy_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_a_retry_after_above_the_maximum_is_clamped_to_it() -> None:
    policy = RetryPolicy()
    # Parsed as it is (a finite float), so that the plan sees it is over the maximum and returns.
    assert _retry_rules.parse_retry_after("1e308") == 1e308
    assert _retry_rules.retry_delay(policy, 0, 1e308, 0.0) == policy.max_retry_after
    assert _retry_rules.retry_delay(policy, 0, 61.0, 0.0) == 60.0
    assert _retry_rules.retry_delay(policy, 0, 59.5, 0.0) == 59.5


@pytest.mark.parametrize("name", ["backoff_base", "backoff_cap", "max_retry_after", "min_peek_budget", "close_timeout"])
@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e308, -1.0])
def test_every_wait_of_the_policy_is_one_a_clock_can_take(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=name.split("_")[0]):  # "backoff must be >= 0" for a negative one
        RetryPolicy(**{name: value})  # type: ignore[arg-type]
