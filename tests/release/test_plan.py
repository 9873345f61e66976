"""release.plan: versions from fragment types, bounds of dependents moved on a new major, cascades."""

from __future__ import annotations

import pytest

from release.errors import ReleaseError
from release.fragments import Fragment
from release.packages import Package
from release.plan import make_plan
from release.versions import Version
from toolkit.changelog import TYPE_BY_NAME


def package(name: str, version: str, *requirements: str) -> Package:
    return Package(name, f"packages/{name}", Version.parse(version), (f"packages/{name}/pyproject.toml",), requirements)


def fragment(name: str, kind: str, id: str = "1") -> Fragment:
    return Fragment(f"packages/{name}/changelog.d/{id}.{kind}.md", id, TYPE_BY_NAME[kind], "text\n")


SDK = package("e2b", "2.0.0", "httpx>=0.27")
CLI = package("e2b-cli", "2.0.0", "e2b>=2.0.0,<3", "click>=8.1")
LOCAL = package("e2b-local-api", "0.1.0", "fastapi>=0.110")
PACKAGES = [CLI, LOCAL, SDK]


def versions(plan_releases: object) -> dict[str, str]:
    return {r.package.name: str(r.new_version) for r in plan_releases}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (["fix"], "2.0.1"),
        (["doc", "misc"], "2.0.1"),
        (["fix", "feature"], "2.1.0"),
        (["feature", "breaking", "fix"], "3.0.0"),
    ],
)
def test_highest_fragment_type_decides(kinds: list[str], expected: str) -> None:
    frags = [fragment("e2b", k, str(n)) for n, k in enumerate(kinds)]
    plan = make_plan(PACKAGES, {"e2b": frags}, [])
    assert versions(plan.releases)["e2b"] == expected


def test_a_minor_release_leaves_dependents_alone() -> None:
    plan = make_plan(PACKAGES, {"e2b": [fragment("e2b", "feature")]}, [])
    assert versions(plan.releases) == {"e2b": "2.1.0"}
    assert "e2b: 2.0.0 -> 2.1.0 (minor; tag e2b-v2.1.0)" in plan.render()


def test_a_major_moves_the_dependents_bound_with_its_own_fragment() -> None:
    plan = make_plan(PACKAGES, {"e2b": [fragment("e2b", "breaking")]}, ["e2b"])
    assert versions(plan.releases) == {"e2b-cli": "3.0.0", "e2b": "3.0.0"}
    cli = plan.releases[0]
    assert [(m.bound.text, m.new_text) for m in cli.moves] == [("e2b>=2.0.0,<3", "e2b>=3.0.0,<4")]
    assert cli.generated == {
        "packages/e2b-cli/changelog.d/+e2b-3.0.0.breaking.md": (
            "Requires `e2b>=3.0.0,<4`: e2b 3.0.0 is a new major release; see its changelog.\n"
        )
    }
    assert plan.render().splitlines() == [
        "Release plan:",
        "- e2b-cli: 2.0.0 -> 3.0.0 (major; tag e2b-cli-v3.0.0)",
        "    why: e2b 2.0.0 -> 3.0.0 is outside 'e2b>=2.0.0,<3'",
        "    bound moved: 'e2b>=2.0.0,<3' -> 'e2b>=3.0.0,<4'",
        "    fragment added: packages/e2b-cli/changelog.d/+e2b-3.0.0.breaking.md",
        "- e2b: 2.0.0 -> 3.0.0 (major; tag e2b-v3.0.0)",
        "    why: fragments: 1 breaking",
    ]


def test_pre_1_0_rule_and_a_cascade() -> None:
    core = package("core", "0.3.2")
    mid = package("mid", "0.1.0", "core>=0.3.0,<0.4")
    top = package("top", "1.4.0", "mid>=0.1.0,<0.2")
    plan = make_plan([core, mid, top], {"core": [fragment("core", "breaking")]}, [])
    assert versions(plan.releases) == {"core": "0.4.0", "mid": "0.2.0", "top": "2.0.0"}
    assert "- core: 0.3.2 -> 0.4.0 (major, the pre-1.0 rule; tag core-v0.4.0)" in plan.render()
    feature = make_plan([core, mid, top], {"core": [fragment("core", "feature")]}, [])
    assert versions(feature.releases) == {"core": "0.3.3"}


def test_only_what_was_asked_and_what_must_follow() -> None:
    pending = {"e2b": [fragment("e2b", "fix")], "e2b-local-api": [fragment("e2b-local-api", "feature")]}
    plan = make_plan(PACKAGES, pending, ["e2b-local-api"])
    assert versions(plan.releases) == {"e2b-local-api": "0.1.1"}
    assert plan.pending_elsewhere == ("e2b",)
    assert "Not released (not asked for), fragments kept: e2b" in plan.render()


def test_a_dependent_with_its_own_fragments_keeps_them() -> None:
    pending = {"e2b": [fragment("e2b", "breaking")], "e2b-cli": [fragment("e2b-cli", "fix", "7")]}
    plan = make_plan(PACKAGES, pending, ["e2b"])
    cli = plan.releases[0]
    assert [f.id for f in cli.fragments] == ["7"] and cli.reasons[0] == "fragments: 1 fix"


def test_nothing_pending_is_an_empty_plan() -> None:
    assert make_plan(PACKAGES, {}, []).releases == ()


def test_unknown_package_is_refused() -> None:
    with pytest.raises(ReleaseError, match="unknown package\\(s\\): e2b-sdk") as caught:
        make_plan(PACKAGES, {}, ["e2b-sdk"])
    assert "e2b, e2b-cli, e2b-local-api" in (caught.value.problems[0].remedy or "")


def test_an_unmovable_bound_is_refused_before_any_plan() -> None:
    cli = package("e2b-cli", "2.0.0", "e2b~=2.0")
    with pytest.raises(ReleaseError, match="cannot be moved by a release"):
        make_plan([cli, SDK], {"e2b": [fragment("e2b", "fix")]}, [])
