"""`e2b_cli.params`: times, states and metadata pairs read from the command line, or a usage error."""

from __future__ import annotations

import datetime

import click
import pytest
from e2b_cli.params import STATES, Timestamp, metadata_pairs, non_empty, state_list
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_budget import examples

UTC = datetime.UTC
OPTION = click.Option(["--x"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-01-02T03:04:05Z", datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2025-01-02t03:04:05z", datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),  # RFC 3339 allows lower case
        ("2025-01-02 03:04:05Z", datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),  # as the tables print it
        ("2025-01-02T03:04:05.250+00:00", datetime.datetime(2025, 1, 2, 3, 4, 5, 250000, tzinfo=UTC)),
        (
            "2025-01-02T03:04:05+01:00",
            datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
        ),
        ("2025-01-02T03:04:05", datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),  # no offset: UTC
        ("2025-01-02", datetime.datetime(2025, 1, 2, tzinfo=UTC)),  # a date: its midnight, UTC
        (" 2025-01-02T03:04Z ", datetime.datetime(2025, 1, 2, 3, 4, tzinfo=UTC)),
    ],
)
def test_timestamps_read_as_aware_datetimes(text: str, expected: datetime.datetime) -> None:
    parsed = Timestamp().convert(text, OPTION, None)
    assert parsed == expected
    assert parsed.utcoffset() == expected.utcoffset()


@pytest.mark.parametrize("text", ["", "yesterday", "1735787045", "2025-13-01", "2025-01-02T25:00:00Z", "now"])
def test_a_bad_timestamp_is_a_usage_error(text: str) -> None:
    with pytest.raises(click.BadParameter) as raised:
        Timestamp().convert(text, OPTION, None)
    assert "ISO 8601" in raised.value.format_message()
    assert raised.value.exit_code == 2


def test_a_datetime_passes_through_made_aware() -> None:
    naive = datetime.datetime(2025, 1, 2)
    assert Timestamp().convert(naive, OPTION, None) == naive.replace(tzinfo=UTC)


@settings(max_examples=examples(100))
@given(st.datetimes(timezones=st.sampled_from([UTC, datetime.timezone(datetime.timedelta(hours=-7))])))
def test_any_isoformat_reads_back(value: datetime.datetime) -> None:
    assert Timestamp().convert(value.isoformat(), OPTION, None) == value


@pytest.mark.parametrize(
    ("given_values", "expected"),
    [
        ((), []),
        (("running",), ["running"]),
        (("running", "paused"), ["running", "paused"]),
        (("running,paused",), ["running", "paused"]),
        (("paused, running", "paused"), ["paused", "running"]),  # each once, in order
    ],
)
def test_states_repeat_or_come_as_a_comma_list(given_values: tuple[str, ...], expected: list[str]) -> None:
    assert state_list(click.Context(click.Command("x")), OPTION, given_values) == expected
    assert set(expected) <= set(STATES)


@pytest.mark.parametrize("given_values", [("gone",), ("running,",), ("Running",), ("running,killed",)])
def test_an_unknown_state_is_a_usage_error(given_values: tuple[str, ...]) -> None:
    with pytest.raises(click.BadParameter) as raised:
        state_list(click.Context(click.Command("x")), OPTION, given_values)
    assert "'running', 'paused'" in raised.value.format_message()


def test_metadata_pairs_split_at_the_first_equals_sign() -> None:
    ctx = click.Context(click.Command("x"))
    assert metadata_pairs(ctx, OPTION, ()) == {}
    assert metadata_pairs(ctx, OPTION, ("team=qa", "url=a=b", "empty=", "team=qa")) == {
        "team": "qa",
        "url": "a=b",
        "empty": "",
    }


@pytest.mark.parametrize("given_values", [("team",), ("=qa",), ("team=qa", "team=dev")])
def test_a_bad_metadata_pair_is_a_usage_error(given_values: tuple[str, ...]) -> None:
    with pytest.raises(click.BadParameter):
        metadata_pairs(click.Context(click.Command("x")), OPTION, given_values)


def test_an_empty_filter_is_a_usage_error() -> None:
    ctx = click.Context(click.Command("x"))
    assert non_empty(ctx, OPTION, None) is None
    assert non_empty(ctx, OPTION, "base") == "base"
    for blank in ("", "  "):
        with pytest.raises(click.BadParameter):
            non_empty(ctx, OPTION, blank)


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_timestamp_outside_utc_s_years_is_a_usage_error(text: str) -> None:
    # Read as given, it is a datetime; in UTC (what the API is sent) it is before year 1 or after 9999.
    with pytest.raises(click.BadParameter) as raised:
        Timestamp().convert(text, OPTION, None)
    assert "out of range" in raised.value.format_message()
    assert raised.value.exit_code == 2
