"""`check` (nox -s generated-files): every kind of drift named, with its remedy; never writes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from git import Repo

from codegen.commands.check import DIFF_LINES_PER_FILE, DIFF_LINES_TOTAL, render_drift
from codegen.tree.write import Drift
from tests.codegen.conftest import (
    OFFLINE,
    PIN,
    UNREACHABLE_URL,
    Result,
    Upstream,
    add_optional_property,
    commit_all,
    git_repo,
    git_status,
    import_generated,
    plant_bytecode,
    run_subprocess,
    signal_when_generating,
    subprocess_env,
    tree_digest,
    unchanged,
)

SHORT = PIN[:7]
CLIENT = "packages/python-sdk/e2b/api/client"
MODEL = f"{CLIENT}/models/new_sandbox.py"
GENERATED_REMEDY = "To fix: run `nox -s codegen` and commit the result."


def check(run: Callable[..., Result], project: Path, **env: str | None) -> Result:
    with unchanged(project):
        return run(project, "check", **env)


def test_clean_tree_with_the_upstream_reachable(project: Path, run: Callable[..., Result]) -> None:
    result = check(run, project)
    assert result.code == 0, result.text
    assert "codegen: clean: " in result.out and f"runtime@{SHORT}" in result.out
    assert f"(spec/openapi.yml byte for byte with runtime@{SHORT}:spec/openapi.yml, " in result.err


def test_clean_tree_with_the_upstream_unreachable(offline_project: Path, run: Callable[..., Result]) -> None:
    result = check(run, offline_project, **OFFLINE)
    assert result.code == 0, result.text
    assert "codegen: clean: " in result.out
    assert "(spec/openapi.yml byte for byte with the lock's blob (" in result.err
    assert "the upstream being unreachable" in result.err
    warnings = [line for line in result.err.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and f"{UNREACHABLE_URL} is unreachable (" in warnings[0]


def test_hand_applied_hunks_then_bump_to_the_upstream_change(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    spec = project / "spec/openapi.yml"
    spec.write_text(add_optional_property(spec.read_text()))
    model = project / MODEL
    model.write_text(model.read_text() + "# note: str | Unset = UNSET\n")
    result = check(run, project)
    assert result.code == 1, result.text
    assert "hand-edited spec spec/openapi.yml" in " ".join(result.out.split())
    assert f"changed          {MODEL}" in result.out
    assert (
        f"To fix: spec/openapi.yml differs from runtime@{SHORT}: land the change upstream first, "
        "then `nox -s bump -- <commit>`." in result.out
    )
    assert "Never edit spec/openapi.yml here" in result.out
    assert "+        note:" not in result.out  # the diff goes from the tree to the pin: it drops the hunk
    assert "-        note:" in result.out

    landed = upstream.commit_edit(add_optional_property, "NewSandbox: add note")
    bumped = run(project, "bump", landed)
    assert bumped.code == 0, bumped.text
    assert (project / "spec/runtime-ref").read_text() == landed + "\n"
    after = check(run, project)
    assert after.code == 0, after.text


def test_generated_file_edited(project: Path, run: Callable[..., Result]) -> None:
    (project / MODEL).write_text((project / MODEL).read_text().replace("class NewSandbox", "class Renamed"))
    result = check(run, project)
    assert result.code == 1
    assert f"  changed          {MODEL}" in result.out
    assert f"--- {MODEL} (tree)" in result.out and f"+++ {MODEL} (generated)" in result.out
    assert "+class NewSandbox" in result.out and "-class Renamed" in result.out
    assert GENERATED_REMEDY in result.out
    assert "hand-edited spec" not in result.out


def test_generated_file_deleted(project: Path, run: Callable[..., Result]) -> None:
    (project / MODEL).unlink()
    result = check(run, project)
    assert result.code == 1
    assert f"  missing          {MODEL}" in result.out
    assert GENERATED_REMEDY in result.out


def test_file_added_inside_a_generated_folder(project: Path, run: Callable[..., Result]) -> None:
    (project / CLIENT / "extra.py").write_text("x = 1\n")
    result = check(run, project)
    assert result.code == 1
    assert f"  unexpected       {CLIENT}/extra.py" in result.out
    assert "To fix: generated folders hold exactly what the manifest lists" in result.out
    assert GENERATED_REMEDY not in result.out


def test_committed_bytecode_in_a_generated_folder_is_drift(
    project: Path, run: Callable[..., Result], env: dict[str, str | None], tmp_path: Path
) -> None:
    """Issue 20, item 3: bytecode `git add -f`-ed under __pycache__ runs on import; the check names it."""
    assert run(project, "generate").code == 0  # records this generation: the cached check is tried too
    marker = tmp_path / "payload-ran"
    planted = plant_bytecode(project, marker)
    import_generated(project, write_bytecode=False)
    assert marker.read_text() == "ran"  # the premise: the planted file is what `import` runs
    with unchanged(project):
        full = run_subprocess(project, "check", "--no-cache", env=env)
        cached = run(project, "check")
    for result in (full, cached):
        assert result.code == 1, result.text
        assert f"  unexpected       {planted}  (fix: move it out of the generated folder, or `git rm` it)" in result.out
        assert "<binary content>" in result.out
        assert "To fix: generated folders hold exactly what the manifest lists, bytecode and dotfiles included" in (
            result.out
        )
    assert "the tree differs from the recorded generation" in cached.err


def test_bytecode_that_imports_leave_behind_is_not_drift(project: Path, run: Callable[..., Result]) -> None:
    """A developer's own __pycache__ (untracked, ignored) never makes the check fail, cached or not."""
    assert run(project, "generate").code == 0
    import_generated(project, write_bytecode=True)
    assert list((project / "packages/python-sdk/e2b/api").rglob("__pycache__/*.pyc"))  # the premise
    for args in ((), ("--no-cache",)):
        result = run(project, "check", *args)
        assert result.code == 0, result.text


@pytest.mark.parametrize("name", [".hidden", "__pycache__/notes.txt", "__pycache__/.x.pyc"])
def test_any_tracked_file_the_manifest_does_not_list_is_drift(
    project: Path, run: Callable[..., Result], name: str
) -> None:
    path = project / CLIENT / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("x = 1\n")
    git_repo(project).git.add("-f", "--", f"{CLIENT}/{name}")
    commit_all(project, "tracked")
    result = check(run, project)
    assert result.code == 1, result.text
    assert f"  unexpected       {CLIENT}/{name}" in result.out


def test_stale_file_recorded_but_no_longer_produced(project: Path, run: Callable[..., Result]) -> None:
    stale = f"{CLIENT}/models/old_thing.py"
    (project / stale).write_text("class OldThing: ...\n")
    manifest = project / "spec/generated-files.json"
    data = json.loads(manifest.read_text())
    data["files"][stale] = "0" * 64
    manifest.write_text(json.dumps(data, indent=2) + "\n")
    result = check(run, project)
    assert result.code == 1
    assert f"  stale            {stale}" in result.out
    assert "  changed          spec/generated-files.json" in result.out
    assert GENERATED_REMEDY in result.out


def test_template_changed_without_regenerating(project: Path, run: Callable[..., Result]) -> None:
    template = project / "templates/overlays/error_codes.py.jinja"
    template.write_text(template.read_text() + "\n# a new line from the template\n")
    result = check(run, project)
    assert result.code == 1, result.text
    assert "  changed          packages/python-sdk/e2b/api/error_codes.py" in result.out
    assert "+# a new line from the template" in result.out
    assert GENERATED_REMEDY in result.out


def test_contract_changed_so_the_pin_no_longer_satisfies_it(project: Path, run: Callable[..., Result]) -> None:
    contract = project / "spec/contract.yml"
    contract.write_text(
        contract.read_text() + "\n- pointer: /components/schemas/SandboxPauseRequest/properties/priority\n"
        "  exists: true\n  why: the SDK sends a priority\n"
    )
    result = check(run, project)
    assert result.code == 2, result.text
    assert "contract miss: /components/schemas/SandboxPauseRequest/properties/priority is missing" in result.err
    assert "the contract lands upstream first" in result.err


def test_diff_output_is_capped_per_file_and_in_total(project: Path, run: Callable[..., Result]) -> None:
    models = sorted((project / CLIENT / "models").glob("*.py"))[:10]
    assert len(models) == 10
    for model in models:
        model.write_text("".join(f"junk_{i} = {i}\n" for i in range(100)) + model.read_text())
    result = check(run, project)
    assert result.code == 1
    assert f"more diff line(s) of {CLIENT}/models/" in result.out
    assert f"not shown: the {DIFF_LINES_TOTAL}-line total is used up]" in result.out
    diff_lines = [line for line in result.out.splitlines() if line.startswith(("-junk_", "+", "-", " ", "@@"))]
    assert len(diff_lines) <= DIFF_LINES_TOTAL + 20  # the listing lines start with two spaces


def test_render_drift_caps_unit() -> None:
    drifts = [Drift(f"f{i}.py", "changed", "".join(f"{j}\n" for j in range(200)).encode(), b"") for i in range(10)]
    text = render_drift(drifts, "abcdef0")
    assert text.count(" cut]") == DIFF_LINES_TOTAL // DIFF_LINES_PER_FILE + 1
    assert text.count("line total is used up]") == 10 - (DIFF_LINES_TOTAL // DIFF_LINES_PER_FILE + 1)
    body = [line for line in text.splitlines() if line and line[0] in "+-@"]
    assert len(body) == DIFF_LINES_TOTAL


def test_sigint_during_check_leaves_the_tree_unchanged(project: Path, env: dict[str, str | None]) -> None:
    (project / MODEL).write_text("edited\n")
    before = tree_digest(project)
    result = signal_when_generating(project, "check", signal.SIGINT, env=env)
    assert result.code == 130, result.err
    assert "interrupted" in result.err
    assert tree_digest(project) == before
    assert git_status(project) == f" M {MODEL}"


@pytest.mark.parametrize(
    "link",
    ["packages/python-sdk/e2b/api/client/leak.py", "spec/openapi.lock.json", "spec/contract.yml", "spec/runtime-ref"],
)
def test_a_symlink_is_drift_and_its_target_never_reaches_the_output(
    project: Path, run: Callable[..., Result], tmp_path: Path, link: str
) -> None:
    secret = tmp_path / "environ"
    secret.write_text("GITHUB_TOKEN=ghs_secret\n")
    (project / link).unlink(missing_ok=True)
    (project / link).symlink_to(secret)
    result = check(run, project)
    assert result.code == 1, result.text
    assert f"  symlink          {link}" in result.out
    assert "ghs_secret" not in result.text
    assert "never reads through a symlink" in result.out


def test_a_generated_folder_that_is_a_symlink_is_drift(
    project: Path, run: Callable[..., Result], tmp_path: Path
) -> None:
    wire = project / "packages/local-api/e2b_local_api/wire"
    outside = tmp_path / "wire"
    shutil.move(wire, outside)
    wire.symlink_to(outside, target_is_directory=True)
    result = check(run, project)
    assert result.code == 1 and "  symlink          packages/local-api/e2b_local_api/wire" in result.out
    refused = run(project, "generate")
    assert refused.code == 2 and "is a symlink; codegen neither reads nor writes through one" in refused.err


def test_a_committed_submodule_in_a_generated_folder_is_drift_and_generate_refuses_it(
    project: Path, run: Callable[..., Result], env: dict[str, str | None], tmp_path: Path
) -> None:
    """A gitlink (mode 160000) checks out as an empty folder: git's index is what shows it."""
    evilsub = tmp_path / "evilsub"
    evilsub.mkdir()
    (evilsub / "payload.py").write_text("print('owned')\n")
    Repo.init(evilsub, initial_branch="main")
    commit_all(evilsub, "payload")
    evil = "packages/python-sdk/e2b/api/evil"
    subprocess.run(
        ["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(evilsub), evil],
        cwd=project, env=subprocess_env({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}),
        check=True, capture_output=True,
    )  # fmt: skip
    commit_all(project, "a submodule")
    clone = tmp_path / "clone"  # a checkout without submodules, as CI's
    Repo.clone_from(project, clone, env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    assert (clone / evil).is_dir() and not any((clone / evil).iterdir())  # the premise: an empty folder
    (clone / ".codegen.lock").touch()  # the run lock, which the project's copy already has (ignored by git)
    with unchanged(clone):
        full = run_subprocess(clone, "check", "--no-cache", env=env)
        cached = run(clone, "check")
        refused = run_subprocess(clone, "generate", env=env)
    for result in (full, cached):
        assert result.code == 1, result.text
        assert f"  unexpected       {evil}  (fix: " in result.out
        assert "codegen: clean" not in result.out
    assert "the tree differs from the recorded generation" in cached.err  # the cache was asked, and said no
    assert refused.code == 2, refused.text
    assert f"{evil}: is inside a generated folder but was not generated" in refused.err
    assert git_status(clone) == ""


@pytest.mark.parametrize("named", [".git/config", "README.md"])
def test_a_manifest_naming_a_file_outside_the_generated_folders_never_shows_it(
    project: Path, run: Callable[..., Result], env: dict[str, str | None], named: str
) -> None:
    manifest = project / "spec/generated-files.json"
    data = json.loads(manifest.read_text())
    data["files"][named] = "0" * 64
    manifest.write_text(json.dumps(data, indent=2) + "\n")
    commit_all(project, "a manifest naming another file")
    (project / ".git/config").write_text((project / ".git/config").read_text() + "# SECRET-CONFIG\n")
    (project / "README.md").write_text((project / "README.md").read_text() + "SECRET-README\n")
    with unchanged(project):
        result = run_subprocess(project, "check", "--no-cache", env=env)
    assert result.code == 1, result.text
    assert "  changed          spec/generated-files.json" in result.out
    assert f"stale            {named}" not in result.out
    assert "SECRET-CONFIG" not in result.text and "SECRET-README" not in result.text
    git_config = (project / ".git/config").read_bytes()
    readme = (project / "README.md").read_bytes()
    written = run_subprocess(project, "generate", env=env)
    assert written.code == 0, written.text
    assert written.out.splitlines()[1:] == ["  spec/generated-files.json"]
    assert (project / ".git/config").read_bytes() == git_config and (project / "README.md").read_bytes() == readme


def test_the_tree_s_client_templates_are_never_rendered(project: Path, run: Callable[..., Result]) -> None:
    """openapi-python-client renders templates/client/ unsandboxed: the check (`--root` a tree) renders its own."""
    marker = project.parent / "template-ran"
    template = project / "templates/client/endpoint_macros.py.jinja"
    payload = '{# x #}{{ cycler.__init__.__globals__.os.system("id > ' + str(marker) + '") }}\n'
    template.write_text(template.read_text() + payload)
    result = check(run, project, E2B_CODEGEN_CACHE=str(project.parent / "fresh-cache"))
    assert not marker.exists()
    assert result.code == 0, result.text  # the checker's templates generate what the tree holds
    assert "codegen: clean: " in result.out
    warning = [line for line in result.err.splitlines() if "templates/client/" in line]
    assert warning == [
        "codegen: warning: the tree's templates/client/ differs from this checker's "
        "(templates/client/endpoint_macros.py.jinja): the client templates are code, so the check renders its own; "
        "what the tree's would generate is for the pull request's own CI run"
    ]
