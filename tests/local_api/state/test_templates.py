"""The built-in templates: looked up by id or alias, listed with the snapshots, never deleted."""

from __future__ import annotations

from e2b_local_api.state.templates import BUILTIN_TEMPLATES, builtin_template

from ..conftest import LiveServer


def test_each_built_in_template_is_found_by_its_id_and_its_alias() -> None:
    base = builtin_template("base")
    assert base is not None and base.template_id == "local-base" and builtin_template("local-base") is base
    assert builtin_template("nope") is None
    assert len({t.template_id for t in BUILTIN_TEMPLATES} | {t.alias for t in BUILTIN_TEMPLATES}) == 6


def test_the_list_has_the_built_in_templates_then_the_snapshots(live: LiveServer) -> None:
    with live.api() as api:
        listed = api.get("/templates").json()
        assert [t["aliases"] for t in listed] == [["base"], ["code-interpreter-v1"], ["desktop"]]
        assert all(t["public"] for t in listed)
        assert set(listed[0]) == {"templateID", "buildID", "public", "aliases", "cpuCount", "memoryMB", "createdAt"}
        sid = api.post("/sandboxes", json={"templateID": "desktop"}).json()["sandboxID"]
        api.post(f"/sandboxes/{sid}/snapshots", json={"name": "mine"})
        snapshot = api.get("/templates").json()[-1]
        assert (snapshot["aliases"], snapshot["public"], snapshot["cpuCount"], snapshot["memoryMB"]) == (
            ["mine"],
            False,
            4,
            4096,
        )
        assert api.get("/templates").json()[:3] == listed  # the built-in ones do not change
