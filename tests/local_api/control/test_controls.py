"""The control surface under /_local/."""

from __future__ import annotations

from ..conftest import LiveServer


def test_settings_round_trip_and_reject_unknown_fields(live: LiveServer) -> None:
    response = live.control.patch("/_local/settings", json={"pause_seconds": 0.5})
    assert response.json() == {"pause_seconds": 0.5, "legacy_pause_204": False, "node_busy": False}
    assert live.control.patch("/_local/settings", json={"pause_secs": 1}).status_code == 422
    assert live.control.patch("/_local/settings", json={"pause_seconds": -1}).status_code == 422


def test_controls_need_no_api_key_and_public_routes_do(live: LiveServer) -> None:
    assert live.control.get("/_local/health").json() == {"ok": True}
    assert live.control.get("/v2/sandboxes").status_code == 401


def test_sandbox_flags_and_unknown_sandbox(live: LiveServer) -> None:
    with live.api() as api:
        sandbox_id = api.post("/sandboxes", json={"templateID": "base"}).json()["sandboxID"]
    record = live.flags(sandbox_id, agent_unresponsive=True)
    assert record["agent_unresponsive"] is True and record["state"] == "running"
    assert live.control.patch("/_local/sandboxes/nope", json={}).status_code == 404


def test_faults_are_listed_validated_and_cleared(live: LiveServer) -> None:
    assert live.control.post("/_local/faults", json={"kind": "busy", "operation": "x"}).status_code == 422
    assert live.control.post("/_local/faults", json={"kind": "melt"}).status_code == 422
    live.fault("busy", count=3)
    assert [f["remaining"] for f in live.control.get("/_local/faults").json()] == [3]
    live.control.delete("/_local/faults")
    assert live.control.get("/_local/faults").json() == []


def test_reset_clears_everything(live: LiveServer) -> None:
    with live.api() as api:
        api.post("/sandboxes", json={"templateID": "base"})
    live.settings(node_busy=True)
    live.fault("busy")
    live.control.post("/_local/reset")
    assert live.control.get("/_local/sandboxes").json() == []
    assert live.control.get("/_local/settings").json()["node_busy"] is False
    assert live.control.get("/_local/faults").json() == []
    assert live.stats()["received"] == {}


def test_records_show_what_the_public_api_has_no_field_for(live: LiveServer) -> None:
    with live.api() as api:
        body = {
            "templateID": "base",
            "envVars": {"A": "1"},
            "secure": True,
            "autoPause": True,
            "autoPauseMemory": False,
        }
        sandbox_id = api.post("/sandboxes", json=body).json()["sandboxID"]
        api.post(f"/sandboxes/{sandbox_id}/snapshots", json={"name": "snap"})
    record = live.record(sandbox_id)
    assert (record["templateID"], record["boot"], record["forked_from"], record["forks"]) == (
        "local-base",
        "template",
        None,
        0,
    )
    assert (record["env_vars"], record["secure"], record["auto_pause_memory"]) == ({"A": "1"}, True, False)
    (snapshot,) = live.control.get("/_local/snapshots").json()
    assert snapshot["snapshotID"] == "local/snap:default" and snapshot["builds"][0]["sandboxID"] == sandbox_id


def test_reset_forgets_snapshots_and_idempotency_keys(live: LiveServer) -> None:
    with live.api() as api:
        first = api.post("/sandboxes", json={"templateID": "base"}, headers={"Idempotency-Key": "k"}).json()
        api.post(f"/sandboxes/{first['sandboxID']}/snapshots", json={"name": "snap"})
        live.control.post("/_local/reset")
        assert live.control.get("/_local/snapshots").json() == []
        again = api.post("/sandboxes", json={"templateID": "base"}, headers={"Idempotency-Key": "k"}).json()
        assert again["sandboxID"] != first["sandboxID"]
