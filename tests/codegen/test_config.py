"""config: the allow-lists that guard everything user-supplied before it reaches git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codegen.config import PinFrom, Settings, UpstreamFrom, check_commit, check_url, load_source, read_pin
from tests.codegen.conftest import PIN
from toolkit.errors import ToolError
from toolkit.paths import Project

GOOD_URLS = [
    "https://github.com/e2b-dev/runtime.git",
    "ssh://git@github.com/e2b-dev/runtime.git",
    "file:///srv/runtime.git",
    "git@github.com:e2b-dev/runtime.git",
    "/srv/runtime",
    "relative/runtime",
]
BAD_URLS = [
    ("ext::sh -c touch% /tmp/pwned", "remote helper"),
    ("fd::17", "remote helper"),
    ("foo::bar", "remote helper"),
    ("git@host::path", "remote helper"),
    ("-uhack", "starts with '-'"),
    ("http://x", "scheme 'http'"),
    ("ftp://x/y", "scheme 'ftp'"),
    ("", "empty"),
    ("/srv/runtime\0", "control characters"),
    ("https://x/\u200b", "control characters"),
    ("c:foo", "neither a URL nor a local path"),
    ("https:/github.com/e2b-dev/runtime.git", "a ':' before the first '/'"),  # one slash: a look-alike
    ("https:github.com/e2b-dev/runtime.git", "a ':' before the first '/'"),
    ("vendor:/runtime.git", "a ':' before the first '/'"),
]


@pytest.mark.parametrize("url", GOOD_URLS)
def test_good_urls(url: str) -> None:
    assert check_url(url, origin="test") == url


@pytest.mark.parametrize(("url", "why"), BAD_URLS)
def test_bad_urls(url: str, why: str) -> None:
    with pytest.raises(ToolError, match=why) as caught:
        check_url(url, origin="E2B_RUNTIME_REPO")
    assert caught.value.problems[0].where == "E2B_RUNTIME_REPO"


@pytest.mark.parametrize("ref", ["", "HEAD", PIN[:7], PIN.upper(), f"-{PIN[1:]}", PIN + "\n", "g" * 40])
def test_check_commit_refuses_anything_but_a_full_id(ref: str) -> None:
    with pytest.raises(ToolError):
        check_commit(ref, origin="spec/runtime-ref")


def write_pyproject(root: Path, body: str) -> Project:
    (root / "spec").mkdir(parents=True, exist_ok=True)
    (root / "spec" / "runtime-ref").write_text(PIN + "\n")
    (root / "pyproject.toml").write_text("[tool.codegen]\n" + body)
    return Project(root)


BASE = 'runtime-repo = "https://example.com/r.git"\nsdk-tags = ["sandboxes"]\n'


def test_load_source_defaults_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("E2B_RUNTIME_REPO", "E2B_RUNTIME_REF"):
        monkeypatch.delenv(key, raising=False)
    project = write_pyproject(tmp_path, BASE)
    source = load_source(project)
    assert (source.url, source.branch, source.spec_path, source.commit) == (
        "https://example.com/r.git",
        "main",
        "spec/openapi.yml",
        PIN,
    )
    assert source.notes() == []
    monkeypatch.setenv("E2B_RUNTIME_REPO", "/srv/mirror")
    monkeypatch.setenv("E2B_RUNTIME_REF", "a" * 40)
    source = load_source(project)
    assert source.url == "/srv/mirror" and source.configured_url == "https://example.com/r.git"
    assert source.commit == "a" * 40
    notes = source.notes()
    assert "E2B_RUNTIME_REPO overrides" in notes[0] and "E2B_RUNTIME_REF overrides" in notes[1]
    # an explicit commit (bump) wins over the environment
    assert load_source(project, commit=PIN).commit == PIN


def test_the_source_says_where_its_commit_and_upstream_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("E2B_RUNTIME_REPO", "E2B_RUNTIME_REF"):
        monkeypatch.delenv(key, raising=False)
    project = write_pyproject(tmp_path, BASE)
    source = load_source(project)
    assert (source.pin_from, source.upstream_from, source.pin_where) == (
        PinFrom.RUNTIME_REF,
        UpstreamFrom.TREE,
        "spec/runtime-ref",
    )
    base = Settings("https://example.com/base.git", "main", "spec/openapi.yml", ("sandboxes",))
    from_base = load_source(project, base=base)
    assert (from_base.url, from_base.upstream_from) == ("https://example.com/base.git", UpstreamFrom.BASE)
    monkeypatch.setenv("E2B_RUNTIME_REF", PIN)  # the pin itself: no override to speak of
    assert load_source(project).pin_from is PinFrom.RUNTIME_REF
    monkeypatch.setenv("E2B_RUNTIME_REF", "a" * 40)
    monkeypatch.setenv("E2B_RUNTIME_REPO", "https://example.com/r.git")  # the configured URL: still the environment
    overridden = load_source(project, base=base)
    assert (overridden.pin_from, overridden.pin_where) == (PinFrom.ENV, "E2B_RUNTIME_REF")
    assert overridden.upstream_from is UpstreamFrom.ENV
    assert not any("E2B_RUNTIME_REPO overrides" in note for note in overridden.notes())  # it names the same URL


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ('runtime-branch = "-x"\n', "not a plain branch name"),
        ('runtime-branch = "a..b"\n', "not a plain branch name"),
        ('runtime-branch = "main branch"\n', "not a plain branch name"),
        ('spec-path = "/etc/passwd"\n', "must be a relative path"),
        ('spec-path = "../x.yml"\n', "must be a relative path"),
        ('spec-path = ""\n', "must be a non-empty string"),
    ],
)
def test_load_source_refuses_bad_settings(tmp_path: Path, extra: str, why: str) -> None:
    project = write_pyproject(tmp_path, BASE + extra)
    with pytest.raises(ToolError, match=why):
        load_source(project)


def test_load_source_refuses_bad_tags_and_missing_table(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="sdk-tags"):
        load_source(write_pyproject(tmp_path, 'runtime-repo = "https://example.com/r.git"\nsdk-tags = []\n'))
    (tmp_path / "pyproject.toml").write_text("[tool.other]\n")
    with pytest.raises(ToolError, match=r"cannot read \[tool.codegen\]"):
        load_source(Project(tmp_path))


def test_read_pin(tmp_path: Path) -> None:
    project = write_pyproject(tmp_path, BASE)
    assert read_pin(project) == PIN
    (tmp_path / "spec" / "runtime-ref").write_bytes(b"\xff\xfe")
    with pytest.raises(ToolError, match="cannot read spec/runtime-ref"):
        read_pin(project)
    (tmp_path / "spec" / "runtime-ref").unlink()
    with pytest.raises(ToolError, match="spec/runtime-ref is missing"):
        read_pin(project)


def test_a_scheme_look_alike_is_refused_even_when_the_tree_holds_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "https:" / "github.com" / "e2b-dev" / "runtime.git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ToolError, match="neither a URL nor a local path"):
        check_url("https:/github.com/e2b-dev/runtime.git", origin="pyproject.toml [tool.codegen]")


@pytest.mark.parametrize(
    "url",
    ["vendor/runtime.git", ".", "./", ".git", "spec/../vendor/r.git", "{root}", "{root}/vendor", "file://{root}/v.git"],
)
def test_a_runtime_repo_inside_the_tree_is_refused(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_RUNTIME_REPO", raising=False)
    root = tmp_path / "project"
    project = write_pyproject(root, BASE.replace("https://example.com/r.git", url.format(root=root)))
    monkeypatch.chdir(tmp_path)  # relative paths are tried against the root and the current folder
    with pytest.raises(ToolError, match="resolves inside this repository") as caught:
        load_source(project)
    assert caught.value.problems[0].where == "pyproject.toml [tool.codegen]"


def test_a_relative_runtime_repo_is_refused_when_the_current_folder_puts_it_inside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    project = write_pyproject(root, BASE.replace("https://example.com/r.git", "../x.git"))
    monkeypatch.chdir(root / "spec")  # git resolves it against the current folder: project/x.git
    with pytest.raises(ToolError, match="resolves inside this repository"):
        load_source(project)


def test_a_worktrees_git_directory_counts_as_inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_RUNTIME_REPO", raising=False)
    common = tmp_path / "main" / ".git"
    (common / "worktrees" / "wt").mkdir(parents=True)
    (common / "worktrees" / "wt" / "commondir").write_text("../..\n")
    root = tmp_path / "wt"
    (root).mkdir()
    (root / ".git").write_text(f"gitdir: {common / 'worktrees' / 'wt'}\n")
    project = write_pyproject(root, BASE.replace("https://example.com/r.git", str(common)))
    with pytest.raises(ToolError, match="resolves inside this repository"):
        load_source(project)


@pytest.mark.parametrize(
    "spelled",
    [
        "file:///%2F{path}",  # git decodes %2F: the path `//<root>`, which Linux reads as `/<root>`
        "file://{root_escaped}",
        "file://localhost{root}",  # git drops the host part
        "file:////{path}",
        "//{path}",
        "///{path}/spec/..",
    ],
)
def test_a_runtime_repo_spelled_to_look_outside_the_tree_is_refused(
    tmp_path: Path, spelled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As git reads the URL: percent-escapes decoded, a file URL's host dropped, leading slashes folded."""
    monkeypatch.delenv("E2B_RUNTIME_REPO", raising=False)
    root = tmp_path / "project"
    url = spelled.format(
        path=str(root).lstrip("/"), root=root, root_escaped=str(root).replace("/project", "/%70r%6Fject")
    )
    project = write_pyproject(root, BASE.replace("https://example.com/r.git", url))
    with pytest.raises(ToolError, match="resolves inside this repository"):
        load_source(project)


def _git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    env.update(
        {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    )
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def worktrees(tmp_path: Path) -> dict[str, Path]:
    """A real repository (main) with two linked worktrees (wt, other)."""
    main = tmp_path / "main"
    main.mkdir()
    _git("init", "-q", "-b", "main", cwd=main)
    _git("commit", "-q", "--allow-empty", "-m", "x", cwd=main)
    _git("worktree", "add", "-q", "-b", "wt", str(tmp_path / "wt"), cwd=main)
    _git("worktree", "add", "-q", "-b", "other", str(tmp_path / "other"), cwd=main)
    return {"main": main, "wt": tmp_path / "wt", "other": tmp_path / "other"}


@pytest.mark.parametrize(
    ("checkout", "names"),
    [("wt", "main"), ("wt", "other"), ("main", "wt"), ("wt", "main/.git"), ("other", "wt/.git")],
)
def test_every_checkout_of_the_repository_counts_as_inside(
    worktrees: dict[str, Path], checkout: str, names: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A linked worktree's main checkout (and its siblings) hold the same commits, which the change can add."""
    monkeypatch.delenv("E2B_RUNTIME_REPO", raising=False)
    first, _, rest = names.partition("/")
    target = worktrees[first] / rest if rest else worktrees[first]
    project = write_pyproject(worktrees[checkout], BASE.replace("https://example.com/r.git", str(target)))
    with pytest.raises(ToolError, match="resolves inside this repository"):
        load_source(project)


def test_a_runtime_repo_beside_the_tree_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_RUNTIME_REPO", raising=False)
    root = tmp_path / "project"
    project = write_pyproject(root, BASE.replace("https://example.com/r.git", "../runtime"))
    monkeypatch.chdir(root)
    assert load_source(project).url == "../runtime"


def test_a_symlinked_pyproject_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("[tool.codegen]\n" + BASE)
    root = tmp_path / "project"
    write_pyproject(root, BASE)
    (root / "pyproject.toml").unlink()
    (root / "pyproject.toml").symlink_to(outside)
    with pytest.raises(ToolError, match=r"pyproject\.toml is a symlink"):
        load_source(Project(root))
