"""Where the spec comes from: `[tool.codegen]`, `spec/runtime-ref` and the environment.

Everything user-supplied that later reaches git (the runtime URL, the ref) is
checked here, before any git call, against an allow-list.  GitPython's own
guard is a deny-list that has been bypassed many times (CVE-2022-24439 and its
successors), so it is a second line of defence, not the first.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from codegen.errors import CodegenError, Problem

RUNTIME_REPO_ENV = "E2B_RUNTIME_REPO"
RUNTIME_REF_ENV = "E2B_RUNTIME_REF"

FULL_COMMIT = re.compile(r"[0-9a-f]{40}")
# scp-like ssh syntax: user@host:path (no "::", which would name a remote helper)
_SCP_LIKE = re.compile(r"[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!:)[^\s]+")
_ALLOWED_SCHEMES = ("https://", "ssh://", "file://")


@dataclass(frozen=True)
class Project:
    """The paths this repository owns, relative to its root."""

    root: Path

    @property
    def spec(self) -> Path:
        return self.root / "spec" / "openapi.yml"

    @property
    def runtime_ref(self) -> Path:
        return self.root / "spec" / "runtime-ref"

    @property
    def lock(self) -> Path:
        return self.root / "spec" / "openapi.lock.json"

    @property
    def manifest(self) -> Path:
        return self.root / "spec" / "generated-files.json"

    @property
    def contract(self) -> Path:
        return self.root / "spec" / "contract.yml"

    @property
    def operations(self) -> Path:
        return self.root / "spec" / "operations.yml"

    @property
    def templates(self) -> Path:
        return self.root / "templates"

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


@dataclass(frozen=True)
class Source:
    """The upstream runtime repository, the commit to read, and where the spec is in it."""

    url: str  # what to fetch from (the configured URL, or the override)
    configured_url: str  # the canonical upstream, recorded in the lock
    branch: str
    spec_path: str
    commit: str
    sdk_tags: tuple[str, ...]
    url_overridden: bool = False
    ref_overridden: bool = False

    @property
    def short_commit(self) -> str:
        return self.commit[:7]

    def notes(self) -> list[str]:
        """What the environment changed, so that the output can say so."""
        said = []
        if self.url_overridden:
            said.append(f"{RUNTIME_REPO_ENV} overrides the runtime repository: {self.url}")
        if self.ref_overridden:
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
    elif ":" in url.split("/", 1)[0] and not Path(url).exists():
        problem = f"the runtime repository URL {url!r} is neither a URL nor a local path"
    if problem:
        raise CodegenError(
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
        raise CodegenError(
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
        raise CodegenError(
            Problem(
                "spec/runtime-ref is missing",
                remedy="restore it from git, or pin a commit with `nox -s bump -- <ref>`",
            )
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CodegenError(Problem(f"cannot read spec/runtime-ref: {exc}")) from None
    return check_commit(text.strip(), origin="spec/runtime-ref")


def load_source(project: Project, *, commit: str | None = None) -> Source:
    """Resolve the source from pyproject.toml, the pin (or `commit`) and the environment."""
    pyproject = project.root / "pyproject.toml"
    try:
        table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["codegen"]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise CodegenError(Problem(f"cannot read [tool.codegen]: {exc}", where="pyproject.toml")) from None

    def setting(key: str, default: str | None = None) -> str:
        value = table.get(key, default)
        if not isinstance(value, str) or not value:
            raise CodegenError(Problem(f"[tool.codegen] {key} must be a non-empty string", where="pyproject.toml"))
        return value

    configured = check_url(setting("runtime-repo"), origin="pyproject.toml [tool.codegen]")
    branch = setting("runtime-branch", "main")
    if branch.startswith("-") or not re.fullmatch(r"[A-Za-z0-9._/-]+", branch) or ".." in branch:
        raise CodegenError(Problem(f"runtime-branch {branch!r} is not a plain branch name", where="pyproject.toml"))
    spec_path = setting("spec-path", "spec/openapi.yml")
    if spec_path.startswith(("/", "-")) or ".." in spec_path.split("/"):
        raise CodegenError(Problem(f"spec-path {spec_path!r} must be a relative path", where="pyproject.toml"))
    tags = table.get("sdk-tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
        raise CodegenError(Problem("[tool.codegen] sdk-tags must be a list of tag names", where="pyproject.toml"))

    url = configured
    env_url = os.environ.get(RUNTIME_REPO_ENV)
    if env_url is not None:
        url = check_url(env_url, origin=RUNTIME_REPO_ENV)
    env_ref = os.environ.get(RUNTIME_REF_ENV)
    ref_overridden = False
    if commit is None and env_ref is not None:
        commit = check_commit(env_ref.strip(), origin=RUNTIME_REF_ENV)
        ref_overridden = True
    if commit is None:
        commit = read_pin(project)
    return Source(
        url=url,
        configured_url=configured,
        branch=branch,
        spec_path=spec_path,
        commit=commit,
        sdk_tags=tuple(tags),
        url_overridden=env_url is not None and env_url != configured,
        ref_overridden=ref_overridden and commit != _pin_or_none(project),
    )


def _pin_or_none(project: Project) -> str | None:
    try:
        return read_pin(project)
    except CodegenError:
        return None
