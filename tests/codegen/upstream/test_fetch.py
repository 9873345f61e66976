"""Where the spec comes from: the upstream, the offline fallback, and every bad input, end to end."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from gitdb import IStream  # type: ignore[import-untyped]

from codegen.config import load_source
from codegen.tree.file_lock import held
from codegen.upstream.fetch import UpstreamRepository, git_url, obtain_spec
from tests.codegen.conftest import (
    OFFLINE,
    PERSON,
    PIN,
    UNREACHABLE_URL,
    Result,
    Upstream,
    add_optional_property,
    commit_all,
    configure_unreachable_upstream,
    git_repo,
    git_status,
    unchanged,
)
from toolkit.errors import ToolError
from toolkit.paths import Project

EDITED = "packages/python-sdk/e2b/api/client/models/new_sandbox.py"


def refused(run: Callable[..., Result], project: Path, *args: str, **env: str | None) -> Result:
    """Run, expecting exit 2 and a tree byte-identical afterwards."""
    (project / EDITED).write_text("edited so that a run would write\n")
    with unchanged(project):
        result = run(project, *(args or ("generate",)), **env)
    assert result.code == 2, result.text
    assert "Traceback" not in result.text
    return result


# --- the offline fallback ------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("/nonexistent/path", "'/nonexistent/path' does not appear to be a git repository"),
        ("file:///nonexistent/runtime.git", "'/nonexistent/runtime.git' does not appear to be a git repository"),
    ],
)
def test_the_configured_upstream_unreachable_falls_back_with_one_true_warning(
    project: Path, run: Callable[..., Result], url: str, reason: str
) -> None:
    configure_unreachable_upstream(project, url)
    with unchanged(project):
        result = run(project, "generate", **OFFLINE)
    assert result.code == 0, result.text
    warnings = [line for line in result.err.splitlines() if "warning" in line]
    assert len(warnings) == 1, warnings
    assert f"{url} is unreachable ({reason})" in warnings[0]
    assert "using the tracked spec/openapi.yml, whose blob id matches the lock" in warnings[0]
    assert "nothing written" in result.out


@pytest.mark.parametrize("verb", ["generate", "check"])
def test_an_unusable_runtime_repo_override_is_an_error_naming_the_variable(
    project: Path, run: Callable[..., Result], verb: str
) -> None:
    """A mistyped E2B_RUNTIME_REPO is a mistake to report, never a cue to fall back ("clean")."""
    result = refused(run, project, verb, E2B_RUNTIME_REPO="/nonexistent/path")
    assert "codegen: error: E2B_RUNTIME_REPO: /nonexistent/path cannot be reached: " in result.err
    assert "'/nonexistent/path' does not appear to be a git repository" in result.err
    assert "point E2B_RUNTIME_REPO at a reachable runtime repository" in result.err
    assert "clean" not in result.text and "tracked spec" not in result.text


def test_an_upstream_without_the_configured_branch_is_an_error_naming_it(
    project: Path, run: Callable[..., Result]
) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('runtime-branch = "main"', 'runtime-branch = "trunk"'))
    commit_all(project, "the runtime's branch is trunk")  # the check reads the branch at the base revision
    result = refused(run, project, "check")
    assert "pyproject.toml [tool.codegen] runtime-branch: " in result.err
    assert "answered, but has no branch 'trunk'" in result.err
    assert "unreachable" not in result.text and "clean" not in result.text


def spoil_spec(project: Path, kind: str) -> str:
    """Make the tracked spec something other than the locked bytes; the fallback's words for it."""
    spec = project / "spec/openapi.yml"
    if kind == "edited":
        spec.write_text(add_optional_property(spec.read_text()))
        return "spec/openapi.yml is edited here (blob "
    spec.unlink()
    if kind == "missing":
        return "spec/openapi.yml is missing"
    if kind == "directory":
        spec.mkdir()
        return "spec/openapi.yml is a directory"
    spec.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n")
    return "spec/openapi.yml is a Git LFS pointer, not the spec"


@pytest.mark.parametrize("kind", ["edited", "missing", "lfs"])
def test_offline_codegen_restores_the_locked_spec_from_git(
    offline_project: Path, run: Callable[..., Result], kind: str
) -> None:
    """The lock names the spec by blob id: git's object of that id is the locked spec, whoever stored it."""
    spec = offline_project / "spec/openapi.yml"
    locked = spec.read_bytes()
    said = spoil_spec(offline_project, kind)
    result = run(offline_project, "generate", **OFFLINE)
    assert result.code == 0, result.text
    assert f"{UNREACHABLE_URL} is unreachable" in result.err
    assert said in result.err and "using git's copy of the locked blob " in result.err
    assert spec.read_bytes() == locked
    assert git_status(offline_project) == ""


@pytest.mark.parametrize("kind", ["edited", "directory", "lfs"])
def test_offline_without_git_a_spec_that_is_not_the_locked_one_is_refused_naming_it(
    offline_project: Path, run: Callable[..., Result], kind: str
) -> None:
    shutil.rmtree(offline_project / ".git")
    said = spoil_spec(offline_project, kind)
    for args in (("generate",), ("check", "--trust-tree")):
        result = refused(run, offline_project, *args, **OFFLINE)
        assert f"{UNREACHABLE_URL} is unreachable" in result.err
        assert said in result.err and "git holds no copy of the locked blob" in result.err, result.err
        assert "clean" not in result.text


def test_unreachable_with_an_overridden_ref_is_an_error_naming_the_variable(
    offline_project: Path, run: Callable[..., Result], v100: str
) -> None:
    result = refused(run, offline_project, E2B_RUNTIME_REF=v100, **OFFLINE)
    assert f"E2B_RUNTIME_REF: {UNREACHABLE_URL} is unreachable" in result.err
    assert f"runtime@{v100[:7]} cannot be fetched" in result.err and "unset E2B_RUNTIME_REF" in result.err


# --- bad pins and refs ------------------------------------------------------------


def test_pin_missing(project: Path, run: Callable[..., Result]) -> None:
    (project / "spec/runtime-ref").unlink()
    result = refused(run, project)
    assert "spec/runtime-ref is missing" in result.err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the pin is empty"),
        ("\n", "the pin is empty"),
        ("54f8c7f", "'54f8c7f' is not a full commit id"),
        ("main", "'main' is not a full commit id"),
        (PIN.upper(), "is not a full commit id (40 lowercase hex digits)"),
        (PIN + "0", "is not a full commit id"),
    ],
)
def test_pin_not_a_full_commit_id(project: Path, run: Callable[..., Result], text: str, message: str) -> None:
    (project / "spec/runtime-ref").write_text(text)
    result = refused(run, project)
    assert "spec/runtime-ref: " in result.err and message in result.err


def test_pin_that_does_not_exist_upstream(project: Path, run: Callable[..., Result]) -> None:
    (project / "spec/runtime-ref").write_text("0123456789abcdef0123456789abcdef01234567\n")
    result = refused(run, project)
    assert "commit 0123456789abcdef0123456789abcdef01234567 does not exist in" in result.err


def test_pin_not_reachable_from_the_branch(project: Path, upstream: Upstream, run: Callable[..., Result]) -> None:
    side = upstream.commit_on_ref(add_optional_property, "refs/pull/1/head")
    (project / "spec/runtime-ref").write_text(side + "\n")
    result = refused(run, project)
    assert f"commit {side} exists upstream but is not reachable from 'main'" in result.err
    assert "merge the change into the runtime's main first" in result.err


def test_spec_path_missing_at_the_commit(project: Path, run: Callable[..., Result]) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('spec-path = "spec/openapi.yml"', 'spec-path = "api/openapi.yml"')
    )
    result = refused(run, project)
    assert f"api/openapi.yml does not exist at runtime@{PIN[:7]}" in result.err
    assert "spec-path" in result.err


@pytest.mark.parametrize("ref", ["-uhack", "--upload-pack=touch x", "HEAD", "54f8c7f"])
def test_env_ref_that_is_not_a_full_id_is_refused_before_git(
    project: Path, run: Callable[..., Result], git_calls: list[list[str]], ref: str
) -> None:
    result = refused(run, project, E2B_RUNTIME_REF=ref)
    assert "E2B_RUNTIME_REF: " in result.err and "is not a full commit id" in result.err
    assert not any(ref in arg for command in git_calls for arg in command)
    assert git_calls == []


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("ext::sh -c touch% {marker}", "names a git remote helper ('::')"),
        ("fd::17", "names a git remote helper ('::')"),
        ("foo::bar", "names a git remote helper ('::')"),
        ("-uhack", "starts with '-' and would be read as an option"),
        ("--upload-pack=touch {marker}", "starts with '-'"),
        ("http://x", "uses the scheme 'http'"),
        ("git://example.com/runtime.git", "uses the scheme 'git'"),
        ("", "the runtime repository URL is empty"),
        ("/tmp/runtime\nx", "control characters"),
    ],
)
def test_bad_runtime_url_is_refused_before_any_git(
    project: Path, run: Callable[..., Result], git_calls: list[list[str]], url: str, complaint: str
) -> None:
    marker = project.parent / "pwned"
    url = url.format(marker=marker)
    result = refused(run, project, E2B_RUNTIME_REPO=url)
    assert "E2B_RUNTIME_REPO: " in result.err and complaint in result.err
    assert "use an https://, ssh:// or file:// URL" in result.err
    assert git_calls == []
    assert not marker.exists()


def test_bad_url_in_pyproject_is_refused(project: Path, run: Callable[..., Result], git_calls: list[list[str]]) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            '"https://github.com/e2b-dev/runtime.git"', '"ext::sh -c touch% /tmp/pwned-codegen-test"'
        )
    )
    result = refused(run, project, E2B_RUNTIME_REPO=None)
    assert "pyproject.toml [tool.codegen]: " in result.err
    assert git_calls == []


# --- bad specs from the upstream, end to end -------------------------------------------


BAD_SPECS: list[tuple[str, Callable[[str], str], str]] = [
    ("malformed", lambda t: t.replace("  /sandboxes:\n", "  /sandboxes: [\n", 1), "spec/openapi.yml:"),
    ("duplicate-key", lambda t: t.replace("openapi: 3.0.3\n", "openapi: 3.0.3\nopenapi: 3.0.3\n", 1), "duplicate"),
    (
        "anchor",
        lambda t: t.replace("    SandboxState:\n", "    SandboxState: &state\n", 1) + "x-alias: *state\n",
        "anchor",
    ),
    ("too-deep", lambda t: t + "x-deep: " + "[" * 80 + "]" * 80 + "\n", "nests deeper than 64 levels"),
    ("too-big", lambda t: t + "x-big: '" + "a" * (5 * 1024 * 1024) + "'\n", "-byte cap"),
    ("swagger-2", lambda t: t.replace("openapi: 3.0.3", "swagger: '2.0'", 1), "not an OpenAPI 3 document"),
    (
        "remote-ref",
        lambda t: t.replace('$ref: "#/components/schemas/NewSandbox"', '$ref: "https://evil.example/x.yml#/A"', 1),
        "https://evil.example/x.yml",
    ),
    (
        "file-ref",
        lambda t: t.replace('$ref: "#/components/schemas/NewSandbox"', '$ref: "/etc/passwd"', 1),
        "/etc/passwd",
    ),
]


@pytest.mark.parametrize(("name", "edit", "complaint"), BAD_SPECS, ids=[b[0] for b in BAD_SPECS])
def test_bad_spec_upstream_is_refused_end_to_end(
    project: Path, upstream: Upstream, run: Callable[..., Result], name: str, edit: Callable[[str], str], complaint: str
) -> None:
    commit = upstream.commit_edit(edit, name)
    result = refused(run, project, E2B_RUNTIME_REF=commit)
    assert "error: " in result.err
    assert complaint in result.err, result.err[-2000:]


# --- units ---------------------------------------------------------------------------


def test_obtain_spec_prefers_the_upstream(
    project: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    monkeypatch.setenv("E2B_RUNTIME_REPO", upstream.url)
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(cache))
    monkeypatch.delenv("E2B_RUNTIME_REF", raising=False)
    fetched = obtain_spec(Project(project), load_source(Project(project)))
    assert fetched.origin == "upstream" and fetched.note is None
    assert fetched.data == (project / "spec/openapi.yml").read_bytes()
    assert list(cache.glob("runtime-*.git"))  # the bare cache, outside the project


def test_missing_lock_with_unreachable_upstream(offline_project: Path, run: Callable[..., Result]) -> None:
    (offline_project / "spec/openapi.lock.json").unlink()
    result = refused(run, offline_project, **OFFLINE)
    assert "the lock is missing" in result.err


def test_git_url_makes_local_paths_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert git_url("runtime") == str(tmp_path / "runtime")
    assert git_url("https://example.com/r.git") == "https://example.com/r.git"
    assert git_url("git@example.com:r.git") == "git@example.com:r.git"


def test_codegen_error_for_bad_pyproject(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.codegen]\nruntime-repo = 3\n")
    with pytest.raises(ToolError, match="runtime-repo must be a non-empty string"):
        load_source(Project(project))


def _commit_entry(upstream: Upstream, mode: str, sha: str, path: str = "spec/openapi.yml") -> str:
    """A commit on main whose `path` is the given index entry (a symlink, a submodule...)."""
    g = upstream.repo.git
    g.rm("-q", "--cached", path)
    g.update_index("--add", "--cacheinfo", f"{mode},{sha},{path}")
    return upstream.repo.index.commit(f"{path} as {mode}", author=PERSON, committer=PERSON, skip_hooks=True).hexsha


def _blob(upstream: Upstream, data: bytes) -> str:
    return str(upstream.repo.odb.store(IStream("blob", len(data), io.BytesIO(data))).hexsha.decode())


@pytest.mark.parametrize(
    ("kind", "complaint"),
    [
        ("symlink", "is a symlink, not a file"),
        ("submodule", "is a submodule, not a file"),
        ("lfs", "is a Git LFS pointer, not the spec"),
        ("directory", "is a directory, not a file"),
        ("parent symlink", "spec is a symlink, not a folder"),
    ],
)
def test_an_upstream_spec_that_is_not_a_file_is_named(
    project: Path, upstream: Upstream, run: Callable[..., Result], kind: str, complaint: str
) -> None:
    if kind == "symlink":
        commit = _commit_entry(upstream, "120000", _blob(upstream, b"../../etc/passwd"))
    elif kind == "submodule":
        commit = _commit_entry(upstream, "160000", upstream.head())
    elif kind == "lfs":
        pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 12\n"
        commit = upstream.commit_bytes(pointer, "to LFS")
    elif kind == "directory":
        upstream.repo.git.rm("-q", "spec/openapi.yml")
        commit = upstream.commit_bytes(b"openapi: 3.0.0\n", "a folder", path="spec/openapi.yml/inner.yml")
    else:
        upstream.repo.git.rm("-q", "-r", "--cached", "spec")
        upstream.repo.git.update_index("--add", "--cacheinfo", f"120000,{_blob(upstream, b'elsewhere')},spec")
        commit = upstream.repo.index.commit("spec as a symlink", author=PERSON, committer=PERSON).hexsha
    result = refused(run, project, E2B_RUNTIME_REF=commit)
    assert complaint in result.err, result.err


# --- a shared cache ------------------------------------------------------------------


def test_a_run_waits_for_the_shared_cache_and_gives_up_naming_the_holder(
    project: Path, upstream: Upstream, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(cache))
    cached = UpstreamRepository(upstream.url)
    with held(cached.lock_path, "test"):
        result = run(project, "check", E2B_CODEGEN_LOCK_TIMEOUT="0.2")
    assert result.code == 2, result.text
    assert f"the cached upstream {cached.lock_path.with_suffix('.git')} is in use by pid" in result.err
    assert "unreachable" not in result.text and "clean" not in result.text


def test_a_git_failure_in_the_cache_is_not_unreachable_and_never_downgrades_the_check(
    project: Path, upstream: Upstream, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(cache))
    cached = UpstreamRepository(upstream.url)
    # What a concurrent fetch outside codegen's lock leaves while it runs: git's own ref lock.
    ref_lock = Path(cached.repo.git_dir) / "refs/upstream/heads/main.lock"
    ref_lock.parent.mkdir(parents=True, exist_ok=True)
    ref_lock.write_text("")
    with unchanged(project):
        result = run(project, "check")
    assert result.code == 2, result.text
    assert f"git fetch from {upstream.url} failed: cannot lock ref 'refs/upstream/heads/main'" in result.err
    assert "unreachable" not in result.text and "codegen: clean" not in result.text
    assert "delete that cached repository" in result.err


def test_a_cached_repository_that_a_first_run_left_empty_is_made_again(
    upstream: Upstream, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm run opens the cache without `git init`; a folder that is not a repository yet gets one."""
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(cache))
    folder = UpstreamRepository(upstream.url).lock_path.with_suffix(".git")
    shutil.rmtree(folder)
    folder.mkdir()  # what an interrupted first run can leave
    reopened = UpstreamRepository(upstream.url)
    assert reopened.repo.bare and Path(reopened.repo.git_dir) == folder
    assert UpstreamRepository(upstream.url).repo.git_dir == reopened.repo.git_dir
    (folder / "config").unlink()  # `git init` writes HEAD first: interrupted, it can leave HEAD alone
    repaired = UpstreamRepository(upstream.url)
    assert (folder / "config").is_file() and repaired.repo.bare


def test_a_cached_repository_that_is_a_file_is_one_line_naming_it(
    project: Path, upstream: Upstream, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(cache))
    folder = UpstreamRepository(upstream.url).lock_path.with_suffix(".git")
    shutil.rmtree(folder)
    folder.write_text("not a repository\n")
    with unchanged(project):
        result = run(project, "generate")
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"codegen: error: {folder}: the cached upstream cannot be used: ")
    assert "delete that cached repository" in result.err and "Traceback" not in result.err
    # GitPython runs git in the current folder when its own is not one: nothing may land there.
    assert not (Path.cwd() / "HEAD").exists() and not (Path.cwd() / "config").exists()


# --- the cached repository is data a hostile hand may have written (issue 31, point 5) ------------------

_PLAIN_GIT = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}


def plain_git(git_dir: Path, *args: str, data: bytes | None = None, env: dict[str, str] | None = None) -> str:
    """git as anyone would run it in the cached repository: replace refs, hooks and its config obeyed."""
    done = subprocess.run(
        ["git", *args],
        env={**os.environ, **_PLAIN_GIT, "GIT_DIR": str(git_dir), **(env or {})},
        input=data,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def cached_repository(project: Path, run: Callable[..., Result], cache: Path) -> Path:
    """The cached bare repository of the per-test upstream, filled by a first (clean) check."""
    first = run(project, "check")
    assert first.code == 0, first.text
    (repository,) = cache.glob("runtime-*.git")
    return repository


def forge_pinned_commit(repository: Path, forged_spec: bytes) -> str:
    """`git replace` the pin, in the cached repository, by a commit whose spec is `forged_spec`."""
    blob = plain_git(repository, "hash-object", "-w", "--stdin", data=forged_spec)
    index = {"GIT_INDEX_FILE": str(repository / "forged.index")}
    plain_git(repository, "read-tree", PIN, env=index)
    plain_git(repository, "update-index", "--cacheinfo", f"100644,{blob},spec/openapi.yml", env=index)
    tree = plain_git(repository, "write-tree", env=index)
    (repository / "forged.index").unlink()
    person = {
        "GIT_AUTHOR_NAME": "x",
        "GIT_AUTHOR_EMAIL": "x@x",
        "GIT_COMMITTER_NAME": "x",
        "GIT_COMMITTER_EMAIL": "x@x",
    }
    forged = plain_git(repository, "commit-tree", tree, "-p", f"{PIN}^", "-m", "forged", env=person)
    plain_git(repository, "replace", PIN, forged)
    # Anyone's git now reads the forged spec at the pin.
    assert plain_git(repository, "show", f"{PIN}:spec/openapi.yml").encode() == forged_spec.rstrip(b"\n")
    return forged


@pytest.mark.parametrize("no_cache", [True, False], ids=["--no-cache", "cached"])
def test_a_replaced_pin_in_the_cache_vouches_for_nothing(
    project: Path,
    run: Callable[..., Result],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_cache: bool,
) -> None:
    """A hand-edited spec with its lock rewritten, against a cache whose pin was `git replace`d to match it."""
    from codegen.upstream.spec_lock import git_blob_id

    forged_spec = (project / "spec/openapi.yml").read_bytes() + b"# forged\n"
    repository = cached_repository(project, run, cache)
    forge_pinned_commit(repository, forged_spec)
    # The pull request: the tree a generation from the forged spec writes (spec, lock, manifest).
    read = UpstreamRepository.read_regular_file

    def forged_read(self: UpstreamRepository, commit: str, path: str) -> tuple[bytes, str] | str | None:
        return (forged_spec, git_blob_id(forged_spec)) if path == "spec/openapi.yml" else read(self, commit, path)

    with monkeypatch.context() as forged:
        forged.setattr(UpstreamRepository, "read_regular_file", forged_read)
        assert run(project, "generate", "--no-cache").code == 0
        git_repo(project).git.checkout("-q", "-b", "pr")
        commit_all(project, "hand-edited spec, lock rewritten")
        # What the check answered when it read the pin through the replace ref.
        assert run(project, "check", "--base", "main", "--no-cache").code == 0
    args = ("check", "--base", "main", *(("--no-cache",) if no_cache else ()))
    with unchanged(project):
        result = run(project, *args)
    assert result.code == 1, result.text
    assert "hand-edited spec spec/openapi.yml" in result.out, result.text


def test_a_hook_in_the_cached_repository_never_runs(
    project: Path, upstream: Upstream, run: Callable[..., Result], cache: Path, tmp_path: Path
) -> None:
    repository = cached_repository(project, run, cache)
    marker = tmp_path / "hook-ran"
    hook = repository / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o700)
    # It is a hook git runs on a fetch that moves a ref...
    plain_git(repository, "update-ref", "refs/probe", PIN)
    assert marker.exists()
    marker.unlink()
    # ...and codegen's fetches move one: the upstream gained a commit.
    upstream.commit_edit(lambda text: text + "# a later commit\n")
    for args in (("check",), ("generate",), ("check", "--no-cache")):
        result = run(project, *args)
        assert result.code == 0, result.text
        assert not marker.exists(), args


def test_the_cached_repositorys_config_is_codegens_own(
    project: Path, run: Callable[..., Result], cache: Path, tmp_path: Path
) -> None:
    """A config that redirects the fetch (`url.<x>.insteadOf`, also through `include.path`) is replaced, not obeyed."""
    repository = cached_repository(project, run, cache)
    canonical = (repository / "config").read_bytes()
    empty = tmp_path / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True, env={**os.environ, **_PLAIN_GIT})
    (tmp_path / "included").write_text(f'[url "{empty}"]\n\tinsteadOf = {tmp_path / "runtime"}\n')
    (repository / "config").write_bytes(
        canonical
        + f"[include]\n\tpath = {tmp_path / 'included'}\n[core]\n\tfsmonitor = touch {tmp_path / 'x'}\n".encode()
    )
    assert plain_git(repository, "config", f"url.{empty}.insteadOf") == str(tmp_path / "runtime")
    result = run(project, "check")
    assert result.code == 0, result.text
    assert (repository / "config").read_bytes() == canonical
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("objects/info/alternates", "/elsewhere/objects\n"),
        ("info/grafts", f"{PIN}\n"),
        ("shallow", f"{PIN}\n"),
    ],
)
def test_a_cached_repository_with_what_codegen_never_writes_is_refused(
    project: Path, run: Callable[..., Result], cache: Path, name: str, content: str
) -> None:
    repository = cached_repository(project, run, cache)
    (repository / name).parent.mkdir(exist_ok=True)
    (repository / name).write_text(content)
    with unchanged(project):
        result = run(project, "check")
    assert result.code == 2, result.text
    assert f"the cached upstream holds {name}, which codegen never writes" in result.err
    assert "delete that cached repository" in result.err and "clean" not in result.out


@pytest.mark.parametrize("verb", [("check", "--no-cache"), ("generate", "--no-cache")])
def test_no_cache_fetches_into_a_fresh_repository_and_leaves_none(
    project: Path, run: Callable[..., Result], cache: Path, verb: tuple[str, ...]
) -> None:
    result = run(project, *verb)
    assert result.code == 0, result.text
    assert "upstream " in result.err  # fetched from the upstream, not the offline fallback
    assert not list(cache.glob("runtime-*")) and not list((cache / "scratch").iterdir())


def test_command_line_config_from_the_environment_is_kept_beside_codegens(monkeypatch: pytest.MonkeyPatch) -> None:
    """bump.yml hands git its token as GIT_CONFIG_COUNT entries: codegen's own come after them, not over them."""
    from codegen.upstream.fetch import _git_env

    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "http.https://github.com/e2b-dev/runtime.git.extraheader")
    env = _git_env(Path("/cache/runtime.git"))
    assert "GIT_CONFIG_KEY_0" not in env and env["GIT_CONFIG_COUNT"] == "4"
    assert [env[f"GIT_CONFIG_KEY_{i}"] for i in (1, 2, 3)] == [
        "core.hooksPath",
        "core.fsmonitor",
        "core.sharedRepository",
    ]
    assert env["GIT_DIR"] == "/cache/runtime.git" and env["GIT_NO_REPLACE_OBJECTS"] == "1"
