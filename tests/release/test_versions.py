"""release.versions: the next version for a level, the pre-1.0 rule, the compatible range."""

from __future__ import annotations

import pytest

from release.errors import ReleaseError
from release.versions import Version
from toolkit.changelog import Level


@pytest.mark.parametrize(
    ("current", "level", "expected"),
    [
        ("2.0.0", "major", "3.0.0"),
        ("2.3.4", "minor", "2.4.0"),
        ("2.3.4", "patch", "2.3.5"),
        # Before 1.0 the minor is the major: breaking -> 0.(y+1).0, anything else -> 0.y.(z+1).
        ("0.1.0", "major", "0.2.0"),
        ("0.1.3", "minor", "0.1.4"),
        ("0.1.3", "patch", "0.1.4"),
    ],
)
def test_bump(current: str, level: Level, expected: str) -> None:
    assert str(Version.parse(current).bump(level)) == expected


@pytest.mark.parametrize(
    ("version", "series", "upper"), [("2.4.1", (2,), "3"), ("0.2.5", (0, 2), "0.3"), ("1.0.0", (1,), "2")]
)
def test_series_and_upper_bound(version: str, series: tuple[int, ...], upper: str) -> None:
    parsed = Version.parse(version)
    assert parsed.series == series and parsed.next_series == upper


@pytest.mark.parametrize("text", ["2.0", "v2.0.0", "2.0.0rc1", "02.0.0", "2.0.0.1", "", "2.0.0 "])
def test_only_plain_versions(text: str) -> None:
    with pytest.raises(ReleaseError, match=r"is not MAJOR\.MINOR\.PATCH"):
        Version.parse(text)


def test_order() -> None:
    assert Version.parse("2.10.0") > Version.parse("2.9.9") > Version.parse("0.99.0")
