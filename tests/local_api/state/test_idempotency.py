"""`Idempotency-Key` on create: replays, refusals, the header's bounds, one table per team."""

from __future__ import annotations

import httpx
import pytest
from e2b_local_api import AuthConfig, create_app
from e2b_local_api.http.errors import ApiError
from e2b_local_api.state.idempotency import IdempotencyKeys, fingerprint, key_from, team_of

from ..conftest import LiveServer

pytestmark = pytest.mark.anyio


def test_the_same_json_is_the_same_body_whatever_its_spacing_or_key_order() -> None:
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 1, "b": None})
    assert team_of("k1") != team_of("k2") and "k1" not in team_of("k1")


def test_a_key_replays_its_result_and_refuses_another_body() -> None:
    keys: IdempotencyKeys[str] = IdempotencyKeys()
    assert keys.replay("team", "k", "body-1") is None
    keys.remember("team", "k", "body-1", "sandbox-1")
    assert keys.replay("team", "k", "body-1") == "sandbox-1"
    assert keys.replay("other team", "k", "body-2") is None
    with pytest.raises(ApiError) as refused:
        keys.replay("team", "k", "body-2")
    assert (refused.value.status, refused.value.error_code) == (409, "idempotency_key_reused")
    assert "Idempotency-Key" in refused.value.message


@pytest.mark.parametrize(("value", "key"), [(None, None), ("", None), ("k", "k"), ("x" * 255, "x" * 255)])
def test_the_header_is_at_most_255_characters_and_an_empty_one_is_none(value: str | None, key: str | None) -> None:
    assert key_from({} if value is None else {"Idempotency-Key": value}) == key
    with pytest.raises(ApiError, match="Idempotency-Key: expected at most 255 characters, got 256"):
        key_from({"Idempotency-Key": "x" * 256})


BODY = {"templateID": "base", "metadata": {"job": "1"}, "timeout": 60}


@pytest.mark.parametrize("route", ["/sandboxes", "/v2/sandboxes"])
def test_a_retried_create_answers_the_first_sandbox_again(live: LiveServer, route: str) -> None:
    with live.api() as api:
        first = api.post(route, json=BODY, headers={"Idempotency-Key": "job-1"})
        # The same JSON, sent differently: keys reordered, other spacing.
        again = api.post(
            route,
            content=b'{ "timeout": 60, "metadata": {"job": "1"}, "templateID": "base" }',
            headers={"Idempotency-Key": "job-1", "Content-Type": "application/json"},
        )
        assert (first.status_code, again.status_code) == (201, 201)
        assert again.json() == first.json()
        assert [s["sandboxID"] for s in api.get("/v2/sandboxes").json()] == [first.json()["sandboxID"]]
        # Without a key, or with another, a create is a new sandbox.
        assert api.post(route, json=BODY).json()["sandboxID"] != first.json()["sandboxID"]
        assert api.post(route, json=BODY, headers={"Idempotency-Key": "job-2"}).json() != first.json()
        assert len(api.get("/v2/sandboxes").json()) == 3


def test_the_same_key_with_another_body_is_refused_and_changes_nothing(live: LiveServer) -> None:
    with live.api() as api:
        first = api.post("/sandboxes", json=BODY, headers={"Idempotency-Key": "job-1"}).json()
        before = live.control.get("/_local/sandboxes").json()
        for body in ({**BODY, "timeout": 61}, {"templateID": "nope"}, {**BODY, "extra": True}):
            refused = api.post("/v2/sandboxes", json=body, headers={"Idempotency-Key": "job-1"})
            assert refused.status_code == 409, body
            error = refused.json()
            assert error["error_code"] == "idempotency_key_reused" and "Idempotency-Key" in error["message"]
        assert live.control.get("/_local/sandboxes").json() == before
        # The first body still replays.
        assert api.post("/sandboxes", json=BODY, headers={"Idempotency-Key": "job-1"}).json() == first


def test_a_refused_create_does_not_use_up_its_key(live: LiveServer) -> None:
    with live.api() as api:
        missing = api.post("/sandboxes", json={"templateID": "nope"}, headers={"Idempotency-Key": "k"})
        assert missing.status_code == 404 and missing.json()["error_code"] == "template_not_found"
        assert api.post("/sandboxes", json=BODY, headers={"Idempotency-Key": "k"}).status_code == 201


def test_a_bad_header_is_a_400_and_creates_nothing(live: LiveServer) -> None:
    with live.api() as api:
        response = api.post("/sandboxes", json=BODY, headers={"Idempotency-Key": "x" * 256})
        assert response.status_code == 400 and response.json()["error_code"] == "invalid_request"
        assert response.json()["message"].startswith("Idempotency-Key: ")
        assert api.get("/v2/sandboxes").json() == []


def test_a_replay_answers_the_sandbox_even_after_it_was_killed(live: LiveServer) -> None:
    with live.api() as api:
        first = api.post("/sandboxes", json=BODY, headers={"Idempotency-Key": "k"}).json()
        api.delete(f"/sandboxes/{first['sandboxID']}")
        assert api.post("/sandboxes", json=BODY, headers={"Idempotency-Key": "k"}).json() == first
        assert api.get("/v2/sandboxes").json() == []


async def test_keys_are_per_team() -> None:
    # Every API key is accepted here; each is its own team's.
    transport = httpx.ASGITransport(app=create_app(AuthConfig(accept_any=True)))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        headers = {"Idempotency-Key": "shared"}
        one = await client.post("/sandboxes", json=BODY, headers={**headers, "X-API-Key": "team-one"})
        two = await client.post("/sandboxes", json={"templateID": "base"}, headers={**headers, "X-API-Key": "team-two"})
        assert (one.status_code, two.status_code) == (201, 201)
        assert one.json()["sandboxID"] != two.json()["sandboxID"]
