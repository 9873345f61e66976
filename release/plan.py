"""The release plan: which packages move to which version, and why.

A package with pending fragments moves by its highest fragment type.  When
that takes it to a new major (a new minor before 1.0), every in-repo package
that requires it has its bound moved and gets a `breaking` fragment of its
own: installing it now upgrades the dependency across a major in its users'
environments.  That can cascade; the plan repeats until nothing moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from release.errors import Problem, ReleaseError
from release.fragments import Fragment
from release.packages import Bound, Package, in_repo_bounds
from release.versions import Version
from toolkit.changelog import LEVEL_RANK, TYPE_BY_NAME, FragmentType, Level


@dataclass(frozen=True)
class BoundMove:
    dependency: str
    bound: Bound
    new_text: str


@dataclass
class Release:
    package: Package
    fragments: list[Fragment]
    generated: dict[str, str] = field(default_factory=dict)  # fragment path -> text, written by the release
    moves: list[BoundMove] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def level(self) -> Level:
        types = [f.type for f in self.fragments] + [_generated_type(p) for p in self.generated]
        return max((t.level for t in types), key=LEVEL_RANK.__getitem__)

    @property
    def new_version(self) -> Version:
        return self.package.version.bump(self.level)

    @property
    def tag(self) -> str:
        return f"{self.package.tag_prefix}{self.new_version}"


def _generated_type(path: str) -> FragmentType:
    return TYPE_BY_NAME[path.rsplit(".", 2)[-2]]


@dataclass(frozen=True)
class ReleasePlan:
    releases: tuple[Release, ...]
    pending_elsewhere: tuple[str, ...]  # packages with fragments that were not asked for

    def render(self) -> str:
        lines = ["Release plan:"]
        for r in self.releases:
            rule = ", the pre-1.0 rule" if r.package.version.major == 0 else ""
            lines.append(f"- {r.package.name}: {r.package.version} -> {r.new_version} ({r.level}{rule}; tag {r.tag})")
            lines += [f"    why: {why}" for why in r.reasons]
            lines += [f"    bound moved: {m.bound.text!r} -> {m.new_text!r}" for m in r.moves]
            lines += [f"    fragment added: {path}" for path in r.generated]
        if self.pending_elsewhere:
            lines.append(f"Not released (not asked for), fragments kept: {', '.join(self.pending_elsewhere)}")
        return "\n".join(lines)


def make_plan(packages: list[Package], fragments: dict[str, list[Fragment]], asked: list[str]) -> ReleasePlan:
    by_name = {p.name: p for p in packages}
    unknown = [n for n in asked if n not in by_name]
    if unknown:
        raise ReleaseError(
            Problem(
                f"unknown package(s): {', '.join(unknown)}",
                remedy=f"name distributions from packages/*/pyproject.toml: {', '.join(sorted(by_name))}",
            )
        )
    # Every in-repo bound is checked up front, so a bad one fails before any plan is shown.
    bounds = {p.name: in_repo_bounds(p, set(by_name)) for p in packages}
    chosen = asked or [p.name for p in packages]
    releases: dict[str, Release] = {}
    for name in chosen:
        pending = fragments.get(name, [])
        if pending:
            releases[name] = Release(by_name[name], pending, reasons=[_fragment_reason(pending)])
    moved = True
    while moved:  # a moved bound can take a dependent to a new major, and so on
        moved = False
        for dep_name, release in list(releases.items()):
            new = release.new_version
            if new.series == release.package.version.series:
                continue
            for dependent in packages:
                bound = bounds[dependent.name].get(dep_name)
                if bound is None or bound.admits(new):
                    continue
                if dependent.name not in releases:
                    pending = fragments.get(dependent.name, [])
                    releases[dependent.name] = Release(
                        dependent, pending, reasons=[_fragment_reason(pending)] * bool(pending)
                    )
                target = releases[dependent.name]
                if any(m.dependency == dep_name for m in target.moves):
                    continue
                new_text = bound.moved_to(new)
                target.moves.append(BoundMove(dep_name, bound, new_text))
                target.generated[f"{dependent.fragment_dir}/+{dep_name}-{new}.breaking.md"] = (
                    f"Requires `{new_text}`: {dep_name} {new} is a new major release; see its changelog.\n"
                )
                target.reasons.append(f"{dep_name} {release.package.version} -> {new} is outside {bound.text!r}")
                moved = True
    ordered = tuple(releases[p.name] for p in packages if p.name in releases)
    elsewhere = tuple(p.name for p in packages if p.name not in releases and fragments.get(p.name))
    return ReleasePlan(ordered, elsewhere)


def _fragment_reason(pending: list[Fragment]) -> str:
    counts = {t: sum(1 for f in pending if f.type.name == t) for t in TYPE_BY_NAME}
    return "fragments: " + ", ".join(f"{n} {t}" for t, n in counts.items() if n)
