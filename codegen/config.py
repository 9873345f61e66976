"""Where the spec comes from: `[tool.codegen]`, `spec/runtime-ref` and the environment.

How it works, and why: docs/maintainers/design.md, "codegen/config.py".
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR, PYPROJECT, RUNTIME_REF, SPEC, Project

RUNTIME_REPO_ENV = "E2B_RUNTIME_REPO"
RUNTIME_REF_ENV = "E2B_RUNTIME_REF"

FULL_COMMIT = re.compile(r"[0-9a-f]{40}")
# scp-like ssh syntax: user@host:path (no "::", which would name a remote helper)
_SCP_LIKE = re.compile(r"[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!:)[^\s]+")
_ALLOWED_SCHEMES = ("https://", "ssh://", "file://")
# envd-files: plain names (as the runtime's history allows), under ENVD_DIR, a proto or the HTTP API's YAML.
_PLAIN_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
ENVD_SUFFIXES = (".proto", ".yaml", ".yml")
MAX_ENVD_FILES = 16
# The tools whose versions the manifest records: the control plane's generators and formatter, then
# envd's protoc (grpcio-tools) and its two plugins.
TOOLCHAIN = (
    "openapi-python-client",
    "datamodel-code-generator",
    "ruff",
    "grpcio-tools",
    "protoc-gen-py",
    "protoc-gen-connectrpc",
)


@dataclass(frozen=True)
class Settings:
    """`[tool.codegen]`, validated."""

    runtime_repo: str
    runtime_branch: str
    spec_path: str
    sdk_tags: tuple[str, ...]
    envd_files: tuple[str, ...] = ()  # the data plane's files, synced at the pin beside spec-path

    def differences(self, other: Settings) -> tuple[str, ...]:
        """The keys whose values differ from `other`'s, in the table's order."""
        keys = ("runtime-repo", "runtime-branch", "spec-path", "sdk-tags", "envd-files")
        mine = (self.runtime_repo, self.runtime_branch, self.spec_path, self.sdk_tags, self.envd_files)
        theirs = (other.runtime_repo, other.runtime_branch, other.spec_path, other.sdk_tags, other.envd_files)
        return tuple(key for key, a, b in zip(keys, mine, theirs, strict=True) if a != b)


class PinFrom(enum.Enum):
    """Where the commit to generate from came from; its value is where a problem with it is."""

    RUNTIME_REF = RUNTIME_REF  # the pin
    ENV = RUNTIME_REF_ENV  # an override that differs from the pin
    BUMP = "the bump's ref"  # the commit bump resolved and will pin


class UpstreamFrom(enum.Enum):
    """Where the runtime repository's URL came from; its value is where a problem with it is."""

    TREE = "pyproject.toml [tool.codegen] runtime-repo"
    BASE = "the base revision's [tool.codegen] runtime-repo"  # the check reads the base's
    ENV = RUNTIME_REPO_ENV


@dataclass(frozen=True)
class Source:
    """The upstream runtime repository, the commit to read, and where the spec is in it."""

    url: str  # what to fetch from (the configured URL, the base's, or the override)
    configured_url: str  # the tree's upstream, recorded in the lock
    branch: str  # the tree's branch, recorded in the lock
    spec_path: str
    commit: str
    sdk_tags: tuple[str, ...]
    pin_from: PinFrom = PinFrom.RUNTIME_REF
    envd_files: tuple[str, ...] = ()  # synced from the same commit, each to the same path here
    upstream_from: UpstreamFrom = UpstreamFrom.TREE
    # The check: the base revision's runtime-branch, which the pin must be reachable from.
    base_branch: str | None = None
    base_notes: tuple[str, ...] = ()  # what the base changed, for the output

    @property
    def short_commit(self) -> str:
        return self.commit[:7]

    @property
    def pin_where(self) -> str:
        """Where a problem with the commit is: the file bump writes counts as the pin."""
        return RUNTIME_REF if self.pin_from is PinFrom.BUMP else self.pin_from.value

    @property
    def verified_branch(self) -> str:
        """The branch fetched and every pin checked against: the base's in the check, else the tree's."""
        return self.base_branch or self.branch

    def notes(self) -> list[str]:
        """What the environment and the base changed, so that the output can say so."""
        said = list(self.base_notes)
        if self.upstream_from is UpstreamFrom.ENV and self.url != self.configured_url:
            said.append(f"{RUNTIME_REPO_ENV} overrides the runtime repository: {self.url}")
        if self.pin_from is PinFrom.ENV:
            said.append(
                f"{RUNTIME_REF_ENV} overrides spec/runtime-ref: generating from {self.commit}; "
                "the pin is unchanged, so the generated-files check will fail until you bump"
            )
        return said


def check_url(url: str, *, origin: str) -> str:
    """Accept https, ssh (URL or scp-like), file URLs and local paths; refuse the rest."""
    problem = None
    if not url:
        problem = "the runtime repository URL is empty"
    elif url.startswith("-"):
        problem = f"the runtime repository URL {url!r} starts with '-' and would be read as an option"
    elif any(c in url for c in "\0\n\r") or not url.isprintable():
        problem = "the runtime repository URL contains control characters"
    elif "::" in url:
        # <transport>::<address> runs git-remote-<transport>; ext:: runs any command.
        problem = f"the runtime repository URL {url!r} names a git remote helper ('::')"
    elif re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url):
        if not url.startswith(_ALLOWED_SCHEMES):
            scheme = url.split("://", 1)[0]
            problem = f"the runtime repository URL uses the scheme {scheme!r}"
    elif _SCP_LIKE.fullmatch(url):
        pass
    elif ":" in url.split("/", 1)[0]:
        # git reads `host:path` as ssh, Path as a local folder named `host:`; `https:/host/...`
        # (one slash) is a look-alike of a URL whatever folder the tree may hold.
        problem = f"the runtime repository URL {url!r} is neither a URL nor a local path (a ':' before the first '/')"
    if problem:
        raise ToolError(
            Problem(
                problem,
                where=origin,
                remedy="use an https://, ssh:// or file:// URL, user@host:path, or a local path",
            )
        )
    return url


def check_commit(ref: str, *, origin: str) -> str:
    if not FULL_COMMIT.fullmatch(ref):
        shown = ref if ref.isprintable() and len(ref) <= 80 else repr(ref[:80])
        raise ToolError(
            Problem(
                f"{shown!r} is not a full commit id (40 lowercase hex digits)" if ref else "the pin is empty",
                where=origin,
                remedy="pin a full runtime commit id; move it with `nox -s bump -- <ref>`",
            )
        )
    return ref


def read_pin(project: Project) -> str:
    path = project.runtime_ref
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ToolError(
            Problem(
                f"{RUNTIME_REF} is missing",
                remedy="restore it from git, or pin a commit with `nox -s bump -- <ref>`",
            )
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(Problem(f"cannot read {RUNTIME_REF}: {exc}")) from None
    return check_commit(text.strip(), origin=RUNTIME_REF)


def read_settings(text: str, project: Project, *, where: str = PYPROJECT) -> Settings:
    """`[tool.codegen]` from a pyproject.toml's text, every value checked before git sees it."""
    import tomllib  # here, not at the top: `generate` starts its generators before it reads settings

    try:
        table = tomllib.loads(text)["tool"]["codegen"]
        if not isinstance(table, dict):
            raise TypeError("[tool.codegen] is not a table")
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise ToolError(Problem(f"cannot read [tool.codegen]: {exc}", where=where)) from None

    def setting(key: str, default: str | None = None) -> str:
        value = table.get(key, default)
        if not isinstance(value, str) or not value:
            raise ToolError(Problem(f"[tool.codegen] {key} must be a non-empty string", where=where))
        return value

    origin = f"{where} [tool.codegen]"
    runtime_repo = refuse_inside_tree(check_url(setting("runtime-repo"), origin=origin), project, origin=origin)
    branch = setting("runtime-branch", "main")
    if branch.startswith("-") or not re.fullmatch(r"[A-Za-z0-9._/-]+", branch) or ".." in branch:
        raise ToolError(Problem(f"runtime-branch {branch!r} is not a plain branch name", where=where))
    spec_path = setting("spec-path", SPEC)
    if spec_path.startswith(("/", "-")) or ".." in spec_path.split("/"):
        raise ToolError(Problem(f"spec-path {spec_path!r} must be a relative path", where=where))
    tags = table.get("sdk-tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
        raise ToolError(Problem("[tool.codegen] sdk-tags must be a list of tag names", where=where))
    return Settings(runtime_repo, branch, spec_path, tuple(tags), _envd_files(table.get("envd-files", []), where))


def _envd_files(files: object, where: str) -> tuple[str, ...]:
    """`envd-files`: where each envd file is in the runtime repository, which is where it is synced to here.

    Under ENVD_DIR, of plain names (no `..`, no `.git`, nothing git or a shell could misread), not
    under `google/` (protoc would read such a file for a well-known type), one HTTP API YAML at most.
    """

    def refuse(why: str) -> ToolError:
        return ToolError(
            Problem(
                f"[tool.codegen] envd-files {why}",
                where=where,
                remedy=f"list the envd files' paths in the runtime repository, each under {ENVD_DIR}/",
            )
        )

    if not isinstance(files, list) or len(files) > MAX_ENVD_FILES or not all(isinstance(f, str) for f in files):
        raise refuse(f"must be a list of at most {MAX_ENVD_FILES} paths")
    for path in files:
        parts = path.split("/")
        plain = all(_PLAIN_PART.fullmatch(p) for p in parts) and ".git" not in {p.lower() for p in parts}
        if not plain or not path.startswith(ENVD_DIR + "/") or not path.endswith(ENVD_SUFFIXES):
            shown = path if path.isprintable() and len(path) <= 200 else repr(path[:200])
            raise refuse(f"names {shown!r}: not a {', '.join(ENVD_SUFFIXES)} file of plain names under {ENVD_DIR}/")
        if parts[2] == "google":
            raise refuse(f"names {path!r}: {ENVD_DIR}/google/ would shadow protoc's well-known types")
    if len(set(files)) != len(files):
        raise refuse("names a file twice")
    if sum(not f.endswith(".proto") for f in files) > 1:
        raise refuse("names more than one YAML file (envd has one HTTP API)")
    return tuple(files)


def load_settings(project: Project) -> Settings:
    """The tree's `[tool.codegen]` (never through a symlink)."""
    if project.pyproject.is_symlink():
        raise ToolError(
            Problem(
                "pyproject.toml is a symlink; codegen never reads through one",
                where=PYPROJECT,
                remedy="replace it with the regular file from git",
            )
        )
    try:
        text = project.pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(Problem(f"cannot read [tool.codegen]: {exc}", where=PYPROJECT)) from None
    return read_settings(text, project)


def refuse_inside_tree(url: str, project: Project, *, origin: str) -> str:
    """A local runtime repository must lie outside the working tree and every checkout of its repository.

    The path is the one git would use (`local_path`).  A relative path is tried
    against the project's root and the current folder (git resolves it against
    the latter): either inside is refused.  So is the repository's git
    directory, and, for a linked worktree, the main checkout and the other
    worktrees: each holds the same commits, which the change under review can add.
    """
    path = local_path(url)
    if path is None:
        return url
    root = project.root.resolve()
    guarded = [root, *_same_repository(root)]
    candidates = {(base / Path(path).expanduser()).resolve() for base in (root, Path.cwd())}
    for candidate in candidates:
        if any(candidate.is_relative_to(folder) for folder in guarded):
            raise ToolError(
                Problem(
                    f"the runtime repository {url!r} resolves inside this repository ({candidate}): "
                    "whatever commits there would vouch for itself",
                    where=origin,
                    remedy="point runtime-repo at the runtime's own repository (E2B_RUNTIME_REPO may name a "
                    "local mirror or checkout outside this tree)",
                )
            )
    return url


def local_path(url: str) -> str | None:
    """The local folder git reads for `url`, or None for a remote URL.

    As git reads a `file://` URL: the host part dropped (`file://localhost/x`
    is `/x`) and percent-escapes decoded (`file:///%2Fwork` is `//work`).
    Leading slashes are folded into one: POSIX may keep `//work` apart from
    `/work`, so `Path` does, but Linux reads both as `/work`.
    """
    if url.startswith("file://"):
        rest = url.removeprefix("file://")
        path = unquote(rest[rest.index("/") :]) if "/" in rest else ""
    elif "://" in url or _SCP_LIKE.fullmatch(url):
        return None
    else:
        path = url
    return "/" + path.lstrip("/") if path.startswith("/") else path


def _same_repository(root: Path) -> list[Path]:
    """The folders holding the repository of the checkout at `root`, or another checkout of it.

    Its git directory (a linked worktree's `.git` file names one outside the
    tree), the common directory it shares with the main checkout, the main
    checkout itself and every linked worktree the common directory lists.
    """
    found: list[Path] = []
    dot_git = root / ".git"
    try:
        named = _small_text(dot_git)
        if named is not None:
            git_dir = (root / named.removeprefix("gitdir:").strip()).resolve()
        elif dot_git.is_dir() and not dot_git.is_symlink():
            git_dir = dot_git.resolve()
        else:
            return found
        found.append(git_dir)
        common_text = _small_text(git_dir / "commondir")
        common = (git_dir / common_text).resolve() if common_text else git_dir
        found.append(common)
        if common.name == ".git":
            found.append(common.parent)  # the main checkout
        worktrees = common / "worktrees"
        for worktree in sorted(worktrees.iterdir()) if worktrees.is_dir() else ():
            dot_git_file = _small_text(worktree / "gitdir")  # the path of that worktree's `.git` file
            if dot_git_file:
                found.append(Path(dot_git_file).resolve().parent)
    except (OSError, RuntimeError, ValueError):
        pass  # what was found so far is still guarded
    return found


def _small_text(path: Path) -> str | None:
    """A regular file's text, stripped (a `.git` file, `commondir`, `gitdir`); None when it is not one."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def load_source(project: Project, *, commit: str | None = None, base: Settings | None = None) -> Source:
    """Resolve the source from pyproject.toml, the pin (or `commit`) and the environment.

    With `base` (the check, the base revision's settings) the spec is fetched
    from the base's runtime-repo and the pin must be reachable from the base's
    runtime-branch; what the lock records and what is generated stay the tree's.
    """
    settings = load_settings(project)
    url = base.runtime_repo if base is not None else settings.runtime_repo
    base_notes: list[str] = []
    upstream_from = UpstreamFrom.TREE
    env_url = os.environ.get(RUNTIME_REPO_ENV)
    if env_url is not None:
        url, upstream_from = check_url(env_url, origin=RUNTIME_REPO_ENV), UpstreamFrom.ENV
    elif base is not None and base.runtime_repo != settings.runtime_repo:
        upstream_from = UpstreamFrom.BASE
        base_notes.append(
            f"[tool.codegen] runtime-repo differs from the base revision's: fetching from the base's {url}"
        )
    if base is not None and base.runtime_branch != settings.runtime_branch:
        base_notes.append(
            f"[tool.codegen] runtime-branch differs from the base revision's: "
            f"the pin must be reachable from the base's {base.runtime_branch!r}"
        )
    env_ref = os.environ.get(RUNTIME_REF_ENV)
    pin_from = PinFrom.RUNTIME_REF
    if commit is None and env_ref is not None:
        commit = check_commit(env_ref.strip(), origin=RUNTIME_REF_ENV)
        if commit != _pin_or_none(project):
            pin_from = PinFrom.ENV
    if commit is None:
        commit = read_pin(project)
    return Source(
        url=url,
        configured_url=settings.runtime_repo,
        branch=settings.runtime_branch,
        spec_path=settings.spec_path,
        commit=commit,
        sdk_tags=settings.sdk_tags,
        pin_from=pin_from,
        envd_files=settings.envd_files,
        upstream_from=upstream_from,
        base_branch=base.runtime_branch if base is not None else None,
        base_notes=tuple(base_notes),
    )


def _pin_or_none(project: Project) -> str | None:
    try:
        return read_pin(project)
    except ToolError:
        return None
