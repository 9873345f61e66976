"""Synthetic metrics: reproducible samples in range, oldest first, within their totals; the route's bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from e2b_local_api.state.metrics import INTERVAL, MIB, Resources, samples

from ..conftest import LiveServer

STARTED = datetime(2030, 1, 1, 12, 0, 0, 250_000, tzinfo=UTC)
RESOURCES = Resources("isandbox", STARTED, cpu_count=2, memory_mb=512, disk_size_mb=1024)
T0 = int(STARTED.timestamp())  # the second it started in


def test_one_sample_every_interval_from_the_start_second_to_now() -> None:
    taken = samples(RESOURCES, now=STARTED + timedelta(seconds=21), start=None, end=None)
    assert [s.timestamp for s in taken] == [T0, T0 + 5, T0 + 10, T0 + 15, T0 + 20]
    assert INTERVAL == 5
    assert samples(RESOURCES, now=STARTED, start=None, end=None)[0].timestamp == T0  # a new sandbox has one


def test_the_same_sandbox_gives_the_same_samples_and_another_other_ones() -> None:
    now = STARTED + timedelta(minutes=5)
    assert samples(RESOURCES, now=now, start=None, end=None) == samples(RESOURCES, now=now, start=None, end=None)
    other = Resources("iother", STARTED, 2, 512, 1024)
    assert samples(other, now=now, start=None, end=None) != samples(RESOURCES, now=now, start=None, end=None)


def test_the_range_includes_both_ends_and_costs_nothing_outside() -> None:
    now = STARTED + timedelta(days=30)
    assert [s.timestamp for s in samples(RESOURCES, now=now, start=T0 + 10, end=T0 + 20)] == [T0 + 10, T0 + 15, T0 + 20]
    assert [s.timestamp for s in samples(RESOURCES, now=now, start=T0 + 11, end=T0 + 14)] == []
    assert samples(RESOURCES, now=now, start=0, end=T0 - 1) == []
    assert samples(RESOURCES, now=STARTED + timedelta(seconds=9), start=T0 + 5, end=T0 + 10**6)[-1].timestamp == T0 + 5


def test_values_stay_within_their_totals() -> None:
    for sample in samples(RESOURCES, now=STARTED + timedelta(hours=2), start=None, end=None):
        assert sample.cpu_count == 2 and 0 <= sample.cpu_used_pct <= 100
        assert (sample.mem_total, sample.disk_total) == (512 * MIB, 1024 * MIB)
        assert 0 < sample.mem_used <= sample.mem_total and 0 < sample.mem_cache <= sample.mem_total
        assert 0 < sample.disk_used <= sample.disk_total
        assert sample.time == datetime.fromtimestamp(sample.timestamp, UTC)


# --- over HTTP -------------------------------------------------------------------------------------------------------


def test_every_required_field_for_a_sandbox(live: LiveServer) -> None:
    with live.api() as api:
        sid = api.post("/sandboxes", json={"templateID": "desktop"}).json()["sandboxID"]
        (sample,) = api.get(f"/sandboxes/{sid}/metrics").json()[:1]
        assert set(sample) == {
            "timestamp",
            "timestampUnix",
            "cpuCount",
            "cpuUsedPct",
            "memUsed",
            "memTotal",
            "memCache",
            "diskUsed",
            "diskTotal",
        }
        assert (sample["cpuCount"], sample["memTotal"], sample["diskTotal"]) == (4, 4096 * MIB, 8192 * MIB)
        assert datetime.fromisoformat(sample["timestamp"]).timestamp() == sample["timestampUnix"]
        everything = api.get(f"/sandboxes/{sid}/metrics", params={"start": 0, "end": 2**62}).json()
        assert everything[0] == sample
        assert api.get(f"/sandboxes/{sid}/metrics", params={"start": 0, "end": 1}).json() == []


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"start": 10, "end": 5}, "start: must not be after end"),
        ({"start": -1}, "start"),
        ({"end": "soon"}, "end"),
        ({"start": 2**63}, "start"),
    ],
)
def test_bad_ranges_are_400s(live: LiveServer, params: dict[str, Any], named: str) -> None:
    with live.api() as api:
        sid = api.post("/sandboxes", json={"templateID": "base"}).json()["sandboxID"]
        response = api.get(f"/sandboxes/{sid}/metrics", params=params)
        assert response.status_code == 400 and response.json()["error_code"] == "invalid_request"
        assert response.json()["message"].startswith(named)


def test_unknown_sandbox(live: LiveServer) -> None:
    with live.api() as api:
        response = api.get("/sandboxes/nope/metrics")
        assert response.status_code == 404 and response.json()["error_code"] == "sandbox_not_found"
