"""`release-tag <package>-v<version>`: rebuild one package from its tag for publishing.

The tag names the package and the version; both must match the tree, so a
tag pushed on the wrong commit publishes nothing.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from codegen.errors import EXIT_OK
from release.errors import Problem, ReleaseError
from release.packages import Package, load_packages
from release.versions import Version
from release.wheels import build_all, smoke_test

Say = Callable[[str], None]
_TAG = re.compile(r"(?P<name>[a-z0-9][a-z0-9-]*)-v(?P<version>[0-9][0-9.]*)")


def package_for_tag(packages: list[Package], tag: str) -> Package:
    match = _TAG.fullmatch(tag)
    names = ", ".join(p.tag_prefix + "X.Y.Z" for p in packages)
    if not match:
        raise ReleaseError(Problem(f"tag {tag!r} is not <package>-v<version>", remedy=f"tag as one of {names}"))
    package = next((p for p in packages if p.name == match["name"]), None)
    if package is None:
        raise ReleaseError(Problem(f"tag {tag!r} names no package in packages/", remedy=f"tag as one of {names}"))
    version = Version.parse(match["version"], where=f"tag {tag}")
    if version != package.version:
        raise ReleaseError(
            Problem(
                f"tag {tag!r} says {version}, but {package.pyproject} at this commit says {package.version}",
                remedy=f"tag the commit that `nox -s release` moved to {version} (or delete the tag)",
            )
        )
    return package


def run_release_tag(root: Path, tag: str, out: Path, *, say: Say, show: Say) -> int:
    packages = load_packages(root)
    package = package_for_tag(packages, tag)
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(Problem(f"{out} is not empty", remedy="pass an empty or new folder as --out"))
    with tempfile.TemporaryDirectory(prefix="e2b-release-tag-") as tmp:
        scratch = Path(tmp)
        built = build_all(root, packages, scratch / "dist", say)
        smoke_test(root, built, [package.name], scratch, say)
        out.mkdir(parents=True, exist_ok=True)
        for path in (built[package.name].wheel, built[package.name].sdist):
            shutil.copy2(path, out / path.name)
    show(f"release-tag: {package.name} {package.version} built, checked and smoke-tested in {out}")
    return EXIT_OK
