"""Bump's check of this repository's own code against the regenerated client (codegen/commands/handwritten.py).

The whole path, a rename that hand-written code imports through `nox -s bump`, is the replay's
(test_bump_replay.py); here the parts it does not reach: a module that does not parse, an interpreter
without mypy, unchanged generated files, an import that fails where mypy sees nothing, and what a
problem's words say about the generated name it used.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.api_changes.report import ApiChange, ApiChangeReport
from codegen.commands import handwritten
from codegen.commands.handwritten import SECTION_TITLE, handwritten_check
from codegen.messages import Messages
from tests.codegen.conftest import generated_files
from toolkit.errors import ToolError
from toolkit.paths import Project
from toolkit.records import Records


def quiet() -> tuple[Messages, list[str]]:
    lines: list[str] = []
    return Messages(err=lines.append, out=lines.append), lines


def test_a_tree_left_broken_is_still_broken_when_the_generated_files_are_unchanged(packages_only: Path) -> None:
    """Issue 40, 15: a bump after one that left hand-written code broken says so again, the old lines not new."""
    logic = packages_only / "packages/python-sdk/e2b/_sandbox_logic.py"
    logic.write_text(logic.read_text() + "\nfrom e2b.api.client.models import NoSuchModel\n")
    line = len(logic.read_text().splitlines())
    messages, lines = quiet()
    with handwritten_check(Project(packages_only), generated_files(packages_only), messages) as pending:
        verdict = pending.verdict(ApiChangeReport(()), [])
    assert verdict.broken
    entries = [b for b in verdict.breakages if b.path == "packages/python-sdk/e2b/_sandbox_logic.py"]
    assert [(b.line, b.new) for b in entries] == [(line, False)]
    assert "0 place(s) marked **new** break with this bump; 1 were broken before it and still are." in verdict.section
    assert f"- `packages/python-sdk/e2b/_sandbox_logic.py:{line}`: " in verdict.section
    assert "**new**)" not in verdict.section
    assert any("typecheck  the generated files are unchanged: the tree as it is" in line for line in lines)


@pytest.mark.usefixtures("warm_cache")  # its check runs mypy on a changed client
def test_a_new_problem_is_marked_new_beside_an_old_one(packages_only: Path) -> None:
    logic = packages_only / "packages/python-sdk/e2b/_sandbox_logic.py"
    logic.write_text(logic.read_text() + "\nfrom e2b.api.client.models import NoSuchModel\n")
    old_line = len(logic.read_text().splitlines())
    generated = generated_files(packages_only)
    init = "packages/python-sdk/e2b/api/client/models/__init__.py"
    generated[init] = generated[init].replace(b"OrderDirection", b"SortDirection")
    with handwritten_check(Project(packages_only), generated, quiet()[0]) as pending:
        verdict = pending.verdict(ApiChangeReport(()), [])
    marks = {(b.path, b.line): b.new for b in verdict.breakages}
    assert marks[("packages/python-sdk/e2b/_sandbox_logic.py", old_line)] is False
    assert any(new for new in marks.values()), verdict.section
    assert "(**new**): " in verdict.section and verdict.section.index("(**new**)") < verdict.section.index(
        f"_sandbox_logic.py:{old_line}`: "
    )


def test_a_module_that_does_not_parse_is_named_with_its_line_never_a_traceback(packages_only: Path) -> None:
    broken = packages_only / "packages/cli/e2b_cli/output.py"
    text = broken.read_text()
    broken.write_text(text + "\ndef half_written(:\n")
    line = len(text.splitlines()) + 2
    generated = generated_files(packages_only)
    model = "packages/python-sdk/e2b/api/client/models/new_sandbox.py"
    generated[model] += b"\n# regenerated\n"
    messages, lines = quiet()
    with handwritten_check(Project(packages_only), generated, messages) as pending:
        verdict = pending.verdict(ApiChangeReport(()), [])
    # It did not parse before either: said all the same, since it stops mypy before anything else is checked.
    assert verdict.broken
    (entry,) = [b for b in verdict.breakages if b.path == "packages/cli/e2b_cli/output.py"]
    assert (entry.line, entry.said_by, entry.used) == (line, "does not parse", None)
    assert verdict.section.startswith(SECTION_TITLE + "\n")
    assert f"- `packages/cli/e2b_cli/output.py:{line}`: does not parse: `" in verdict.section
    assert "Traceback" not in verdict.section + "\n".join(lines)


def test_without_mypy_bump_cannot_run_and_says_how_to_get_it(
    packages_only: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mypy" else real_find_spec(name, *a)
    )
    generated = generated_files(packages_only)
    generated["packages/python-sdk/e2b/api/client/models/new_sandbox.py"] += b"\n"
    with pytest.raises(ToolError) as caught, handwritten_check(Project(packages_only), generated, quiet()[0]):
        pass
    (problem,) = caught.value.problems
    assert "with mypy, which" in problem.message and problem.remedy is not None
    assert "requirements/codegen.txt" in problem.remedy


def test_an_import_that_fails_is_placed_at_the_innermost_hand_written_line(tmp_path: Path) -> None:
    """What only running shows (a name looked up at import time): the deepest frame in hand-written code."""
    root = tmp_path / "copy"
    logic = root / "packages/python-sdk/e2b/_sandbox_logic.py"
    model = root / "packages/python-sdk/e2b/api/client/models/__init__.py"
    failures = [
        {
            "package": "e2b",
            "type": "ImportError",
            "message": "cannot import name 'SandboxState' from 'e2b.api.client.models'",
            "frames": [[str(root / "packages/python-sdk/e2b/__init__.py"), 52], [str(logic), 33], [str(model), 7]],
            "missing": None,
        },
        {
            "package": "e2b_local_api",
            "type": "ModuleNotFoundError",
            "message": "No module named 'fastapi'",
            "frames": [[str(root / "packages/local-api/e2b_local_api/app.py"), 3]],
            "missing": "fastapi",
        },
    ]
    messages, lines = quiet()
    found = handwritten._import_findings("noise\n" + json.dumps(failures), root, messages)
    assert found == [
        handwritten.Finding(
            "packages/python-sdk/e2b/_sandbox_logic.py",
            33,
            "ImportError: cannot import name 'SandboxState' from 'e2b.api.client.models'",
            "import",
        )
    ]
    # A dependency this interpreter lacks (nox -s bump installs no web framework) is not the bump's doing.
    assert lines == ["codegen: typecheck: e2b_local_api not imported here (fastapi is not installed); mypy checks it"]


def test_the_import_driver_reports_what_failed_as_json(tmp_path: Path) -> None:
    """The driver itself, in a real interpreter: one record per package that did not import."""
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "__init__.py").write_text("")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "__init__.py").write_text("x = 1\nfrom good import missing\n")
    bootstrap = f"import sys; sys.path[:0] = [{str(tmp_path)!r}]\n"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", bootstrap + handwritten._DRIVER, "good", "bad"],
        capture_output=True, text=True, check=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    (failure,) = json.loads(done.stdout.splitlines()[-1])
    assert (failure["package"], failure["type"]) == ("bad", "ImportError")
    assert failure["frames"][-1] == [str(tmp_path / "bad" / "__init__.py"), 2]


RENAME = ApiChange("major", "model renamed", "getSandbox 200 response .state", "SandboxState -> SandboxLifecycle")


@pytest.mark.parametrize(
    ("message", "used", "became"),
    [
        (
            'Module "e2b.api.client.models" has no attribute "SandboxState"  [attr-defined]',
            "e2b.api.client.models.SandboxState",
            "`SandboxLifecycle` (model renamed at `getSandbox 200 response .state`; griffe: class removed)",
        ),
        (
            'Cannot find implementation or library stub for module named "e2b.api.client.models.sandbox_state"',
            "e2b.api.client.models.sandbox_state",
            "`sandbox_lifecycle` (model renamed at `getSandbox 200 response .state`; griffe: module removed)",
        ),
        (
            '"NewSandbox" has no attribute "auto_pause"  [attr-defined]',
            "NewSandbox.auto_pause",
            "gone (griffe: attribute removed)",
        ),
        ('Unexpected keyword argument "timeout" for "SetTimeout"  [call-arg]', "SetTimeout.timeout", None),
        ("Incompatible return value type (got int, expected str)  [return-value]", None, None),
    ],
)
def test_what_a_problem_used_and_what_it_became(message: str, used: str | None, became: str | None) -> None:
    breaks = [
        "e2b.api.client.models.SandboxState: class removed",
        "e2b.api.client.models.sandbox_state: module removed",
        "e2b.api.client.models.NewSandbox.auto_pause: attribute removed",
    ]
    finding = handwritten.Finding("packages/python-sdk/e2b/_sandbox_logic.py", 33, message, "attr-defined")
    breakage = handwritten._breakage(finding, ApiChangeReport((RENAME,)), breaks, new=True)
    assert (breakage.used, breakage.became) == (used, became)


def test_the_plan_of_the_copy_is_what_the_copy_holds(packages_only: Path, tmp_path: Path) -> None:
    """The findings are remembered by the plan's digest, so that a remembered check copies nothing."""
    generated = generated_files(packages_only)
    generated["packages/python-sdk/e2b/api/client/models/sandbox_note.py"] = b"class SandboxNote: ...\n"
    del generated["packages/python-sdk/e2b/api/client/models/new_sandbox.py"]
    copy = tmp_path / "copy"
    handwritten._copy_packages(packages_only, copy, generated)
    assert handwritten._planned(packages_only, generated) == handwritten._planned(copy, None)
    assert handwritten._planned(packages_only, generated) != handwritten._planned(packages_only, None)


def test_remembered_findings_are_the_verdict_and_nothing_is_copied(
    packages_only: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generated = generated_files(packages_only)
    generated["packages/python-sdk/e2b/api/client/models/new_sandbox.py"] += b"\n# regenerated\n"
    project = Project(packages_only)
    digest = handwritten._digest(handwritten._planned(packages_only, generated), project)
    Records(project, "typecheck-findings", {}).remember(digest.encode(), [])
    monkeypatch.setattr(handwritten, "_copy_packages", lambda *_: pytest.fail("copied a remembered tree"))
    monkeypatch.setattr(handwritten, "_Process", lambda *_, **__: pytest.fail("ran a remembered check"))
    messages, _ = quiet()
    with handwritten_check(project, generated, messages) as pending:
        verdict = pending.verdict(ApiChangeReport(()), [])
    assert not verdict.broken and verdict.section == ""


def test_another_installed_distribution_is_another_digest(
    packages_only: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, files = Project(packages_only), handwritten._planned(packages_only, None)
    site = tmp_path / "site"
    (site / "httpx-0.28.1.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    before = handwritten._digest(files, project)
    (site / "httpx-0.28.1.dist-info").rename(site / "httpx-0.29.0.dist-info")
    assert handwritten._digest(files, project) != before


@pytest.mark.parametrize(
    "entries",
    [
        {"path": "a.py"},
        [{"path": 1, "line": 2, "message": "m", "code": "c"}],
        [{"path": "a.py", "line": "2", "message": "m", "code": "c"}],
        [{"path": "a.py", "line": 2, "message": None, "code": "c"}],
        [{"path": "a.py", "line": 2, "message": "m", "code": "c", "extra": 1}],
        ["a.py"],
    ],
)
def test_a_remembered_entry_that_is_not_findings_is_not_taken(entries: object) -> None:
    assert handwritten._findings_from(entries) is None
    assert handwritten._findings_from([{"path": "a.py", "line": 2, "message": "m", "code": "c"}])


@pytest.mark.parametrize("target", ["/etc/passwd", "/etc"])
def test_a_link_in_a_hand_written_package_is_refused_before_anything_is_read(
    packages_only: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    (packages_only / "packages/cli/e2b_cli/outside").symlink_to(target)
    generated = generated_files(packages_only)
    generated["packages/python-sdk/e2b/api/client/models/new_sandbox.py"] += b"\n# regenerated\n"
    monkeypatch.setattr(handwritten, "_copy_packages", lambda *_: pytest.fail("copied a tree with a link"))
    messages, _ = quiet()
    with pytest.raises(ToolError) as caught, handwritten_check(Project(packages_only), generated, messages):
        pass
    [problem] = caught.value.problems
    assert problem.message.startswith("packages/cli/e2b_cli/outside is a symlink; bump's check")
