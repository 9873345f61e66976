"""The control surface under /_local/."""

from __future__ import annotations

from .conftest import LiveServer


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
        sandbox_id = api.post("/sandboxes", json={"templateID": "b"}).json()["sandboxID"]
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
        api.post("/sandboxes", json={"templateID": "b"})
    live.settings(node_busy=True)
    live.fault("busy")
    live.control.post("/_local/reset")
    assert live.control.get("/_local/sandboxes").json() == []
    assert live.control.get("/_local/settings").json()["node_busy"] is False
    assert live.control.get("/_local/faults").json() == []
    assert live.stats()["received"] == {}
