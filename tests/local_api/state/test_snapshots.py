"""Snapshots: their names, builds and lookups; taken, listed, started from and deleted over a real socket."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from e2b_local_api.http.errors import ApiError
from e2b_local_api.state.snapshots import Reference, SnapshotCatalog, SnapshotRecord, parse_reference, snapshot_name

from ..conftest import LiveServer

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "reference"),
    [
        ("snap", Reference(None, "snap", None)),
        ("snap:default", Reference(None, "snap", "default")),
        ("local/snap", Reference("local", "snap", None)),
        ("local/snap:default", Reference("local", "snap", "default")),
        ("team/snap:v1", Reference("team", "snap", "v1")),
    ],
)
def test_references_split_namespace_name_and_tag(text: str, reference: Reference) -> None:
    assert parse_reference(text) == reference


@pytest.mark.parametrize("text", ["snap", "local/snap", "snap:default", "local/snap:default", "a_b-1"])
def test_acceptable_names(text: str) -> None:
    assert snapshot_name(text) == text.removeprefix("local/").removesuffix(":default")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "expected 1 to 128"),
        ("Snap", "expected 1 to 128"),
        ("-snap", "expected 1 to 128"),
        ("a" * 129, "expected 1 to 128"),
        ("a/b/c", "namespace"),
        ("team/snap", "namespace"),
        ("snap:v1", "the only tag"),
        ("base", "built-in"),
        ("local-base", "built-in"),
    ],
)
def test_refused_names_are_400s_naming_the_field(text: str, why: str) -> None:
    with pytest.raises(ApiError) as refused:
        snapshot_name(text)
    assert refused.value.status == 400 and refused.value.message.startswith("name: ") and why in refused.value.message


def _take(catalog: SnapshotCatalog, name: str | None, sandbox_id: str = "i1", memory: bool = True) -> SnapshotRecord:
    return catalog.take(name, sandbox_id=sandbox_id, memory=memory, now=NOW, sizes=(2, 512, 1024), env_vars={})


def test_a_name_taken_again_gets_a_new_build_of_the_same_snapshot() -> None:
    catalog = SnapshotCatalog()
    first = _take(catalog, "snap", "i1")
    again = _take(catalog, "snap", "i2", memory=False)
    assert again is first and [b.sandbox_id for b in first.builds] == ["i1", "i2"]
    assert first.latest.memory is False and first.builds[0].build_id != first.builds[1].build_id
    assert (first.snapshot_id, first.names) == ("local/snap:default", ["local/snap:default"])
    unnamed = _take(catalog, None)
    assert unnamed is not first and unnamed.snapshot_id == f"{unnamed.template_id}:default" and unnamed.names == []
    assert catalog.newest_first() == [unnamed, first]


@pytest.mark.parametrize("text", ["snap", "snap:default", "local/snap", "local/snap:default"])
def test_a_named_snapshot_is_found_by_any_form_of_its_name_or_its_id(text: str) -> None:
    catalog = SnapshotCatalog()
    snapshot = _take(catalog, "snap")
    assert catalog.find(text) is snapshot
    assert catalog.find(snapshot.template_id) is snapshot
    assert catalog.find(f"{snapshot.template_id}:default") is snapshot
    for other in ("team/snap", "snap:v1", "snapx", "local/" + snapshot.template_id):
        assert catalog.find(other) is None, other


def test_a_name_may_not_be_another_snapshots_id() -> None:
    catalog = SnapshotCatalog()
    unnamed = _take(catalog, None)
    with pytest.raises(ApiError, match="another snapshot's id"):
        _take(catalog, unnamed.template_id)


# --- over HTTP -------------------------------------------------------------------------------------------------------


def _sandbox(api: httpx.Client, **fields: object) -> str:
    response = api.post("/sandboxes", json={"templateID": "base", **fields})
    assert response.status_code == 201, response.text
    sandbox_id: str = response.json()["sandboxID"]
    return sandbox_id


def test_snapshots_are_taken_listed_started_from_and_deleted(live: LiveServer) -> None:
    with live.api() as api:
        source = _sandbox(api, envVars={"FROM": "source"})
        named = api.post(f"/sandboxes/{source}/snapshots", json={"name": "snap"})
        assert named.status_code == 201
        assert named.json() == {"snapshotID": "local/snap:default", "names": ["local/snap:default"]}
        unnamed = api.post(f"/sandboxes/{source}/snapshots", json={"memory": False}).json()
        assert unnamed["snapshotID"].endswith(":default") and unnamed["names"] == []
        listed = api.get("/snapshots").json()
        assert [s["snapshotID"] for s in listed] == [unnamed["snapshotID"], "local/snap:default"]

        # A sandbox started from each: the snapshot is its template, its memory decides how it boots.
        started = {}
        for template, boot in (("local/snap:default", "memory"), ("snap", "memory"), (unnamed["snapshotID"], "cold")):
            created = api.post("/sandboxes", json={"templateID": template, "envVars": {"MINE": "1"}})
            assert created.status_code == 201, (template, created.text)
            started[template] = created.json()
            record = live.record(created.json()["sandboxID"])
            assert record["boot"] == boot
            assert record["env_vars"] == {"FROM": "source", "MINE": "1"}
        assert started["snap"]["alias"] == "snap" and started["snap"]["templateID"].startswith("snap")
        assert started[unnamed["snapshotID"]]["templateID"] == unnamed["snapshotID"].removesuffix(":default")
        assert "alias" not in started[unnamed["snapshotID"]]

        # Deleted, by its id as the SDK sends it (path-encoded), then unknown.
        assert api.delete("/templates/local%2Fsnap%3Adefault").status_code == 204
        gone = api.delete("/templates/local%2Fsnap%3Adefault")
        assert gone.status_code == 404 and gone.json()["error_code"] == "template_not_found"
        refused = api.post("/sandboxes", json={"templateID": "local/snap:default"})
        assert refused.status_code == 404 and refused.json()["error_code"] == "template_not_found"
        assert [s["snapshotID"] for s in api.get("/snapshots").json()] == [unnamed["snapshotID"]]


def test_the_same_name_again_is_a_new_build_not_a_new_snapshot(live: LiveServer) -> None:
    with live.api() as api:
        first, second = _sandbox(api), _sandbox(api)
        for sandbox_id in (first, second):
            answer = api.post(f"/sandboxes/{sandbox_id}/snapshots", json={"name": "snap"})
            assert answer.json()["snapshotID"] == "local/snap:default"
        (snapshot,) = live.control.get("/_local/snapshots").json()
        assert [b["sandboxID"] for b in snapshot["builds"]] == [first, second]
        # Both sandboxes find it by sandboxID: it holds a build of each.
        for sandbox_id in (first, second):
            assert len(api.get("/snapshots", params={"sandboxID": sandbox_id}).json()) == 1


def test_list_filters_and_pages(live: LiveServer) -> None:
    with live.api() as api:
        a, b = _sandbox(api), _sandbox(api)
        ids = [api.post(f"/sandboxes/{a}/snapshots", json={"name": f"s{n}"}).json()["snapshotID"] for n in range(3)]
        api.post(f"/sandboxes/{b}/snapshots", json={"name": "other"})
        assert [s["snapshotID"] for s in api.get("/snapshots", params={"sandboxID": a}).json()] == ids[::-1]
        assert api.get("/snapshots", params={"sandboxID": "nope"}).json() == []
        for name in ("s1", "local/s1", "s1:default", "local/s1:default"):
            assert [s["snapshotID"] for s in api.get("/snapshots", params={"name": name}).json()] == [ids[1]], name
        first = api.get("/snapshots", params={"sandboxID": a, "limit": 2})
        rest = api.get("/snapshots", params={"sandboxID": a, "limit": 2, "nextToken": first.headers["X-Next-Token"]})
        assert [s["snapshotID"] for s in first.json() + rest.json()] == ids[::-1]
        assert "X-Next-Token" not in rest.headers
        for bad in ({"limit": 0}, {"limit": 101}, {"limit": "x"}, {"nextToken": "bogus"}):
            response = api.get("/snapshots", params=bad)
            assert response.status_code == 400 and response.json()["error_code"] == "invalid_request", bad
            assert next(iter(bad)) in response.json()["message"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"name": "Bad Name"}, "name: expected"),
        ({"name": "team/snap"}, "name: snapshots live in the 'local' namespace"),
        ({"name": "base"}, "name: 'base' is a built-in template's name"),
        ({"memory": "yes"}, "memory: "),
        ({"memory": None}, "memory"),
        ({"name": 5}, "name"),
    ],
)
def test_bad_snapshot_requests_change_nothing(live: LiveServer, body: dict[str, object], named: str) -> None:
    with live.api() as api:
        source = _sandbox(api)
        response = api.post(f"/sandboxes/{source}/snapshots", json=body)
        assert response.status_code == 400 and response.json()["error_code"] == "invalid_request"
        assert named in response.json()["message"]
        assert api.get("/snapshots").json() == []


def test_snapshots_of_unknown_sandboxes_and_deleting_unknown_or_built_in_templates(live: LiveServer) -> None:
    with live.api() as api:
        missing = api.post("/sandboxes/nope/snapshots", json={})
        assert missing.status_code == 404 and missing.json()["error_code"] == "sandbox_not_found"
        for template in ("nope", "base", "local-base"):
            response = api.delete(f"/templates/{template}")
            assert response.status_code == 404 and response.json()["error_code"] == "template_not_found", template
        assert api.post("/sandboxes", json={"templateID": "base"}).status_code == 201  # the built-in one stays


def test_a_snapshot_outlives_its_sandbox(live: LiveServer) -> None:
    with live.api() as api:
        source = _sandbox(api)
        api.post(f"/sandboxes/{source}/pause")
        assert api.post(f"/sandboxes/{source}/snapshots", json={"name": "kept"}).status_code == 201  # paused: fine
        assert api.delete(f"/sandboxes/{source}").status_code == 204
        assert api.post("/sandboxes", json={"templateID": "kept"}).status_code == 201
