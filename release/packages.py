"""The distributions under packages/: name, version, in-repo requirements, where the version is written.

A package's version lives in its `pyproject.toml` and, when the package has
one, in the `__version__ = "..."` line of its import package's `__init__.py`;
both move together and must agree before a release.  Requirements on another
in-repo package must read `name>=X,<Y` so that a release can move them.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from python_api.distributions import Distribution
from release.errors import Problem, ReleaseError
from release.versions import Version
from toolkit.changelog import FRAGMENT_DIR, TYPES
from toolkit.paths import CHANGELOG, PACKAGES_DIR

_PYPROJECT_VERSION = re.compile(r'^version = "(?P<v>[^"]*)"$', re.MULTILINE)
_DUNDER_VERSION = re.compile(r'^__version__ = "(?P<v>[^"]*)"$', re.MULTILINE)


@dataclass(frozen=True)
class Bound:
    """One in-repo requirement, e.g. e2b-cli's `e2b>=2.0.0,<3`."""

    text: str  # exactly as written in pyproject.toml
    requirement: Requirement
    lower: Version
    upper: str

    def admits(self, version: Version) -> bool:
        return self.requirement.specifier.contains(str(version))

    def moved_to(self, version: Version) -> str:
        req = self.requirement
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        marker = f"; {req.marker}" if req.marker else ""
        return f"{req.name}{extras}>={version},<{version.next_series}{marker}"


@dataclass(frozen=True)
class Package(Distribution):
    """A distribution (its name and folder, what the Python API check reads) as a release moves it."""

    version: Version
    version_files: tuple[str, ...]  # pyproject.toml first, then any __init__.py with __version__
    requirements: tuple[str, ...]

    @property
    def pyproject(self) -> str:
        return f"{self.path}/pyproject.toml"

    @property
    def fragment_dir(self) -> str:
        return f"{self.path}/{FRAGMENT_DIR}"

    @property
    def changelog(self) -> str:
        return f"{self.path}/{CHANGELOG}"

    @property
    def tag_prefix(self) -> str:
        return f"{self.name}-v"


def load_packages(root: Path) -> list[Package]:
    """Every packages/*/pyproject.toml, checked; sorted by path."""
    found: list[Package] = []
    problems: list[Problem] = []
    for pyproject in sorted((root / PACKAGES_DIR).glob("*/pyproject.toml")):
        try:
            found.append(_load(root, pyproject))
        except ReleaseError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ReleaseError(*problems)
    if not found:
        raise ReleaseError(
            Problem(f"no {PACKAGES_DIR}/*/pyproject.toml under {root}", remedy="run from the repository")
        )
    return found


def _load(root: Path, pyproject: Path) -> Package:
    rel = pyproject.relative_to(root).as_posix()
    path = pyproject.parent.relative_to(root).as_posix()
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    project = data.get("project", {})
    name = canonicalize_name(str(project.get("name", "")))
    version = Version.parse(str(project.get("version", "")), where=rel)
    if len(_PYPROJECT_VERSION.findall(pyproject.read_text(encoding="utf-8"))) != 1:
        raise ReleaseError(
            Problem('needs exactly one line `version = "X.Y.Z"`', where=rel, remedy="write the version on one line")
        )
    _check_towncrier(data.get("tool", {}).get("towncrier"), rel, name)
    version_files = [rel]
    wheel = data.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
    for module in wheel.get("packages", []):
        init = pyproject.parent / module / "__init__.py"
        if not init.is_file():
            continue
        found = _DUNDER_VERSION.findall(init.read_text(encoding="utf-8"))
        init_rel = init.relative_to(root).as_posix()
        if len(found) > 1 or (found and found[0] != str(version)):
            raise ReleaseError(
                Problem(
                    f"__version__ {found} is out of step with {rel}'s {version}",
                    where=init_rel,
                    remedy=f'write one line `__version__ = "{version}"` (the release moves both)',
                )
            )
        if found:
            version_files.append(init_rel)
    return Package(name, path, version, tuple(version_files), tuple(str(r) for r in project.get("dependencies", [])))


def _check_towncrier(config: object, where: str, name: str) -> None:
    expected = [t.name for t in TYPES]
    if not isinstance(config, dict):
        raise ReleaseError(Problem("has no [tool.towncrier] section", where=where, remedy=_TOWNCRIER_REMEDY))
    types = [t.get("directory") for t in config.get("type", []) if isinstance(t, dict)]
    if config.get("directory") != FRAGMENT_DIR or config.get("filename") != CHANGELOG or types != expected:
        raise ReleaseError(
            Problem(
                f"[tool.towncrier] must use directory {FRAGMENT_DIR!r}, filename {CHANGELOG!r} "
                f"and the types {expected} in that order (found {types})",
                where=where,
                remedy=_TOWNCRIER_REMEDY,
            )
        )
    titles = [t.get("name") for t in config.get("type", []) if isinstance(t, dict)]
    if titles != [t.title for t in TYPES]:
        raise ReleaseError(
            Problem(
                f"[tool.towncrier] must title the types {[t.title for t in TYPES]} in that order (found {titles})",
                where=where,
                remedy=_TOWNCRIER_REMEDY,
            )
        )
    if canonicalize_name(str(config.get("name", ""))) != name:
        raise ReleaseError(Problem(f"[tool.towncrier] name must be {name!r}", where=where, remedy=_TOWNCRIER_REMEDY))


_TOWNCRIER_REMEDY = (
    "copy [tool.towncrier] from packages/python-sdk/pyproject.toml (the types are toolkit/changelog.py's)"
)


def in_repo_bounds(package: Package, names: set[str]) -> dict[str, Bound]:
    """The package's requirements on other in-repo packages, by dependency name."""
    bounds: dict[str, Bound] = {}
    for text in package.requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise ReleaseError(
                Problem(f"requirement {text!r} cannot be parsed: {exc}", where=package.pyproject, remedy=_BOUND_REMEDY)
            ) from None
        dep = canonicalize_name(req.name)
        if dep not in names:
            continue
        specs = {s.operator: s.version for s in req.specifier}
        if len(req.specifier) != 2 or set(specs) != {">=", "<"}:
            raise ReleaseError(
                Problem(
                    f"the bound {text!r} on the in-repo package {dep} cannot be moved by a release",
                    where=package.pyproject,
                    remedy=f"write it as `{dep}>=X.Y.Z,<N` (e.g. {dep}>=2.0.0,<3)",
                )
            )
        lower = Version.parse(specs[">="], where=package.pyproject)
        bounds[dep] = Bound(text, req, lower, specs["<"])
    return bounds


_BOUND_REMEDY = "write a PEP 508 requirement, e.g. e2b>=2.0.0,<3"


def set_version(text: str, pattern: re.Pattern[str], old: Version, new: Version, where: str) -> str:
    matches = [m for m in pattern.finditer(text) if m["v"] == str(old)]
    if len(matches) != 1:
        raise ReleaseError(Problem(f"expected one version line for {old}", where=where, remedy="write it on one line"))
    m = matches[0]
    return text[: m.start("v")] + str(new) + text[m.end("v") :]


def write_version(root: Path, rel: str, old: Version, new: Version) -> str:
    """The text of a version file with `old` replaced by `new`."""
    text = (root / rel).read_text(encoding="utf-8")
    pattern = _PYPROJECT_VERSION if rel.endswith("pyproject.toml") else _DUNDER_VERSION
    return set_version(text, pattern, old, new, rel)


def move_bound(pyproject_text: str, bound: Bound, new: str, where: str) -> str:
    quoted = f'"{bound.text}"'
    if pyproject_text.count(quoted) != 1:
        raise ReleaseError(
            Problem(
                f"cannot find the requirement {quoted} exactly once to move it",
                where=where,
                remedy="write each in-repo requirement once, in double quotes",
            )
        )
    return pyproject_text.replace(quoted, f'"{new}"')
