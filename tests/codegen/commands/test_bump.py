"""`bump <ref>` (nox -s bump): verdicts on a real upstream, what it writes, what it refuses."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from git import Repo

import codegen.commands.bump
from codegen.commands.handwritten import PendingCheck
from tests.codegen.conftest import (
    PIN,
    Result,
    Upstream,
    add_operation,
    add_optional_property,
    change_description,
    copy_upstream,
    drop_force,
    git_status,
    make_property_required,
    remove_operation,
    replace_once,
    run_in_process,
    unchanged,
)
from toolkit.errors import EXIT_HANDWRITTEN

CHANGELOG = "packages/python-sdk/changelog.d"
ENVD_FILES = ("spec/envd/process/process.proto", "spec/envd/filesystem/filesystem.proto", "spec/envd/envd.yaml")
PIN_FILES = (
    "spec/runtime-ref",
    "spec/openapi.yml",
    "spec/openapi.lock.json",
    "spec/envd.lock.json",  # the envd files' lock records the pin too
    "spec/generated-files.json",
)


# --- edits of the pinned spec (the control plane as deployed, runtime v2.0.0) that the shared ones
# in tests/codegen/conftest.py do not make on it ------------------------------------------------


def narrow_enum(text: str) -> str:
    """OrderDirection, a query parameter's, loses `asc` (major: a request enum value removed)."""
    return replace_once(text, "        - asc\n        - desc\n", "        - desc\n")


def rename_upstream_operation_id(text: str) -> str:
    """The upstream gives pause an operationId of its own: not an SDK change."""
    anchor = '  /sandboxes/{sandboxID}/pause:\n    parameters:\n      - $ref: "#/components/parameters/sandboxID"\n'
    anchor += "    post:\n"
    return replace_once(text, anchor, anchor + "      operationId: sandboxPause\n")


def remove_mapped_operation(text: str) -> str:
    """setSandboxTimeout, which spec/operations.yml maps, disappears: codegen refuses."""
    start = text.index("  /sandboxes/{sandboxID}/timeout:\n")
    end = text.index("  /sandboxes/{sandboxID}/network:\n")
    return text[:start] + text[end:]


# --- this repository's own code checked against the regenerated client ----------------------


@pytest.fixture(autouse=True)
def _nothing_to_type_check_without_generation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """`no_generation` stages no generated file at all: no client to check the hand-written code against."""
    if "no_generation" in request.fixturenames:

        @contextlib.contextmanager
        def no_check(*args: object, **kwargs: object) -> Iterator[PendingCheck]:
            yield PendingCheck(None)

        monkeypatch.setattr(codegen.commands.bump, "handwritten_check", no_check)


@pytest.fixture
def cache(warm_cache: Path) -> Path:
    """The run's cache folder, mypy's cache in it warm (a bump type-checks the hand-written packages)."""
    return warm_cache


class Chain:
    """main: v2.0.0 (pin) -> note -> op -> desc -> removed -> required -> enum -> renamed -> nocontract -> unmapped."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.pin = upstream.head()
        self.note = upstream.commit_edit(add_optional_property)
        upstream.repo.create_tag("v1.2.0", ref=self.note)
        self.op = upstream.commit_edit(add_operation)
        upstream.repo.create_head("release", self.op)
        self.desc = upstream.commit_edit(change_description)
        self.removed = upstream.commit_edit(remove_operation)
        self.required = upstream.commit_edit(make_property_required)
        self.enum = upstream.commit_edit(narrow_enum)
        self.renamed = upstream.commit_edit(rename_upstream_operation_id)
        self.nocontract = upstream.commit_edit(drop_force)
        self.unmapped = upstream.commit_edit(remove_mapped_operation)
        self.side = upstream.commit_on_ref(add_operation, "refs/pull/1/head")
        self.tree = upstream.repo.commit(self.pin).tree.hexsha
        self.blob = (upstream.repo.commit(self.pin).tree / "spec/openapi.yml").hexsha


@pytest.fixture(scope="module")
def chain(pristine_upstream: Path, tmp_path_factory: pytest.TempPathFactory) -> Chain:
    return Chain(copy_upstream(pristine_upstream, tmp_path_factory.mktemp("chain") / "runtime"))


@pytest.fixture
def bump(chain: Chain, cache: Path) -> Callable[..., Result]:
    def _bump(project: Path, *args: str, **env: str | None) -> Result:
        return run_in_process(
            project,
            "bump",
            *args,
            env={"E2B_RUNTIME_REPO": chain.upstream.url, "E2B_CODEGEN_CACHE": str(cache), **env},
        )

    return _bump


def pin(project: Path, commit: str) -> None:
    (project / "spec/runtime-ref").write_text(commit + "\n")


VERDICTS = [
    # (parent, child, level, a line the report must have)
    ("pin", "note", "minor", "- property added: `"),
    # An operation spec/operations.yml does not map is named by its method and path.
    ("note", "op", "minor", "- operation added: `POST /sandboxes/{sandboxID}/refresh`"),
    ("op", "desc", "patch", "1 description-only change"),
    ("desc", "removed", "major", "- operation removed: `POST /sandboxes/{sandboxID}/refresh`"),
    ("removed", "required", "major", "- made required: `"),
    ("required", "enum", "major", "- enum value removed: `"),
]


@pytest.mark.parametrize(("parent", "child", "level", "line"), VERDICTS, ids=[v[1] for v in VERDICTS])
def test_verdicts_dry_run(
    project: Path,
    chain: Chain,
    bump: Callable[..., Result],
    no_generation: list[str],
    parent: str,
    child: str,
    level: str,
    line: str,
) -> None:
    pin(project, getattr(chain, parent))
    with unchanged(project):
        result = bump(project, getattr(chain, child), "--dry-run")
    assert result.code == 0, result.text
    assert f"Semver: **{level}**" in result.out
    assert line in result.out
    assert "# API changes: " in result.out and getattr(chain, child)[:7] in result.out
    assert "codegen: --dry-run: nothing written" in result.out
    assert no_generation == [getattr(chain, child)]


def test_minor_details(project: Path, chain: Chain, bump: Callable[..., Result], no_generation: list[str]) -> None:
    pin(project, chain.pin)
    result = bump(project, chain.op, "--dry-run")
    assert "Semver: **minor**" in result.out
    assert "## New (minor)" in result.out
    assert "note" in result.out and "POST /sandboxes/{sandboxID}/refresh" in result.out
    assert "## Breaking (major)" not in result.out


def test_bump_writes_pin_spec_lock_generated_and_fragment(
    project: Path, chain: Chain, bump: Callable[..., Result]
) -> None:
    result = bump(project, chain.note)
    assert result.code == 0, result.text
    assert f"codegen: pinned runtime@{chain.note[:7]}" in result.out
    assert (project / "spec/runtime-ref").read_text() == chain.note + "\n"
    assert (project / "spec/openapi.yml").read_text() == chain.upstream.spec_at(chain.note)
    lock = json.loads((project / "spec/openapi.lock.json").read_text())
    assert lock["commit"] == chain.note and lock["runtime"] == "https://github.com/e2b-dev/runtime.git"
    manifest = json.loads((project / "spec/generated-files.json").read_text())
    assert manifest["runtime-commit"] == chain.note
    model = (project / "packages/python-sdk/e2b/api/client/models/new_sandbox.py").read_text()
    assert "note" in model and chain.note not in model  # provenance is in the lock and the manifest only
    fragment = project / CHANGELOG / f"+runtime-{PIN[:12]}-{chain.note[:12]}.feature.md"
    assert fragment.read_text().startswith(f"The runtime API from runtime@{PIN[:7]} to runtime@{chain.note[:7]}")
    assert "Semver: **minor**" in result.out
    changed = {line[3:] for line in git_status(project).splitlines()}
    # One schema gained a property: only what is generated from it changes, beside the pin files.
    assert changed == {
        *PIN_FILES,
        f"{CHANGELOG}/+runtime-{PIN[:12]}-{chain.note[:12]}.feature.md",
        "packages/python-sdk/e2b/api/client/models/new_sandbox.py",
        "packages/local-api/e2b_local_api/wire/models.py",
    }
    # And the tree is then clean for the check.
    check = run_in_process(
        project, "check", env={"E2B_RUNTIME_REPO": chain.upstream.url, "E2B_CODEGEN_CACHE": str(project.parent / "c2")}
    )
    assert check.code == 0, check.text


def add_comment(text: str) -> str:
    return text + "# a comment: no API change\n"


def test_a_bump_with_no_api_change_writes_only_the_pin_files_and_its_fragment(
    project: Path, upstream: Upstream, cache: Path
) -> None:
    commit = upstream.commit_edit(add_comment)
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    result = run_in_process(project, "bump", commit, env=env)
    assert result.code == 0, result.text
    assert "Semver: **none** — no API changes" in result.out
    assert "wrote 6 path(s)" in result.out
    changed = {line[3:] for line in git_status(project).splitlines()}
    assert changed == {*PIN_FILES, f"{CHANGELOG}/+runtime-{PIN[:12]}-{commit[:12]}.misc.md"}
    manifest = json.loads((project / "spec/generated-files.json").read_text())
    assert manifest["runtime-commit"] == commit
    # The check still compares every generated file byte for byte, and finds them right.
    check = run_in_process(project, "check", "--no-cache", env=env)
    assert check.code == 0, check.text
    assert "every generated file match" in check.out


def rename_new_sandbox_schema(text: str) -> str:
    """The request body schema of create gets another name: the same JSON, another generated class."""
    return text.replace('#/components/schemas/NewSandbox"', '#/components/schemas/CreateSandboxBody"').replace(
        "\n    NewSandbox:\n", "\n    CreateSandboxBody:\n"
    )


def test_the_report_has_a_python_api_section(project: Path, chain: Chain, bump: Callable[..., Result]) -> None:
    result = bump(project, chain.note)
    assert result.code == 0, result.text
    fragment = (project / CHANGELOG / f"+runtime-{PIN[:12]}-{chain.note[:12]}.feature.md").read_text()
    assert "## Python API (what importers see)" in result.out
    assert "e2b: **minor** (0 break(s), 1 addition(s))" in result.out
    assert "- e2b's Python API, added: `e2b.api.client.models.NewSandbox.note (attribute)`" in fragment
    assert "python api" in result.err


def test_a_renamed_model_class_is_breaking_for_importers(project: Path, upstream: Upstream, cache: Path) -> None:
    """The HTTP API is unchanged, yet `e2b.api.client.models.NewSandbox` is gone: the fragment is `breaking`.

    The SDK names the body by that class (e2b/sandbox_async/main.py): the bump writes the tree and exits 3,
    naming the line to update.
    """
    commit = upstream.commit_edit(rename_new_sandbox_schema)
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    result = run_in_process(project, "bump", commit, env=env)
    assert result.code == EXIT_HANDWRITTEN, result.text
    assert "- `packages/python-sdk/e2b/sandbox_async/main.py:" in result.out and '"NewSandbox"' in result.out
    assert "- breaking: `e2b.api.client.models.NewSandbox: class removed`" in result.out
    assert "- added: `e2b.api.client.models.CreateSandboxBody (class)`" in result.out
    fragment = (project / CHANGELOG / f"+runtime-{PIN[:12]}-{commit[:12]}.breaking.md").read_text()
    assert fragment.startswith(f"The runtime API from runtime@{PIN[:7]} to runtime@{commit[:7]} (semver: major):")


def test_a_bump_after_its_dry_run_parses_and_reads_nothing_again(
    project: Path, chain: Chain, bump: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser's names and griffe's readings of both sides are remembered: the same report, from records."""
    from codegen.api_changes import client_parser
    from python_api import reader

    dry = bump(project, chain.note, "--dry-run")
    assert dry.code == 0, dry.text
    monkeypatch.setattr(client_parser, "parse_names", lambda *_: pytest.fail("parsed a spec again"))
    monkeypatch.setattr(reader, "read_api", lambda *_: pytest.fail("griffe read a tree again"))
    result = bump(project, chain.note)
    assert result.code == 0, result.text
    # The report and its Python API section; then the dry run's result line, and the bump's.
    assert result.out.partition("codegen: pinned")[0] == dry.out.partition("codegen: --dry-run")[0]
    assert "- added: `e2b.api.client.models.NewSandbox.note (attribute)`" in result.out


def test_the_python_api_level_can_raise_the_fragment_type(project: Path) -> None:
    """A regenerated field rename that the HTTP report would call `none` still types the fragment `breaking`."""
    from codegen.commands.bump import python_api_section
    from toolkit.paths import GENERATED_ROOTS, Project

    generated = {
        path.relative_to(project).as_posix(): path.read_bytes()
        for root in GENERATED_ROOTS
        for path in sorted((project / root).rglob("*.py"))
    }
    model = "packages/python-sdk/e2b/api/client/models/new_sandbox.py"
    generated[model] = generated[model].replace(b"auto_pause", b"auto_pause_on_idle")
    section, level = python_api_section(Project(project), generated, "none")
    assert level == "major"
    assert "- breaking: `e2b.api.client.models.NewSandbox.auto_pause: attribute removed`" in section
    assert "- added: `e2b.api.client.models.NewSandbox.auto_pause_on_idle (attribute)`" in section
    assert "The fragment's type follows the Python API: `breaking`." in section
    assert python_api_section(Project(project), generated, "major")[0].count("follows") == 0


def test_no_api_change_says_so_for_python_too(project: Path, upstream: Upstream, cache: Path) -> None:
    commit = upstream.commit_edit(add_comment)
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    result = run_in_process(project, "bump", commit, "--dry-run", env=env)
    assert result.code == 0, result.text
    assert "## Python API (what importers see)\n\nNo change to the public Python API of any package." in result.out


def test_bump_to_an_older_commit_works_and_warns(project: Path, chain: Chain, bump: Callable[..., Result]) -> None:
    pin(project, chain.op)
    result = bump(project, chain.note)
    assert result.code == 0, result.text
    assert (
        f"codegen: warning: {chain.note[:7]} is older than the current pin {chain.op[:7]}: this is a downgrade"
        in result.err
    )
    assert "- operation removed: `POST /sandboxes/{sandboxID}/refresh`" in result.out
    assert (project / "spec/runtime-ref").read_text() == chain.note + "\n"


@pytest.mark.parametrize("ref", ["v2.1.0", PIN, PIN[:10]])
def test_bump_to_the_current_pin_is_a_no_op(project: Path, bump: Callable[..., Result], ref: str) -> None:
    with unchanged(project):
        result = bump(project, ref)
    assert result.code == 0, result.text
    assert f"codegen: spec/runtime-ref already pins {PIN}; nothing to do" in result.out


@pytest.mark.parametrize(("ref", "kind"), [("v1.2.0", "tag"), ("release", "branch"), ("abbrev", "commit")])
def test_tag_branch_and_abbreviated_id_resolve(
    project: Path, chain: Chain, bump: Callable[..., Result], no_generation: list[str], ref: str, kind: str
) -> None:
    expected = chain.op if ref == "release" else chain.note
    if ref == "abbrev":
        ref = chain.note[:8]
    result = bump(project, ref, "--dry-run")
    assert result.code == 0, result.text
    assert f"{ref!r} is {kind} -> commit {expected}" in result.err


@pytest.mark.parametrize(("edit", "kind"), [(make_property_required, "breaking"), (change_description, "fix")])
def test_bump_fragment_is_typed_by_the_semver_level(
    project: Path, upstream: Upstream, cache: Path, edit: Callable[[str], str], kind: str
) -> None:
    """The report becomes a towncrier fragment that `nox -s release` turns into the version's level."""
    from release.fragments import read_fragments

    commit = upstream.commit_edit(edit)
    result = run_in_process(
        project, "bump", commit, env={"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    )
    assert result.code == 0, result.text
    (fragment,) = read_fragments(project, "packages/python-sdk")
    assert fragment.path == f"{CHANGELOG}/+runtime-{PIN[:12]}-{commit[:12]}.{kind}.md"
    assert fragment.type.name == kind


def test_contract_drop_is_refused_and_nothing_written(project: Path, chain: Chain, bump: Callable[..., Result]) -> None:
    pin(project, chain.enum)
    with unchanged(project):
        result = bump(project, chain.nocontract)
    assert result.code == 2, result.text
    assert "contract miss: /components/schemas/SandboxPauseRequest/properties/force is missing" in result.err
    assert not any(p.name != "README.md" for p in (project / CHANGELOG).glob("*"))
    # The report comes first, and the failure names the change in it that caused it.
    assert "## Breaking (major)" in result.out and "property removed: `pauseSandbox request body .force`" in result.out
    assert "; property removed by this commit (see the report: `pauseSandbox request body .force`)" in result.err
    # The place is the fetched spec's, the remedy a bump's (not "bump to a commit that carries it").
    assert f"codegen: error: runtime@{chain.nocontract[:7]}:spec/openapi.yml:" in result.err
    assert f"runtime@{chain.nocontract[:7]} lacks what the SDK needs: pick a later commit" in result.err
    assert "nox -s bump" not in result.err


def test_an_upstream_operation_id_rename_is_not_an_sdk_change(
    project: Path, chain: Chain, bump: Callable[..., Result], no_generation: list[str]
) -> None:
    pin(project, chain.enum)
    result = bump(project, chain.renamed, "--dry-run")
    assert result.code == 0, result.text
    assert "Semver: **none** — no API changes" in result.out
    assert "## Upstream only (no SDK change)" in result.out
    assert "- upstream operationId renamed: `pauseSandbox` ((none) -> sandboxPause) [1]" in result.out
    assert "not an SDK change: the SDK names its operations by method and path in spec/operations.yml" in result.out


def test_a_mapped_operation_the_spec_lacks_is_refused(project: Path, chain: Chain, bump: Callable[..., Result]) -> None:
    pin(project, chain.renamed)
    with unchanged(project):
        result = bump(project, chain.unmapped)
    assert result.code == 2, result.text
    assert (
        "operation map miss: setSandboxTimeout is POST /sandboxes/{sandboxID}/timeout, which the spec does not have"
        in result.err
    )
    assert f"runtime@{chain.unmapped[:7]}:spec/openapi.yml:" in result.err
    assert "(/paths/~1sandboxes~1{sandboxID}~1timeout/post)" in result.err
    assert "spec/operations.yml entry" in result.err
    assert "operation removed: `setSandboxTimeout` (POST /sandboxes/{sandboxID}/timeout)" in result.out
    assert "; operation removed by this commit (see the report: `setSandboxTimeout`)" in result.err


def test_dry_run_to_a_commit_that_removes_a_mapped_operation_prints_the_report(
    project: Path, chain: Chain, bump: Callable[..., Result]
) -> None:
    pin(project, chain.renamed)
    with unchanged(project):
        result = bump(project, chain.unmapped, "--dry-run")
    assert result.code == 2, result.text
    assert result.out.startswith(f"# API changes: runtime@{chain.renamed[:7]} -> runtime@{chain.unmapped[:7]}")
    assert "Semver: **major**" in result.out
    assert "operation removed by this commit" in result.err


def moved_upstream(chain: Chain, dest: Path) -> tuple[Upstream, str]:
    """Another repository (a mirror, a rewritten history) holding the note commit's spec, not the old pin."""
    Repo.init(dest, initial_branch="main")
    moved = Upstream(dest)
    for path in ENVD_FILES:  # the data plane moves with it: one pin, every spec file
        moved.commit_bytes((chain.upstream.repo.commit(chain.note).tree / path).data_stream.read(), path, path=path)
    return moved, moved.commit_bytes(chain.upstream.spec_at(chain.note).encode(), "moved here")


def test_bump_from_an_old_pin_the_upstream_lacks_compares_with_the_locked_spec(
    project: Path, chain: Chain, tmp_path: Path, no_generation: list[str]
) -> None:
    moved, commit = moved_upstream(chain, tmp_path / "moved")
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": moved.url, "E2B_CODEGEN_CACHE": str(tmp_path / "cache-moved")}
    result = run_in_process(project, "bump", commit, "--dry-run", env=env)
    assert result.code == 0, result.text
    assert (
        f"runtime@{PIN[:7]} is not in {moved.url}: the report's old side is the tracked spec/openapi.yml, "
        "whose blob id (" in result.err
    )
    assert "Semver: **minor**" in result.out and "- property added: `" in result.out
    assert "SHA b'" not in result.text and "could not be resolved" not in result.text


def test_bump_from_an_old_pin_the_upstream_lacks_refuses_an_edited_spec(
    project: Path, chain: Chain, tmp_path: Path, no_generation: list[str]
) -> None:
    moved, commit = moved_upstream(chain, tmp_path / "moved")
    spec = project / "spec/openapi.yml"
    spec.write_text(spec.read_text() + "# edited here\n")
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": moved.url, "E2B_CODEGEN_CACHE": str(tmp_path / "cache-moved")}
    with unchanged(project):
        result = run_in_process(project, "bump", commit, env=env)
    assert result.code == 2, result.text
    assert f"the old pin runtime@{PIN[:7]} (spec/openapi.yml) is not in {moved.url}" in result.err
    assert "the tracked spec cannot stand in for it: spec/openapi.yml (blob " in result.err
    assert "SHA b'" not in result.text and "could not be resolved" not in result.text


def test_unreachable_upstream_fails_clearly(project: Path, chain: Chain, bump: Callable[..., Result]) -> None:
    with unchanged(project):
        result = bump(project, chain.note, E2B_RUNTIME_REPO="/nonexistent/runtime")
    assert result.code == 2
    assert "the runtime repository /nonexistent/runtime cannot be reached" in result.err
    assert "bumping needs the upstream" in result.err


def test_commit_not_on_the_branch_is_refused(project: Path, chain: Chain, bump: Callable[..., Result]) -> None:
    with unchanged(project):
        result = bump(project, chain.side)
    assert result.code == 2, result.text
    assert f"commit {chain.side} is not reachable from the runtime's 'main' branch" in result.err
    assert "pin only commits merged into main" in result.err


TEXT_REFUSED = [
    "--upload-pack=touch x",
    "-h",
    "HEAD~1..HEAD",
    "@{-1}",
    "",
    "main\x1b[31m",
    "v1\nmain",
    "HEAD^",
    "main:spec/openapi.yml",
]


@pytest.mark.parametrize("ref", TEXT_REFUSED, ids=repr)
def test_bad_ref_text_is_refused_before_any_git(
    project: Path, bump: Callable[..., Result], git_calls: list[list[str]], ref: str
) -> None:
    with unchanged(project):
        result = bump(project, "--", ref)
    assert result.code == 2, result.text
    assert "error: " in result.err
    assert "name one runtime commit" in result.err
    assert git_calls == []
    assert not (project.parent / "x").exists() and not Path("x").exists()


def test_option_like_refs_without_separator_never_reach_git(
    project: Path, bump: Callable[..., Result], git_calls: list[list[str]]
) -> None:
    with unchanged(project):
        result = bump(project, "--upload-pack=touch x")
    assert result.code == 2  # argparse refuses an unknown option
    assert git_calls == []


@pytest.mark.parametrize("which", ["missing-branch", "0123456789abcdef0123456789abcdef01234567", "tree", "blob"])
def test_refs_git_resolves_to_nothing_or_not_a_commit(
    project: Path, chain: Chain, bump: Callable[..., Result], git_calls: list[list[str]], which: str
) -> None:
    ref = {"tree": chain.tree, "blob": chain.blob}.get(which, which)
    with unchanged(project):
        result = bump(project, ref)
    assert result.code == 2, result.text
    if which in ("tree", "blob"):
        assert f"{ref!r} names a {which}, not a commit" in result.err
    else:
        assert f"{ref!r} is not a tag, branch or commit of the runtime repository" in result.err
    for command in git_calls:
        for i, arg in enumerate(command):
            if ref in arg and arg != git_calls[0][0]:
                assert "--end-of-options" in command[:i], command


# --- what the report once missed: reproduced on this repository's own spec ---------


def inline_connect_request(text: str) -> str:
    """The connect body's schema written inline (an "extract inlined bodies" refactor, backwards)."""
    start = text.index("    ConnectSandbox:\n") + len("    ConnectSandbox:\n")
    end = text.index("\n    ", start + 1)
    while text[end + 5] == " ":  # the block ends at the next component, four spaces in
        end = text.index("\n    ", end + 1)
    inline = "".join(" " * 8 + line + "\n" for line in text[start:end].splitlines())
    ref = '              $ref: "#/components/schemas/ConnectSandbox"\n'
    at = text.index(ref)  # the first: POST /sandboxes/{sandboxID}/connect, connectSandbox
    return text[:at] + inline + text[at + len(ref) :]


def drop_next_token_header(text: str) -> str:
    """listSandboxes (the first list) stops documenting X-Next-Token."""
    header = '            X-Next-Token:\n              $ref: "#/components/headers/XNextToken"\n'
    at = text.index(header, text.index("  /v2/sandboxes:\n"))
    return text[:at] + text[at + len(header) :]


def kill_without_credentials(text: str) -> str:
    kill = text.index("    delete:\n", text.index("  /sandboxes/{sandboxID}:\n"))
    security = text.index("        - ApiKeyAuth: []\n", kill) + len("        - ApiKeyAuth: []\n")
    return text[:security] + "        - {}\n" + text[security:]


MISSED = [
    (
        inline_connect_request,
        "major",
        "- model renamed: `connectSandbox request body` (ConnectSandbox -> ConnectSandboxBody)",
    ),
    # The generated client does not surface response headers (the SDK reads X-Next-Token by name): patch.
    (
        drop_next_token_header,
        "patch",
        "- response header removed: `listSandboxes 200 response header X-Next-Token` [1]",
    ),
    (kill_without_credentials, "minor", "- security made optional: `killSandbox security`"),
]


@pytest.mark.parametrize(("edit", "level", "line"), MISSED, ids=[m[0].__name__ for m in MISSED])
def test_the_report_names_generated_renames_headers_and_security(
    project: Path,
    upstream: Upstream,
    cache: Path,
    no_generation: list[str],
    edit: Callable[[str], str],
    level: str,
    line: str,
) -> None:
    commit = upstream.commit_edit(edit)
    with unchanged(project):
        result = run_in_process(
            project,
            "bump",
            commit,
            "--dry-run",
            env={"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)},
        )
    assert result.code == 0, result.text
    assert f"Semver: **{level}**" in result.out
    assert line in result.out


# --- spec text reaches the terminal (and the fragment) escaped (issue 20, item 9) -------

CONTROLS = {"\x1b", "\x07", "\u202e"}


def hostile_property(text: str) -> str:
    """NewSandbox gains an optional property whose name carries a terminal escape and a bidi override."""
    anchor = "          description: Pause the sandbox instead of killing it at its deadline.\n"
    return replace_once(text, anchor, anchor + '        "note\\e]0;owned\\a\\u202e":\n          type: string\n')


def hostile_dangling_ref(text: str) -> str:
    """A path whose name carries escapes, with a $ref to nothing: the spec is refused, naming the path."""
    anchor = "  /sandboxes/{sandboxID}/metrics:\n"
    block = (
        '  "/x\\e[2J\\e[1;1Hcodegen: clean":\n    get:\n      responses:\n        "200":\n          $ref: "#/nope"\n'
    )
    return replace_once(text, anchor, block + anchor)


def test_a_hostile_name_in_the_spec_is_escaped_in_the_report(
    project: Path, upstream: Upstream, run: Callable[..., Result], no_generation: list[str]
) -> None:
    commit = upstream.commit_edit(hostile_property)
    with unchanged(project):
        result = run(project, "bump", commit, "--dry-run")
    assert result.code == 0, result.text
    assert "- property added: `createSandbox request body .note\\x1b]0;owned\\x07\\u202e` (optional)" in result.out
    assert not CONTROLS & set(result.text)


def test_a_hostile_name_in_a_spec_error_is_escaped(
    project: Path, upstream: Upstream, run: Callable[..., Result], no_generation: list[str]
) -> None:
    commit = upstream.commit_edit(hostile_dangling_ref)
    with unchanged(project):
        result = run(project, "bump", commit, "--dry-run")
    assert result.code == 2, result.text
    assert "(/paths/~1x\\x1b[2J\\x1b[1;1Hcodegen: clean/get/responses/200/$ref): $ref '#/nope' points at" in result.err
    assert not CONTROLS & set(result.text)
    assert all(line.startswith(("codegen: ", "  -> ")) for line in result.text.splitlines()), result.text


def pause_body_not_a_body(text: str) -> str:
    """pauseSandbox's requestBody becomes the number 5: readable, and refused by the validator."""
    body = (
        "      requestBody:\n        required: false\n        content:\n          application/json:\n"
        '            schema:\n              $ref: "#/components/schemas/SandboxPauseRequest"\n'
    )
    return replace_once(text, body, "      requestBody: 5\n")


def test_a_spec_the_validator_refuses_is_refused_after_the_report_and_nothing_written(
    project: Path, upstream: Upstream, run: Callable[..., Result], cache: Path
) -> None:
    """The new spec is validated beside the generators: its problems are the bump's failure, exit 2."""
    commit = upstream.commit_edit(pause_body_not_a_body)
    with unchanged(project):
        result = run(project, "bump", commit, E2B_CODEGEN_CACHE=str(cache))
    assert result.code == 2, result.text
    assert "5 is not valid under any of the schemas listed in the 'oneOf' keyword" in result.err
    assert f"runtime@{commit[:7]}:spec/openapi.yml:" in result.err
    assert "## " in result.out  # the report came first


def test_a_report_that_fails_on_an_unvalidated_spec_says_the_validator_s_problems(
    project: Path, upstream: Upstream, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report reads the spec before the validator has passed it; where it trips, the cause is said."""
    commit = upstream.commit_edit(pause_body_not_a_body)

    def trips(*args: object, **kwargs: object) -> None:
        raise TypeError("'int' object is not subscriptable")

    monkeypatch.setattr(codegen.commands.bump, "compare_specs", trips)
    with unchanged(project):
        result = run(project, "bump", commit, "--dry-run")
    assert result.code == 2, result.text
    assert "5 is not valid under any of the schemas listed in the 'oneOf' keyword" in result.err
    assert "TypeError" not in result.text


def test_a_bump_that_changes_an_envd_file_syncs_it_and_says_so(project: Path, upstream: Upstream, cache: Path) -> None:
    path = "spec/envd/envd.yaml"
    data = (upstream.repo.commit("main").tree / path).data_stream.read()
    edited = data.replace(b"summary: Whether envd is up", b"summary: Whether envd answers", 1)
    assert edited != data
    commit = upstream.commit_bytes(edited, "reword /health", path=path)
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    result = run_in_process(project, "bump", commit, env=env)
    assert result.code == 0, result.text
    assert (project / path).read_bytes() == edited
    lock = json.loads((project / "spec/envd.lock.json").read_text())
    assert lock["commit"] == commit
    # In the whole report (printed, and the release pull request's body with --report); the fragment is a list.
    assert "## Data plane (envd)" in result.out
    assert "- changed `spec/envd/envd.yaml`: envd's HTTP API, 6 operation(s)" in result.out
    assert "- changed `spec/envd/process/process.proto`" not in result.out


# --- the data plane's protos, graded at the wire (issue 41, point 5) -----------------------------

PROCESS, FILESYSTEM = ENVD_FILES[:2]
IS_SYMLINK = b"  bool is_symlink = 12;\n"


def commit_envd_edits(upstream: Upstream, path: str, *edits: tuple[bytes, bytes]) -> str:
    data = (upstream.repo.commit("main").tree / path).data_stream.read()
    for old, new in edits:
        assert data.count(old) == 1, old
        data = data.replace(old, new)
    return upstream.commit_bytes(data, f"edit {path}", path=path)


def bump_envd(project: Path, upstream: Upstream, cache: Path, commit: str, *args: str) -> Result:
    return run_in_process(
        project, "bump", commit, *args, env={"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    )


def the_fragment(project: Path) -> tuple[str, str]:
    (path,) = (project / CHANGELOG).glob("+runtime-*.md")
    return path.name, path.read_text()


def test_a_bump_that_removes_a_proto_field_is_major_naming_it(project: Path, upstream: Upstream, cache: Path) -> None:
    commit = commit_envd_edits(upstream, FILESYSTEM, (IS_SYMLINK, b""))
    result = bump_envd(project, upstream, cache, commit)
    # The local server's filesystem service sets the field: bump writes the move and names what to fix (exit 3).
    assert result.code == EXIT_HANDWRITTEN, result.text
    assert "e2b_local_api/dataplane/entries.py:" in result.out and "uses `EntryInfo.is_symlink`" in result.out
    assert "Semver: **major** — forced by: field removed `filesystem.EntryInfo.is_symlink (12)`" in result.out
    assert "#### What SDK users lose (major)\n- field removed: `filesystem.EntryInfo.is_symlink (12)`\n" in result.out
    name, text = the_fragment(project)
    assert name.endswith(".breaking.md"), name  # the control plane did not change: the data plane sets the type
    assert "(semver: major)" in text
    assert "- envd, field removed: `filesystem.EntryInfo.is_symlink (12)`" in text


def test_a_bump_that_adds_a_proto_field_is_minor(project: Path, upstream: Upstream, cache: Path) -> None:
    commit = commit_envd_edits(upstream, FILESYSTEM, (IS_SYMLINK, IS_SYMLINK + b"  string link_kind = 13;\n"))
    result = bump_envd(project, upstream, cache, commit)
    assert result.code == 0, result.text
    assert "#### What SDK users gain (minor)\n- field added: `filesystem.EntryInfo.link_kind (13)`\n" in result.out
    name, text = the_fragment(project)
    assert name.endswith(".feature.md"), name
    assert "- envd, field added: `filesystem.EntryInfo.link_kind (13)`" in text


# A renumbered field keeps its Python name and type: the hand-written code still type-checks (exit 0); a new
# type or cardinality breaks the local server's code that sets it (exit 3).
@pytest.mark.parametrize(
    ("edit", "line", "code"),
    [
        ((IS_SYMLINK, b"  bool is_symlink = 13;\n"),
         "- field number changed: `filesystem.EntryInfo.is_symlink` (12 -> 13)", 0),
        ((IS_SYMLINK, b"  string is_symlink = 12;\n"),
         "- field type changed: `filesystem.EntryInfo.is_symlink (12)` (bool -> string)", EXIT_HANDWRITTEN),
        ((IS_SYMLINK, b"  repeated bool is_symlink = 12;\n"),
         "- cardinality changed: `filesystem.EntryInfo.is_symlink (12)` (singular -> repeated)", EXIT_HANDWRITTEN),
    ],
    ids=["number", "type", "cardinality"],
)  # fmt: skip
def test_a_bump_that_changes_a_field_s_wire_is_major(
    project: Path, upstream: Upstream, cache: Path, edit: tuple[bytes, bytes], line: str, code: int
) -> None:
    commit = commit_envd_edits(upstream, FILESYSTEM, edit)
    with unchanged(project):
        result = bump_envd(project, upstream, cache, commit, "--dry-run")
    assert result.code == code, result.text
    assert f"#### What SDK users lose (major)\n{line}\n" in result.out


def test_a_streaming_kind_the_contract_needs_changed_is_major_and_explains_the_refusal(
    project: Path, upstream: Upstream, cache: Path
) -> None:
    commit = commit_envd_edits(upstream, PROCESS, (b"returns (stream StartResponse)", b"returns (StartResponse)"))
    with unchanged(project):
        result = bump_envd(project, upstream, cache, commit, "--dry-run")
    assert result.code == 2, result.text
    # The report comes first: the contract's refusal names the change that caused it.
    assert "- streaming kind changed: `process.Process/Start` (server -> unary)" in result.out
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error")]
    assert len(errors) == 1, result.err
    assert "process.Process/Start is unary (needs server-streaming)" in errors[0]
    assert "streaming kind changed by this commit (see the report: `process.Process/Start`)" in errors[0]


def test_a_comment_only_proto_change_is_no_change(project: Path, upstream: Upstream, cache: Path) -> None:
    commit = commit_envd_edits(upstream, FILESYSTEM, (IS_SYMLINK, b"  // Whether it is a link.\n" + IS_SYMLINK))
    result = bump_envd(project, upstream, cache, commit)
    assert result.code == 0, result.text
    assert "## Data plane (envd)\n\nSemver: **none** — no API changes" in result.out
    assert "No change on the wire: comments, layout or declaration order only." in result.out
    assert (project / FILESYSTEM).read_bytes() == (upstream.repo.commit(commit).tree / FILESYSTEM).data_stream.read()
    name, text = the_fragment(project)
    assert name.endswith(".misc.md") and "no change the SDK's users can see" in text, (name, text)


def test_a_message_renamed_with_the_same_fields_is_no_wire_change(
    project: Path, upstream: Upstream, cache: Path
) -> None:
    renames = ((b"returns (MoveResponse)", b"returns (MoveReply)"), (b"message MoveResponse {", b"message MoveReply {"))
    commit = commit_envd_edits(upstream, FILESYSTEM, *renames)
    with unchanged(project):
        result = bump_envd(project, upstream, cache, commit, "--dry-run")
    # Not on the wire, but the local server's service names the generated class: bump says where (exit 3).
    assert result.code == EXIT_HANDWRITTEN, result.text
    assert 'Name "pb.MoveResponse" is not defined' in result.out
    assert "## Data plane (envd)\n\nSemver: **none** — no API changes" in result.out
    line = "- message renamed: `filesystem.MoveResponse` (now filesystem.MoveReply) [1]"
    assert f"#### Upstream only (no SDK change)\n{line}" in result.out
    assert "1. not a wire change" in result.out  # and the Python API section grades the generated classes


def test_an_unparseable_proto_at_the_new_pin_is_one_line_and_nothing_written(
    project: Path, upstream: Upstream, cache: Path
) -> None:
    commit = commit_envd_edits(upstream, FILESYSTEM, (b"message MoveRequest {", b"message MoveRequest {{"))
    with unchanged(project):
        result = bump_envd(project, upstream, cache, commit)
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error")]
    assert len(errors) == 1, result.err
    assert errors[0].startswith(f"codegen: error: {FILESYSTEM}:"), errors[0]
    assert errors[0].split(":")[3].isdigit(), errors[0]  # protoc's line


# --- the record: one fragment per pending change, from the pin it started at (issue 40, 14 and 15) -----


def bump_fragments(project: Path) -> list[str]:
    return sorted(p.name for p in (project / CHANGELOG).glob("+runtime-*.md"))


def test_bumps_from_one_start_keep_one_fragment_and_back_to_the_start_none(
    project: Path, chain: Chain, bump: Callable[..., Result], tmp_path: Path
) -> None:
    """Bump to A, B, then back to the pin: one fragment from the start while pending; none, and the tree as it was."""
    with unchanged(project):
        first = bump(project, chain.note)
        assert first.code == 0, first.text
        assert bump_fragments(project) == [f"+runtime-{PIN[:12]}-{chain.note[:12]}.feature.md"]
        report = tmp_path / "report.md"
        second = bump(project, chain.removed, "--report", str(report))
        assert second.code == 0, second.text
        # The change from the pin the record started at (the operation added then removed nets to nothing).
        assert bump_fragments(project) == [f"+runtime-{PIN[:12]}-{chain.removed[:12]}.feature.md"]
        assert second.out.startswith(f"# API changes: runtime@{PIN[:7]} -> runtime@{chain.removed[:7]}")
        assert "refresh" not in second.out.partition("## Python API")[0]
        fragment = (project / CHANGELOG / bump_fragments(project)[0]).read_text()
        assert fragment.startswith(f"The runtime API from runtime@{PIN[:7]} to runtime@{chain.removed[:7]}")
        assert not [line for line in fragment.splitlines() if line.startswith("#")], fragment
        assert all(line.startswith("- ") for line in fragment.splitlines()[1:]), fragment
        # The whole report, headings and all, is the release pull request's body.
        whole = report.read_text()
        assert whole.startswith(f"# API changes: runtime@{PIN[:7]} -> ") and "## Python API" in whole
        assert f"replacing {CHANGELOG}/+runtime-{PIN[:12]}-{chain.note[:12]}.feature.md" in second.out
        back = bump(project, PIN)
        assert back.code == 0, back.text
        assert bump_fragments(project) == []
        assert f"back at runtime@{PIN[:7]}, where the pending record started: no fragment" in back.out


def test_bump_refuses_a_fragment_that_does_not_chain_to_the_pin(
    project: Path, chain: Chain, bump: Callable[..., Result]
) -> None:
    stray = project / CHANGELOG / f"+runtime-{'a' * 12}-{'b' * 12}.breaking.md"
    stray.write_text("The runtime API from runtime@aaaaaaa to runtime@bbbbbbb (semver: major):\n")
    with unchanged(project):
        result = bump(project, chain.note)
    assert result.code == 2, result.text
    assert f"codegen: error: {CHANGELOG}/{stray.name}: does not chain to the current pin" in result.err
    assert "delete them, or set the pin back to the one they end at" in result.err


def break_sandbox_logic(project: Path) -> int:
    logic = project / "packages/python-sdk/e2b/_sandbox_logic.py"
    logic.write_text(logic.read_text() + "\nfrom e2b.api.client.models import NoSuchModel\n")
    return len(logic.read_text().splitlines())


def test_a_bump_after_one_that_left_code_broken_exits_3_again(project: Path, upstream: Upstream, cache: Path) -> None:
    """The generated files do not change, the hand-written code is still broken: exit 3, the line not new."""
    line = break_sandbox_logic(project)
    commit = upstream.commit_edit(add_comment)
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    result = run_in_process(project, "bump", commit, env=env)
    assert result.code == 3, result.text
    section = result.out.split("## Hand-written code to update", 1)[1]
    assert f"- `packages/python-sdk/e2b/_sandbox_logic.py:{line}`: " in section
    assert "0 place(s) marked **new** break with this bump; 1 were broken before it and still are." in section
    assert (project / "spec/runtime-ref").read_text() == commit + "\n"


def test_a_replacing_bump_compares_the_python_api_with_the_record_s_start(
    project: Path, upstream: Upstream, cache: Path
) -> None:
    """A class renamed by the first bump is still a break of the record the second one replaces it with."""
    renamed = upstream.commit_edit(rename_new_sandbox_schema)
    noted = upstream.commit_edit(add_operation)
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    first = run_in_process(project, "bump", renamed, env=env)
    assert first.code == EXIT_HANDWRITTEN, first.text  # the SDK names NewSandbox: still broken after both
    second = run_in_process(project, "bump", noted, env=env)
    assert second.code == EXIT_HANDWRITTEN, second.text
    assert bump_fragments(project) == [f"+runtime-{PIN[:12]}-{noted[:12]}.breaking.md"]
    assert "- breaking: `e2b.api.client.models.NewSandbox: class removed`" in second.out
    fragment = (project / CHANGELOG / bump_fragments(project)[0]).read_text()
    assert "- e2b's Python API, breaking: `e2b.api.client.models.NewSandbox: class removed`" in fragment


@pytest.mark.parametrize("where", ["missing/report.md", "."])
def test_a_report_file_that_cannot_be_written_is_refused_before_anything(
    project: Path, chain: Chain, bump: Callable[..., Result], tmp_path: Path, git_calls: list[list[str]], where: str
) -> None:
    with unchanged(project):
        result = bump(project, chain.note, "--report", str(tmp_path / where))
    assert result.code == 2, result.text
    (line,) = result.err.splitlines()[:1]
    assert line.startswith(f"codegen: error: --report {tmp_path / where}"), result.err
    assert "name a file in a writable folder" in result.err
    assert git_calls == []  # refused before the upstream was asked anything
