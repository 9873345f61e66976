"""release.published: a wheel holds its import packages and .dist-info, no .pth, only its own commands.

Real builds of a copied project whose `packages/cli/pyproject.toml` force-includes a `.pth`
or publishes a `pip`, refused by `release` and `release-tag` (exit 2, nothing written); the
other cases on small wheels written here.
"""

from __future__ import annotations

import io
import tarfile
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from python_api.model import import_packages
from release.errors import ReleaseError
from release.packages import load_packages
from release.published import PUBLISHES, check_published, unpublishable
from release.wheels import BUILD_LOCK, build_all
from tests.codegen.conftest import commit_all, unchanged
from tests.release.conftest import CLI, Result, add_fragment
from tests.release.test_tag import git, published  # noqa: F401  (a fixture: the project with its origin/main)

ROOT = Path(__file__).resolve().parents[2]
WHEEL_TARGET = '[tool.hatch.build.targets.wheel]\npackages = ["e2b_cli"]\n'
PTH = '\n[tool.hatch.build.targets.wheel.force-include]\n"NOTICE.txt" = "zz_notice.pth"\n'
CLI_SCRIPT = 'e2b = "e2b_cli.launcher:run"\n'


def test_publishes_is_what_the_packages_are_today() -> None:
    """The table is the tree's import packages and [project.scripts] commands, package by package."""
    tree = {}
    for package in load_packages(ROOT):
        project = tomllib.loads((ROOT / package.pyproject).read_text(encoding="utf-8"))["project"]
        imports = frozenset(import_packages(ROOT / package.path))
        tree[package.name] = (imports, frozenset(project.get("scripts", {})))
    assert {name: (p.imports, p.scripts) for name, p in PUBLISHES.items()} == tree


def edit_cli(root: Path, old: str, new: str) -> None:
    pyproject = root / CLI / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {pyproject}"
    pyproject.write_text(text.replace(old, new, 1), encoding="utf-8")


def plant_pth(root: Path) -> None:
    """The finding: two lines of force-include ship NOTICE.txt as a .pth at the wheel's root."""
    (root / CLI / "NOTICE.txt").write_text("import os; os.system('id > /tmp/owned')\n", encoding="utf-8")
    edit_cli(root, WHEEL_TARGET, WHEEL_TARGET + PTH)


def plant_pip(root: Path) -> None:
    edit_cli(root, CLI_SCRIPT, CLI_SCRIPT + 'pip = "e2b_cli.launcher:run"\ngit = "e2b_cli.launcher:run"\n')


# --- real builds, through the release's own steps -----------------------------------------------


def test_build_all_refuses_a_force_included_pth_and_a_pip(project: Path, tmp_path: Path) -> None:
    plant_pth(project)
    plant_pip(project)
    cli = [p for p in load_packages(project) if p.name == "e2b-cli"]
    with pytest.raises(ReleaseError) as caught:
        build_all(project, cli, tmp_path / "dist", lambda _: None, build_lock=project / BUILD_LOCK)
    assert caught.value.exit_code == 2
    [problem] = caught.value.problems
    wheel = f"e2b_cli-{cli[0].version}-py3-none-any.whl"
    assert problem.message == (
        f"e2b-cli would publish what the package is not: {wheel}: zz_notice.pth: a .pth file runs in every "
        "Python process where it is installed (and 2 more, below)"
    )
    assert set(problem.detail) == {
        f"{wheel}: e2b_cli-{cli[0].version}.dist-info/entry_points.txt: the command {command!r} is not one this "
        "package publishes (e2b)"
        for command in ("pip", "git")
    }


def test_release_refuses_a_force_included_pth_and_writes_nothing(project: Path, run: Callable[..., Result]) -> None:
    """Refused before the smoke test, which would have run the .pth in its venv."""
    plant_pth(project)
    add_fragment(project, CLI, "+notice.misc.md", "Ship the notice.\n")
    commit_all(project, "a notice")
    with unchanged(project):
        result = run(project, "release", "--date", "2026-12-01")
    assert result.code == 2, result.out + result.err
    assert "error: e2b-cli would publish what the package is not: e2b_cli-" in result.err
    assert "zz_notice.pth: a .pth file runs in every Python process" in result.err
    assert "nothing was written" in result.err and "smoke test" not in result.err


def test_release_tag_refuses_a_console_script_named_pip_and_publishes_nothing(
    published: Path,  # noqa: F811  (the fixture, imported above)
    run: Callable[..., Result],
    tmp_path: Path,
) -> None:
    """A commit of main (pushed to origin), tagged: the check runs on what release.yml would upload."""
    plant_pip(published)
    commit_all(published, "more commands")
    git(published, "push", "--quiet", "origin", "HEAD:main")
    git(published, "fetch", "--quiet", "origin")
    tag = f"e2b-cli-v{next(p.version for p in load_packages(published) if p.name == 'e2b-cli')}"
    git(published, "tag", tag)
    out = tmp_path / "dist"
    result = run(published, "release-tag", tag, "--out", str(out))
    assert result.code == 2, result.out + result.err
    assert "the command 'pip' is not one this package publishes (e2b)" in result.err
    assert "the command 'git' is not one this package publishes (e2b)" in result.err
    assert not out.exists()


# --- each case on a small wheel -------------------------------------------------------------------


def wheel_of(folder: Path, members: dict[str, str], name: str = "e2b_cli-3.0.0") -> tuple[Path, Path]:
    wheel, sdist = folder / f"{name}-py3-none-any.whl", folder / f"{name}.tar.gz"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("e2b_cli/__init__.py", "")
        archive.writestr(f"{name}.dist-info/METADATA", "")
        for member, text in members.items():
            archive.writestr(member, text)
    with tarfile.open(sdist, "w:gz") as archive:
        archive.addfile(tarfile.TarInfo(f"{name}/pyproject.toml"), io.BytesIO())
    return wheel, sdist


SCRIPTS = "e2b_cli-3.0.0.dist-info/entry_points.txt"


@pytest.mark.parametrize(
    ("member", "text", "why"),
    [
        ("e2b_cli/notice.pth", "", "e2b_cli/notice.pth: a .pth file runs in every Python process"),
        ("e2b_cli-3.0.0.dist-info/x.PTH", "", "x.PTH: a .pth file runs in every Python process"),
        ("pip/__init__.py", "", "pip/__init__.py: outside its import packages (e2b_cli) and e2b_cli-3.0.0.dist-info"),
        ("sitecustomize.py", "", "sitecustomize.py: outside its import packages"),
        ("e2b_cli/../sitecustomize.py", "", "e2b_cli/../sitecustomize.py: a path with an empty, `.` or `..` part"),
        ("e2b_cli\\..\\x.py", "", "a backslash"),
        ("e2b_cli-3.0.0.data/scripts/pip", "", "e2b_cli-3.0.0.data/scripts/pip: outside its import packages"),
        ("e2b-9.9.9.dist-info/METADATA", "", "e2b-9.9.9.dist-info/METADATA: outside its import packages"),
        (SCRIPTS, "[gui_scripts]\ne2b = e2b_cli.launcher:run\n", "[gui_scripts]: only [console_scripts] is published"),
        (SCRIPTS, "[pytest11]\nx = e2b_cli.launcher\n", "[pytest11]: only [console_scripts] is published"),
        (SCRIPTS, "[console_scripts]\nsudo = e2b_cli.launcher:run\n", "the command 'sudo' is not one this package"),
        (SCRIPTS, "[console_scripts]\nE2B = e2b_cli.launcher:run\n", "the command 'E2B' is not one this package"),
        (SCRIPTS, "[console_scripts]\ne2b = os:system\n", "the command 'e2b' runs 'os', outside its import packages"),
        (SCRIPTS, "console_scripts]\n", "line 1 is not `name = module:function` or `[group]`"),
        # configparser reads an indented line as part of the one above, importlib.metadata as an entry.
        (SCRIPTS, "[console_scripts]\ne2b = e2b_cli.launcher:run\n  pip = e2b_cli.launcher:run\n", "line 3 is not"),
        # str.splitlines ends a line at \x1c, a parser that splits on \n does not.
        (SCRIPTS, "[console_scripts]\ne2b = e2b_cli.launcher:run\x1cpip = os:system\n", "line 2 is not"),
        (SCRIPTS, "[DEFAULT]\npip = e2b_cli.launcher:run\n", "[DEFAULT]: only [console_scripts] is published"),
    ],
)
def test_what_a_wheel_may_not_hold(tmp_path: Path, member: str, text: str, why: str) -> None:
    wheel, sdist = wheel_of(tmp_path, {member: text})
    [found] = unpublishable("e2b-cli", wheel, sdist)
    assert found.startswith("e2b_cli-3.0.0-py3-none-any.whl: ") and why in found


def test_a_pth_in_the_sdist_is_refused(tmp_path: Path) -> None:
    wheel, sdist = wheel_of(tmp_path, {})
    with tarfile.open(sdist, "w:gz") as archive:
        archive.addfile(tarfile.TarInfo("e2b_cli-3.0.0/e2b_cli/notice.pth"), io.BytesIO())
    assert unpublishable("e2b-cli", wheel, sdist) == [
        "e2b_cli-3.0.0.tar.gz: e2b_cli-3.0.0/e2b_cli/notice.pth: a .pth file, which a wheel built from it would install"
    ]


def test_the_package_s_own_files_and_command_pass(tmp_path: Path) -> None:
    wheel, sdist = wheel_of(
        tmp_path,
        {
            "e2b_cli/sub/module.py": "",
            "e2b_cli-3.0.0.dist-info/licenses/NOTICE.txt": "",
            SCRIPTS: "[console_scripts]\ne2b = e2b_cli.launcher:run\n",
        },
    )
    assert unpublishable("e2b-cli", wheel, sdist) == []
    check_published("e2b-cli", wheel, sdist)


def test_a_hostile_file_name_is_shown_escaped(tmp_path: Path) -> None:
    """A member's name is data: it reaches the terminal with its controls escaped, on one line."""
    wheel, sdist = wheel_of(tmp_path, {"e2b_cli/\x1b[2J\nok.pth": ""})
    with pytest.raises(ReleaseError) as caught:
        check_published("e2b-cli", wheel, sdist)
    rendered = caught.value.problems[0].render()
    assert "e2b_cli/\\x1b[2J\\nok.pth: a .pth file" in rendered and "\x1b" not in rendered
    assert len(rendered.splitlines()) == 2  # the problem and its remedy


def test_a_package_without_an_entry_is_refused(tmp_path: Path) -> None:
    wheel, sdist = wheel_of(tmp_path, {}, name="demo-1.0.0")
    with pytest.raises(ReleaseError, match="demo has no entry in PUBLISHES"):
        check_published("demo", wheel, sdist)
