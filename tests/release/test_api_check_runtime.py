"""The Python API check's run-time view: breaks griffe cannot see in source, found by importing both sides.

Each test builds a small real package (`packages/demo`) in a temp git
repository, commits it on `main`, edits it on a branch and runs `api-check`
(or changelog-check) in process; the probes run in their own interpreters.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from git import Repo

import python_api.model
import release.runtime_api
from tests.codegen.conftest import ROOT, commit_all, git_repo
from tests.release.conftest import SDK, Result, add_fragment

TOWNCRIER = (ROOT / SDK / "pyproject.toml").read_text(encoding="utf-8").partition("[tool.towncrier]")[2]
PYPROJECT = f"""\
[project]
name = "demo"
version = "1.0.0"

[tool.hatch.build.targets.wheel]
packages = ["demo"]

[tool.towncrier]{TOWNCRIER.replace('name = "e2b"', 'name = "demo"', 1)}"""
INIT = '''\
"""A package shaped like e2b: eager exports, and one imported on first use (PEP 562)."""

import importlib as _importlib
import typing as _typing

from demo._config import ConnectionConfig
from demo.core import Client

if _typing.TYPE_CHECKING:
    from demo.sandbox import Sandbox

__all__ = ["Client", "ConnectionConfig", "Sandbox"]

_LAZY = {"Sandbox": "demo.sandbox"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'demo' has no attribute {name!r}")
    return getattr(_importlib.import_module(module), name)
'''
CONFIG = """\
class ConnectionConfig:
    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
"""
CORE = """\
class Client:
    def ping(self, times: int = 1) -> int:
        return times

    def close(self) -> None:
        pass
"""
SANDBOX = """\
class Sandbox:
    def kill(self) -> None:
        pass
"""
DEMO = "packages/demo"


def write(root: Path, rel: str, text: str) -> None:
    path = root / DEMO / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def edit(root: Path, rel: str, old: str, new: str) -> None:
    text = (root / DEMO / rel).read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {rel}"
    write(root, rel, text.replace(old, new, 1))


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A repository with one package, committed on main, checked out on a branch `work`."""
    root = tmp_path / "repo"
    for rel, text in {
        "pyproject.toml": PYPROJECT,
        "changelog.d/README.md": "Fragments.\n",
        "demo/__init__.py": INIT,
        "demo/_config.py": CONFIG,
        "demo/core.py": CORE,
        "demo/sandbox.py": SANDBOX,
    }.items():
        write(root, rel, text)
    Repo.init(root, initial_branch="main")
    commit_all(root, "demo 1.0.0")
    git_repo(root).git.checkout("-q", "-b", "work")
    return root


def api_check(run: Callable[..., Result], root: Path) -> Result:
    result = run(root, "api-check")
    assert "Traceback" not in result.out + result.err
    return result


def breaks(result: Result) -> list[str]:
    return [line.strip() for line in result.out.splitlines() if line.startswith("  demo")]


# --- the probes of issue 31: each hides a break from griffe ---------------------------------------


def test_a_name_the_lazy_getattr_no_longer_serves_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    """`Sandbox` stays in `__all__` and in the TYPE_CHECKING import (griffe sees it), but `import` cannot give it."""
    edit(demo, "demo/__init__.py", '_LAZY = {"Sandbox": "demo.sandbox"}', "_LAZY: dict[str, str] = {}")
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == [
        "demo.Sandbox: class removed at run time (AttributeError: module 'demo' has no attribute 'Sandbox')"
    ]


def test_a_module_level_del_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    with (demo / DEMO / "demo/__init__.py").open("a") as init:
        init.write("\ndel ConnectionConfig\n")
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == [
        "demo.ConnectionConfig: class removed at run time "
        "(AttributeError: module 'demo' has no attribute 'ConnectionConfig')"
    ]


def test_globals_pop_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    with (demo / DEMO / "demo/__init__.py").open("a") as init:
        init.write('\nglobals().pop("Client")\n')
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == [
        "demo.Client: class removed at run time (AttributeError: module 'demo' has no attribute 'Client')"
    ]


def test_a_stub_that_keeps_a_removed_method_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    edit(demo, "demo/core.py", "\n    def close(self) -> None:\n        pass\n", "")
    write(
        demo,
        "demo/core.pyi",
        "class Client:\n    def ping(self, times: int = 1) -> int: ...\n    def close(self) -> None: ...\n",
    )
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == ["demo.Client.close: function removed at run time"]


def test_a_method_under_if_false_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    edit(
        demo,
        "demo/core.py",
        "    def close(self) -> None:\n        pass\n",
        "    if False:\n\n        def close(self) -> None:\n            pass\n",
    )
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == ["demo.Client.close: function removed at run time"]


def test_a_decorator_that_changes_a_signature_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    edit(
        demo,
        "demo/core.py",
        "class Client:\n    def ping",
        "def _once(method):\n    def call(self):\n        return method(self, 1)\n\n    return call\n\n\n"
        "class Client:\n    @_once\n    def ping",
    )
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == ["demo.Client.ping(times): parameter removed at run time"]


def test_a_package_that_replaces_itself_in_sys_modules_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    with (demo / DEMO / "demo/__init__.py").open("a") as init:
        init.write("\nimport sys as _sys\n\n_sys.modules[__name__] = None\n")
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == ["demo: module removed at run time (import demo gives None, not a module)"]


# --- what the run-time view says, and does not --------------------------------------------------


def test_additions_and_private_changes_are_no_break(demo: Path, run: Callable[..., Result]) -> None:
    edit(
        demo,
        "demo/core.py",
        "    def close",
        "    def reset(self, hard: bool = False) -> None:\n        pass\n\n    def close",
    )
    edit(demo, "demo/_config.py", "self.api_key = api_key", "self.api_key = api_key\n        self._seen = 0")
    result = api_check(run, demo)
    assert result.code == 0, result.out + result.err
    assert "- added: `demo.Client.reset (function)`" in result.out
    assert "api-check: 1 changed package(s); no Python API break" in result.out


def test_a_break_griffe_sees_is_said_once(demo: Path, run: Callable[..., Result]) -> None:
    edit(demo, "demo/core.py", "def ping(self, times: int = 1)", "def ping(self, times: int = 2)")
    edit(demo, "demo/core.py", "\n    def close(self) -> None:\n        pass\n", "")
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert sorted(breaks(result)) == [
        "demo.Client.close: function removed",
        "demo.Client.ping(times): default changed from 1 to 2",
    ]


def test_a_new_all_name_that_does_not_resolve_is_a_break(demo: Path, run: Callable[..., Result]) -> None:
    """`from demo import *` would fail on it."""
    edit(demo, "demo/__init__.py", '__all__ = ["Client",', '__all__ = ["Retry", "Client",')
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == [
        "demo.Retry: does not resolve at run time (AttributeError: module 'demo' has no attribute 'Retry')"
    ]


EAGER_MODELS = """\
from .thing import Thing

__all__ = ("Thing",)
"""
# As templates/client/models_init.py.jinja renders the generated client's models package.
LAZY_MODELS = """\
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .thing import Thing

__all__ = ("Thing",)

_MODULES = {"Thing": ".thing"}

if not TYPE_CHECKING:

    def __getattr__(name):
        import importlib

        module = _MODULES.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, __name__), name)
"""


@pytest.fixture
def demo_with_models(demo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`demo.models` on main, eager, and a public tree as `e2b.api.client` is e2b's."""
    monkeypatch.setitem(python_api.model.PUBLIC_TREES, "demo", ("demo.models",))
    repo = git_repo(demo)
    repo.git.checkout("-q", "main")
    write(demo, "demo/models/__init__.py", EAGER_MODELS)
    write(demo, "demo/models/thing.py", "class Thing:\n    def to_dict(self) -> dict[str, int]:\n        return {}\n")
    commit_all(demo, "demo.models")
    repo.git.checkout("-q", "-B", "work")
    return demo


def test_a_public_tree_whose_exports_load_on_first_use_keeps_its_api(
    demo_with_models: Path, run: Callable[..., Result]
) -> None:
    write(demo_with_models, "demo/models/__init__.py", LAZY_MODELS)
    result = api_check(run, demo_with_models)
    assert result.code == 0, result.out + result.err
    assert breaks(result) == []


def test_a_lazy_export_of_a_public_tree_that_no_longer_resolves_is_a_break(
    demo_with_models: Path, run: Callable[..., Result]
) -> None:
    write(demo_with_models, "demo/models/__init__.py", LAZY_MODELS.replace('{"Thing": ".thing"}', "{}"))
    result = api_check(run, demo_with_models)
    assert result.code == 1, result.out + result.err
    assert any(line.startswith("demo.models.Thing: ") and "at run time" in line for line in breaks(result)), result.out


def test_changelog_check_runs_the_same_view(demo: Path, run: Callable[..., Result]) -> None:
    edit(demo, "demo/__init__.py", '_LAZY = {"Sandbox": "demo.sandbox"}', "_LAZY: dict[str, str] = {}")
    add_fragment(demo, DEMO, "+lazy.fix.md", "Lazier imports.\n")
    result = run(demo, "changelog-check")
    assert result.code == 1, result.out + result.err
    assert "demo.Sandbox: class removed at run time" in result.out
    assert "has no new `breaking` fragment" in result.out


def test_the_probe_imports_nothing_of_the_caller_s(demo: Path, run: Callable[..., Result]) -> None:
    """Only PATH and HOME (an empty folder; Python's own locale coercion aside), nothing of the caller's to import:
    no editable install of this checkout (`e2b`), no module beside the probe (release/'s `tree`), no user site."""
    probe = "import os, site, sys\n\n"
    probe += "assert set(os.environ) <= {'PATH', 'HOME', 'LC_CTYPE'}, os.environ\n"
    probe += "assert os.listdir(os.environ['HOME']) == [] and not site.ENABLE_USER_SITE\n"
    probe += "for name in ('e2b', 'tree', 'runtime_probe'):\n    try:\n        __import__(name)\n"
    probe += "    except ImportError:\n        pass\n    else:\n        raise AssertionError(name)\n\n\n"
    probe += "class Client:"
    edit(demo, "demo/core.py", "class Client:", probe)
    result = api_check(run, demo)
    assert result.code == 0, result.out + result.err
    assert list(demo.rglob("__pycache__")) == []  # the probe's bytecode is written outside the tree


# --- the probe is an ordinary interpreter (issue 40): a break shown only to a user's is found ----------


def test_a_break_only_where_path_is_set_is_found(demo: Path, run: Callable[..., Result]) -> None:
    with (demo / DEMO / "demo/core.py").open("a") as core:
        core.write('\nimport os\n\nif os.environ.get("PATH"):\n    del Client.close\n')
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == ["demo.Client.close: function removed at run time"]


def test_a_break_only_where_site_runs_and_home_is_set_is_found(demo: Path, run: Callable[..., Result]) -> None:
    """The interpreter's flags are a user's: site on, user site allowed, bytecode written, environment read."""
    with (demo / DEMO / "demo/core.py").open("a") as core:
        core.write(
            "\nimport os\nimport sys\n\n"
            "_probed = sys.flags.isolated or sys.flags.no_site or sys.flags.no_user_site\n"
            "_probed = _probed or sys.flags.dont_write_bytecode or sys.flags.ignore_environment\n"
            "if not _probed and 'site' in sys.modules and os.environ.get('HOME'):\n"
            "    del Client.ping\n"
        )
    result = api_check(run, demo)
    assert result.code == 1, result.out + result.err
    assert breaks(result) == ["demo.Client.ping: function removed at run time"]


def test_an_import_that_never_returns_is_stopped(
    demo: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded: the probe is killed at its deadline, and the check could not run (exit 2).

    Both sides wait forever (committed on main, kept on the branch), so no side can finish
    within the deadline, however busy the machine is.
    """
    monkeypatch.setattr(release.runtime_api, "PROBE_TIMEOUT", 1.0)
    with (demo / DEMO / "demo/core.py").open("a") as core:
        core.write("\nimport threading\n\nprint('waiting forever', flush=True)\nthreading.Event().wait()\n")
    commit_all(demo, "an import that waits")
    git_repo(demo).git.branch("-f", "main", "HEAD")
    edit(demo, "demo/sandbox.py", "pass", "return None")
    result = run(demo, "api-check")
    assert result.code == 2, result.out + result.err
    assert "error: demo: importing it from " in result.err and "did not finish within 1 s" in result.err
    assert "    waiting forever" in result.err


def test_an_import_that_exits_the_interpreter_could_not_be_checked(demo: Path, run: Callable[..., Result]) -> None:
    with (demo / DEMO / "demo/core.py").open("a") as core:
        core.write("\nimport os\n\nos._exit(0)\n")
    result = run(demo, "api-check")
    assert result.code == 2, result.out + result.err
    assert "the run-time view of " in result.err and "(the probe exited 0 without its listing)" in result.err


# --- griffe's own limits ---------------------------------------------------------------------------


def test_an_expression_too_deep_for_griffe_is_one_line_exit_2(demo: Path, run: Callable[..., Result]) -> None:
    """Never a traceback, and never exit 1 (the "missing fragment" verdict)."""
    with (demo / DEMO / "demo/core.py").open("a") as core:
        core.write("\nTOTAL = " + "+".join(["1"] * 200_000) + "\n")
    result = run(demo, "api-check")
    assert result.code == 2, result.out + result.err
    (line,) = result.err.splitlines()[1:]  # after the "compare the Python API" line
    assert line.startswith("error: cannot read the Python API of demo (demo) in ")
    assert "RecursionError" in line and "Traceback" not in result.err
