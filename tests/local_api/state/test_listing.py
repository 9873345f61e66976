"""Listing sandboxes: the query parameters, filters, order, pages and `X-Total-Running`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from e2b_local_api.http.errors import ApiError
from e2b_local_api.state.listing import list_query, parse_metadata
from e2b_local_api.wire.models import SandboxState
from starlette.datastructures import QueryParams

from ..conftest import LiveServer


def test_no_parameters_list_every_state_newest_first_100_per_page() -> None:
    query = list_query(QueryParams(""))
    assert query.states == frozenset(SandboxState) and query.asks_for_running
    assert (query.metadata, query.started_after, query.template) == ({}, None, None)
    assert (query.descending, query.next_token, query.limit) == (True, None, 100)


def test_every_parameter_as_the_released_sdk_sends_it() -> None:
    # Captured from e2b 2.63.0: metadata's keys and values quoted, joined, and the whole quoted again.
    sdk_metadata = urlencode({quote("team"): quote("a b"), quote("k"): quote("v&x")})
    raw = urlencode(
        {
            "metadata": sdk_metadata,
            "state": "running,paused",
            "order": "asc",
            "startedAfter": "2020-01-02T03:04:05+00:00",
            "template": "base",
            "limit": "2",
            "nextToken": "a1.2",
            "colour": "red",  # unknown: ignored
        }
    )
    query = list_query(QueryParams(raw))
    assert query.metadata == {"team": "a b", "k": "v&x"}
    assert query.states == {SandboxState.running, SandboxState.paused}
    assert query.started_after == datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert (query.template, query.descending, query.limit, query.next_token) == ("base", False, 2, "a1.2")


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=ten", "limit"),
        ("limit=1&limit=2", "limit: given 2 times"),
        ("order=up", "order"),
        ("state=gone", "state"),
        ("state=", "state"),
        ("startedAfter=yesterday", "startedAfter"),
        ("startedAfter=2020-01-02", "startedAfter"),  # a date alone
        ("startedAfter=2020-01-02T03:04:05", "startedAfter"),  # no offset
        ("startedAfter=2020-01-02T03:04:05 00:00", "startedAfter"),  # an unencoded + read as a space
    ],
)
def test_a_known_parameter_with_a_bad_value_is_a_400_naming_it(raw: str, named: str) -> None:
    with pytest.raises(ApiError) as refused:
        list_query(QueryParams(raw))
    assert (refused.value.status, refused.value.error_code) == (400, "invalid_request")
    assert refused.value.message.startswith(named)


def test_the_metadata_filter_decodes_each_key_and_value() -> None:
    assert parse_metadata("user=a%26b&app=prod") == {"user": "a&b", "app": "prod"}
    assert parse_metadata("user") == {"user": ""}
    assert parse_metadata("") == {}


# --- over HTTP -------------------------------------------------------------------------------------------------------


def _create(api: httpx.Client, template: str = "base", **fields: Any) -> str:
    response = api.post("/sandboxes", json={"templateID": template, **fields})
    assert response.status_code == 201, response.text
    sandbox_id: str = response.json()["sandboxID"]
    return sandbox_id


def _ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [s["sandboxID"] for s in response.json()]


def test_filters_order_and_total_running(live: LiveServer) -> None:
    with live.api() as api:
        a = _create(api, metadata={"team": "a b", "k": "v&x"})
        b = _create(api, "code-interpreter-v1", metadata={"team": "a b"})
        c = _create(api, "local-base", metadata={"team": "other"})
        api.post(f"/sandboxes/{a}/pause")

        # The query string the released SDK sends for these filters.
        sdk = (
            "metadata=team%3Da%252520b%26k%3Dv%252526x&state=running,paused"
            "&startedAfter=2020-01-02T03%3A04%3A05%2B00%3A00"
        )
        assert _ids(api.get(f"/v2/sandboxes?{sdk}")) == [a]
        assert _ids(api.get("/v2/sandboxes", params={"metadata": "team=a%20b"})) == [b, a]

        # A template by its alias or its id, a snapshot's sandboxes by the snapshot's name.
        assert _ids(api.get("/v2/sandboxes", params={"template": "base"})) == [c, a]
        assert _ids(api.get("/v2/sandboxes", params={"template": "local-base"})) == [c, a]
        assert _ids(api.get("/v2/sandboxes", params={"template": "nope"})) == []

        assert _ids(api.get("/v2/sandboxes", params={"order": "asc"})) == [a, b, c]
        assert _ids(api.get("/v2/sandboxes", params={"order": "desc"})) == [c, b, a]
        assert _ids(api.get("/v2/sandboxes", params={"startedAfter": "2999-01-01T00:00:00Z"})) == []

        # X-Total-Running counts the running matches before paging, when running ones were asked for.
        page = api.get("/v2/sandboxes", params={"limit": 1})
        assert page.headers["X-Total-Running"] == "2" and len(page.json()) == 1
        both = api.get("/v2/sandboxes", params={"state": "running,paused", "template": "base"})
        assert both.headers["X-Total-Running"] == "1"
        paused = api.get("/v2/sandboxes", params={"state": "paused"})
        assert _ids(paused) == [a] and "X-Total-Running" not in paused.headers


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pages_follow_the_token_in_either_order(live: LiveServer, order: str) -> None:
    with live.api() as api:
        ids = [_create(api) for _ in range(5)]
        expected = ids if order == "asc" else ids[::-1]
        seen: list[str] = []
        params: dict[str, Any] = {"order": order, "limit": 2}
        while True:
            response = api.get("/v2/sandboxes", params=params)
            seen += _ids(response)
            token = response.headers.get("X-Next-Token")
            if token is None:
                break
            params["nextToken"] = token
        assert seen == expected
        other = "desc" if order == "asc" else "asc"
        first = api.get("/v2/sandboxes", params={"order": order, "limit": 2}).headers["X-Next-Token"]
        refused = api.get("/v2/sandboxes", params={"order": other, "nextToken": first})
        assert refused.status_code == 400 and refused.json()["message"].startswith("nextToken")


def test_killed_sandboxes_between_pages_do_not_shift_the_next_page(live: LiveServer) -> None:
    with live.api() as api:
        ids = [_create(api) for _ in range(4)]
        first = api.get("/v2/sandboxes", params={"limit": 2})
        assert _ids(first) == [ids[3], ids[2]]
        api.delete(f"/sandboxes/{ids[2]}")
        rest = api.get("/v2/sandboxes", params={"limit": 2, "nextToken": first.headers["X-Next-Token"]})
        assert _ids(rest) == [ids[1], ids[0]]


def test_started_after_is_inclusive_and_takes_any_offset(live: LiveServer) -> None:
    with live.api() as api:
        sid = _create(api)
        started = datetime.fromisoformat(api.get(f"/sandboxes/{sid}").json()["startedAt"])
        in_paris = started.astimezone(timezone(timedelta(hours=1))).isoformat()
        assert _ids(api.get("/v2/sandboxes", params={"startedAfter": in_paris})) == [sid]
        later = (started + timedelta(microseconds=1)).isoformat()
        assert _ids(api.get("/v2/sandboxes", params={"startedAfter": later})) == []
