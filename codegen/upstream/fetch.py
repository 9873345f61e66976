"""Fetch the spec file at the pinned runtime commit, through a cached bare repository.

How it works, and why: docs/maintainers/design.md, "codegen/upstream/fetch.py".
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import git

from codegen.config import RUNTIME_REF_ENV, RUNTIME_REPO_ENV, PinFrom, Source, UpstreamFrom
from codegen.envd.synced import SyncedFile, read_envd_lock, synced_at
from codegen.messages import Messages
from codegen.tree.file_lock import held
from codegen.upstream.base_revision import Base
from codegen.upstream.spec_lock import Lock, git_blob_id, read_lock
from toolkit.cache_folder import cache_root, make_private_folder, private_cache_dir, require_private_tree
from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR, ENVD_LOCK, SPEC, Project
from toolkit.read import read_or_none

# Protocols git may speak, whatever the URL or a config file says: no ext::, no fd::.
_GIT_ENV = {
    "GIT_ALLOW_PROTOCOL": "https:ssh:file",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=15",
    # What the cached repository could otherwise change: which object a commit id names.
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_GRAFT_FILE": os.devnull,
}
# Command-line config (as `-c`, which outranks every file): no hook or fsmonitor runs, and every
# file git writes there is this user's alone (0600, folders 0700), whatever the umask.
_GIT_CONFIG = {
    "core.hooksPath": os.devnull,
    "core.fsmonitor": "false",
    "core.sharedRepository": "0600",
}
# The whole config of a cached repository: what `git init --bare` writes, and nothing else.
_CONFIG = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"
# Files git reads that codegen never makes: objects from elsewhere, rewritten parents, a cut history.
_FOREIGN = ("objects/info/alternates", "objects/info/http-alternates", "info/grafts", "shallow", "commondir")


def _git_env(git_dir: Path) -> dict[str, str]:
    """The environment of every git call on a repository of the cache (GIT_DIR: no discovery upwards).

    `_GIT_CONFIG` goes after the command-line config the environment already holds (bump.yml's
    token), which stays; for a key set twice the last wins, so ours do.
    """
    try:
        inherited = max(int(os.environ.get("GIT_CONFIG_COUNT", "0")), 0)
    except ValueError:
        inherited = 0
    env = {**_GIT_ENV, "GIT_DIR": str(git_dir), "GIT_CONFIG_COUNT": str(inherited + len(_GIT_CONFIG))}
    for index, (key, value) in enumerate(_GIT_CONFIG.items(), inherited):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


@dataclass(frozen=True)
class FetchedSpec:
    """The spec's bytes at the source commit, and how they were obtained."""

    data: bytes
    blob_id: str
    origin: str  # "upstream" or "lock" (the verified tracked copy)
    note: str | None = None
    # The envd files at the same commit, from the same place (`envd-files`; codegen/envd/synced.py).
    synced: tuple[SyncedFile, ...] = ()


def git_url(url: str) -> str:
    """Local paths become absolute, so that the cache does not depend on the cwd."""
    if "://" in url or ("@" in url and ":" in url):
        return url
    return str(Path(url).expanduser().resolve())


class Unreachable(Exception):
    """The upstream could not be contacted (as opposed to: it answered no)."""


class MissingRef(Exception):
    """The upstream answered, without the ref asked for (a branch it does not have)."""


class FetchFailed(ToolError):
    """git failed here, not for want of the upstream: never a reason to fall back to the lock."""


def _open_or_init(path: Path) -> git.Repo:
    """The cached bare repository, checked and opened (no process); `git init` only for a missing or unfinished one.

    `git init` writes HEAD before config: an interrupted first run can leave either alone.
    """
    try:
        if os.path.lexists(path) and (path.is_symlink() or not path.is_dir()):
            # GitPython runs git in the current folder when its folder is not one: `git init` there would
            # make the caller's folder a bare repository.
            raise NotADirectoryError(f"{path} is not a folder")
        make_private_folder(path)
        require_private_tree(path)  # before git, or this process, reads anything in it
        foreign = [name for name in _FOREIGN if os.path.lexists(path / name)]
        if foreign:
            raise FetchFailed(
                Problem(
                    f"the cached upstream holds {', '.join(foreign)}, which codegen never writes and git "
                    "would obey (objects or parents from elsewhere)",
                    where=str(path),
                    remedy="delete that cached repository and run again",
                )
            )
        if not (path / "HEAD").is_file():
            git.Git(str(path)).execute(["git", "init", "--quiet", "--bare", "--template="], env=_git_env(path))
        _own_config(path)
        return git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError, OSError) as error:
        raise FetchFailed(
            Problem(
                f"the cached upstream cannot be used: {type(error).__name__}: {str(error).strip() or 'no detail'}",
                where=str(path),
                remedy="delete that cached repository and run again",
            )
        ) from None


def _own_config(path: Path) -> None:
    """The repository's config is `_CONFIG`: whatever else it held is replaced before git reads it."""
    config = path / "config"
    if not config.is_symlink() and config.is_file() and config.read_bytes() == _CONFIG:
        return
    fd, temporary = tempfile.mkstemp(dir=path, prefix=".config-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(_CONFIG)
    os.replace(temporary, config)


class UpstreamRepository:
    """A bare repository of one upstream, cached or (`fresh`) made for this run only; every git call goes through here.

    `cache` is the checked cache folder (`cache_root`); by default the configured one, checked here.
    """

    def __init__(self, url: str, *, cache: Path | None = None, fresh: bool = False) -> None:
        self.url = git_url(url)
        root = cache or private_cache_dir()
        self._made: Path | None = None
        if fresh:
            scratch = root / "scratch"
            make_private_folder(scratch)
            self._made = Path(tempfile.mkdtemp(prefix="upstream-", dir=scratch))  # mode 0700
            path = self._made / "runtime.git"
        else:
            key = hashlib.sha256(self.url.encode()).hexdigest()[:16]
            path = root / f"runtime-{key}.git"
        self.lock_path = path.with_suffix(".lock")
        try:
            with self._locked():
                self.repo = _open_or_init(path)
        except BaseException:
            self.close()
            raise
        self.repo.git.update_environment(**_git_env(path))

    def close(self) -> None:
        """Stop GitPython's processes; a fresh repository is removed."""
        repo = getattr(self, "repo", None)
        if repo is not None:
            repo.close()
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            self._made = None

    def __enter__(self) -> UpstreamRepository:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _locked(self) -> AbstractContextManager[None]:
        """Runs sharing the cache take turns: concurrent fetches fail on git's own ref locks."""
        return held(self.lock_path, f"the cached upstream {self.lock_path.with_suffix('.git')}")

    def _git(self) -> git.Git:
        return self.repo.git  # with `_git_env`, set when the repository was opened

    def fetch(self, *refspecs: str) -> None:
        """Fetch refspecs we built ourselves; the URL goes after --end-of-options."""
        try:
            with self._locked():
                self._git().fetch(
                    "--no-write-fetch-head",
                    "--quiet",
                    "--end-of-options",
                    self.url,
                    *refspecs,
                    allow_unsafe_protocols=False,
                    allow_unsafe_options=False,
                )
        except git.GitCommandError as exc:
            reason = _git_reason(exc)
            if _MISSING_REF.search(str(exc.stderr)):
                raise MissingRef(reason) from None
            if _UNREACHABLE.search(str(exc.stderr)):
                raise Unreachable(reason) from None
            # Anything else (a ref or config lock, a full disk, a corrupt cache) is not the
            # upstream's silence: falling back to the lock would downgrade the check.
            raise FetchFailed(
                Problem(
                    f"git fetch from {self.url} failed: {reason}",
                    where=str(self.lock_path.with_suffix(".git")),
                    remedy="run again; if it fails the same way, delete that cached repository",
                )
            ) from None

    def fetch_branch(self, branch: str) -> str:
        self.fetch(f"+refs/heads/{branch}:refs/upstream/heads/{branch}")
        return f"refs/upstream/heads/{branch}"

    def fetch_tags(self) -> None:
        self.fetch("+refs/tags/*:refs/upstream/tags/*")

    def has_commit(self, commit: str) -> bool:
        try:
            self._git().cat_file("-e", f"{commit}^{{commit}}")
        except git.GitCommandError:
            return False
        return True

    def try_fetch_commit(self, commit: str) -> bool:
        """Servers may refuse unadvertised commits; failure here is not 'unreachable'."""
        try:
            self.fetch(f"{commit}:refs/upstream/probe")
        except (Unreachable, MissingRef, FetchFailed):
            return False
        return self.has_commit(commit)

    def peel_commit(self, name: str) -> str | None:
        """The commit `name` (a ref or an id) peels to, or None."""
        try:
            return str(self._git().rev_parse("--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}")).strip()
        except git.GitCommandError:
            return None

    def object_type(self, name: str) -> str | None:
        try:
            return str(self._git().cat_file("-t", "--end-of-options", name)).strip()
        except git.GitCommandError:
            return None

    def is_ancestor(self, commit: str, ref: str) -> bool:
        try:
            self._git().merge_base("--is-ancestor", "--end-of-options", commit, ref)
        except git.GitCommandError:
            return False
        return True

    def read_file(self, commit: str, path: str) -> tuple[bytes, str] | None:
        found = self.read_regular_file(commit, path)
        return found if isinstance(found, tuple) else None

    def read_regular_file(self, commit: str, path: str) -> tuple[bytes, str] | str | None:
        """The file's bytes and blob id; what it is instead when it is not a regular file; None if absent."""
        entry: Any = self.repo.commit(commit).tree
        walked: list[str] = []
        for part in path.split("/"):
            if entry.type != "tree":
                return f"{'/'.join(walked)} is {_describe(entry)}, not a folder"
            walked.append(part)
            try:
                entry = entry / part
            except KeyError:
                return None
        if entry.type != "blob" or entry.mode == _SYMLINK_MODE:
            return f"is {_describe(entry)}, not a file"
        data: bytes = entry.data_stream.read()
        if data.startswith(LFS_POINTER):
            return "is a Git LFS pointer, not the spec (the runtime repository must commit the file itself)"
        return data, str(entry.hexsha)


_SYMLINK_MODE = 0o120000
LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def _describe(entry: Any) -> str:
    if entry.type == "tree":
        return "a directory"
    if entry.type == "submodule":
        return "a submodule"
    if entry.mode == _SYMLINK_MODE:
        return "a symlink"
    return "a file"


# What git says when the upstream answered but lacks the ref (bump tells branches
# from tags that way; for the configured branch it is an error, never a fallback).
_MISSING_REF = re.compile(r"couldn't find remote ref|not our ref", re.IGNORECASE)
# What git says when the upstream could not be reached, as opposed to git failing here.
_UNREACHABLE = re.compile(
    r"could not resolve host|could not read from remote repository|does not appear to be a git repository"
    r"|unable to access|failed to connect|couldn't connect|connection (refused|timed out|reset)"
    r"|network is unreachable|no route to host|temporary failure in name resolution|could not read username"
    r"|authentication failed|repository .*not found|permission denied|host key verification failed"
    r"|ssh: connect to host|the remote end hung up unexpectedly|operation timed out",
    re.IGNORECASE,
)


def _git_reason(exc: git.GitCommandError) -> str:
    text = exc.stderr if isinstance(exc.stderr, str) else str(exc)
    lines = [ln.strip().strip("'\" ") for ln in text.replace("stderr:", "").splitlines() if ln.strip()]
    # git's first error line says what failed; what follows is advice.
    said = [ln for ln in lines if ln.startswith(("fatal: ", "error: "))]
    reason = said[0] if said else lines[-1] if lines else f"git exited {exc.status}"
    return reason.removeprefix("fatal: ").removeprefix("error: ")


def fetch_configured_branch(upstream: UpstreamRepository, source: Source) -> str:
    """Fetch the configured branch; its local ref. An upstream without it is an error naming the branch."""
    try:
        return upstream.fetch_branch(source.verified_branch)
    except MissingRef:
        raise ToolError(
            Problem(
                f"the runtime repository {source.url} answered, but has no branch {source.verified_branch!r}",
                where="pyproject.toml [tool.codegen] runtime-branch",
                remedy="fix runtime-branch (the branch every pin must be reachable from), "
                + (
                    f"or {RUNTIME_REPO_ENV} if it names the wrong repository"
                    if source.upstream_from is UpstreamFrom.ENV
                    else "or runtime-repo"
                ),
            )
        ) from None


def fetch_spec_at(source: Source, *, cache: Path | None = None, fresh: bool = False) -> FetchedSpec:
    """runtime@commit:path from the upstream (raises Unreachable when it cannot be contacted).

    Through the cached repository under `cache`, or with `fresh` through one made for this fetch.
    """
    with UpstreamRepository(source.url, cache=cache, fresh=fresh) as upstream:
        return _spec_at(upstream, source)


def _spec_at(upstream: UpstreamRepository, source: Source) -> FetchedSpec:
    branch_ref = fetch_configured_branch(upstream, source)
    # The usual case, a pin on the branch just fetched, is one git call; the others say what is wrong.
    reachable = upstream.is_ancestor(source.commit, branch_ref)
    if not reachable and not upstream.has_commit(source.commit) and not upstream.try_fetch_commit(source.commit):
        raise ToolError(
            Problem(
                f"commit {source.commit} does not exist in {source.url}",
                where=source.pin_where,
                remedy="pin a commit of the runtime repository (`nox -s bump -- <ref>`)",
            )
        )
    if not reachable and not upstream.is_ancestor(source.commit, branch_ref):
        raise ToolError(
            Problem(
                f"commit {source.commit} exists upstream but is not reachable from "
                f"{source.verified_branch!r} (a fork's or an unmerged pull request's commit?)",
                where=source.pin_where,
                remedy=f"merge the change into the runtime's {source.verified_branch} first, "
                "then bump to the merged commit",
            )
        )
    found = upstream.read_regular_file(source.commit, source.spec_path)
    if found is None:
        raise ToolError(
            Problem(
                f"{source.spec_path} does not exist at runtime@{source.short_commit}",
                where="pyproject.toml [tool.codegen] spec-path",
                remedy="fix spec-path, or pin a commit that has the spec",
            )
        )
    if isinstance(found, str):
        raise ToolError(
            Problem(
                f"{source.spec_path} at runtime@{source.short_commit} {found}",
                where="pyproject.toml [tool.codegen] spec-path",
                remedy="point spec-path at the spec file itself, or pin a commit where it is a regular file",
            )
        )
    data, blob_id = found
    return FetchedSpec(data=data, blob_id=blob_id, origin="upstream", synced=synced_at(upstream, source))


def tracked_copy_if_locked(project: Project, source: Source, reason: str) -> FetchedSpec:
    """The offline fallback: the bytes the lock records, from the tracked spec or else from git.

    The lock names the spec by its git blob id, so git's object of that id is
    those bytes whoever stored it: a hand-edited (or deleted) spec does not
    stop the run; the check reports it as drift and codegen restores it.
    """
    lock: Lock = read_lock(project)
    where = f"{source.url} is unreachable ({reason})"
    mismatch = lock.why_not_for(source.commit, source.spec_path)
    if mismatch:
        raise ToolError(
            Problem(
                f"{where}, and the tracked copy cannot stand in for it: {mismatch}",
                remedy=f"restore {SPEC} and the lock from git, or run where the runtime "
                "repository is reachable (E2B_RUNTIME_REPO may name a mirror or a checkout)",
            )
        )
    data = read_or_none(project.spec)
    if data is not None and not data.startswith(LFS_POINTER) and git_blob_id(data) == lock.blob:
        return FetchedSpec(
            data=data,
            blob_id=lock.blob,
            origin="lock",
            note=f"warning: {where}; using the tracked {SPEC}, whose blob id matches the lock",
        )
    if data is None:
        differs = "a directory" if project.spec.is_dir() else "missing"
    elif data.startswith(LFS_POINTER):
        differs = "a Git LFS pointer, not the spec"
    else:
        differs = f"edited here (blob {git_blob_id(data)[:12]}, the lock's is {lock.blob[:12]})"
    locked = locked_blob_from_git(project, lock.blob)
    if locked is None:
        raise ToolError(
            Problem(
                f"{where}, {SPEC} is {differs}, and git holds no copy of the locked blob {lock.blob[:12]}",
                remedy=f"restore {SPEC} from git, or run where the runtime "
                "repository is reachable (E2B_RUNTIME_REPO may name a mirror or a checkout)",
            )
        )
    return FetchedSpec(
        data=locked,
        blob_id=lock.blob,
        origin="lock",
        note=f"warning: {where}; {SPEC} is {differs}: using git's copy of the locked blob {lock.blob[:12]}",
    )


def tracked_envd_if_locked(project: Project, source: Source, unreachable: str) -> tuple[SyncedFile, ...]:
    """The offline fallback for the envd files: the bytes the envd lock records, tracked or from git.

    The same rule as the spec's (`tracked_copy_if_locked`): a file edited here stands in only
    through git's copy of the locked blob, so the edit is drift, never the generated input.
    """
    if not source.envd_files:
        return ()
    lock = read_envd_lock(project)
    mismatch = lock.why_not_for(source.commit, source.envd_files)
    remedy = (
        f"restore {ENVD_DIR}/ and {ENVD_LOCK} from git, or run where the runtime repository is reachable "
        "(E2B_RUNTIME_REPO may name a mirror or a checkout)"
    )
    if mismatch:
        said = f"{unreachable}, and the tracked envd files cannot stand in: {mismatch}"
        raise ToolError(Problem(said, remedy=remedy))
    found: list[SyncedFile] = []
    for path in source.envd_files:
        blob = lock.files[path]
        data = read_or_none(project.root / path)
        if data is None or git_blob_id(data) != blob:
            data = locked_blob_from_git(project, blob)
        if data is None:
            raise ToolError(
                Problem(
                    f"{unreachable}, {path} is not the locked blob {blob[:12]} and git holds no copy of it",
                    where=path,
                    remedy=remedy,
                )
            )
        found.append(SyncedFile(path, data, blob))
    return tuple(found)


def locked_blob_from_git(project: Project, blob_id: str) -> bytes | None:
    """The bytes of blob `blob_id` in the project's git repository, re-hashed; None when git lacks it."""
    try:
        with git.Repo(project.root) as repo:
            found = repo.odb.stream(bytes.fromhex(blob_id))
            data: bytes = found.read() if found.type == b"blob" else b""
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError, git.ODBError, OSError):
        return None
    return data if git_blob_id(data) == blob_id else None


def obtain_spec(project: Project, source: Source, base: Base | None = None, *, fresh: bool = False) -> FetchedSpec:
    """The spec at the source commit: from the upstream, else (`offline_stand_in`) the bytes the lock vouches for.

    `fresh` (`--no-cache`): fetched into a repository made for the run, never through the cached one.
    """
    try:
        return fetch_spec_at(source, cache=cache_root(project), fresh=fresh)
    except Unreachable as exc:
        return offline_stand_in(project, source, base, str(exc))


def offline_stand_in(project: Project, source: Source, base: Base | None, reason: str) -> FetchedSpec:
    """The whole fallback policy: the upstream cannot be reached; may the tracked copy stand in for it?

    Not for an upstream the environment names (a mistyped override is a mistake, not a cue to use
    what the tree holds), nor for a commit it names (the tracked spec is the pin's). With a base
    revision (the check), only when the pin, the lock and `[tool.codegen]` are the base's: a lock
    written by the change cannot vouch for its spec. Then only the bytes the lock records for this
    commit stand in (`tracked_copy_if_locked`); a spec edited on its own is drift, found against them.
    """
    if source.upstream_from is UpstreamFrom.ENV:
        raise ToolError(
            Problem(
                f"{source.url} cannot be reached: {reason}",
                where=RUNTIME_REPO_ENV,
                remedy=f"point {RUNTIME_REPO_ENV} at a reachable runtime repository (a mirror or a checkout), "
                "or unset it to use the configured upstream",
            )
        )
    if source.pin_from is PinFrom.ENV:
        raise ToolError(
            Problem(
                f"{source.url} is unreachable ({reason}), so runtime@{source.short_commit} cannot be fetched; "
                "the tracked spec is the pin's, not this commit's",
                where=RUNTIME_REF_ENV,
                remedy=f"run where the runtime repository is reachable, or unset {RUNTIME_REF_ENV}",
            )
        )
    if base is not None and set(base.touched) - {SPEC}:
        raise ToolError(
            Problem(
                f"{source.url} is unreachable ({reason}), and this change moves or touches the pin "
                f"({', '.join(base.touched)} differ from the base {base.short}, {base.described}): "
                "a lock or [tool.codegen] written by the change cannot vouch for its spec, only the upstream can",
                remedy="run where the runtime repository is reachable "
                "(E2B_RUNTIME_REPO may name a mirror or a checkout; in CI, give the job a token)",
            )
        )
    fetched = tracked_copy_if_locked(project, source, reason)
    unreachable = f"{source.url} is unreachable ({reason})"
    fetched = replace(fetched, synced=tracked_envd_if_locked(project, source, unreachable))
    if base is None:
        return fetched
    return replace(
        fetched, note=f"{fetched.note}; the lock is unchanged since the base {base.short} ({base.described})"
    )


def fetch_spec(
    project: Project, source: Source, messages: Messages, base: Base | None = None, *, fresh: bool = False
) -> FetchedSpec:
    """The source and fetch steps: what the environment changed, then the spec's bytes (`fresh`: `obtain_spec`)."""
    for line in source.notes():
        messages(line)
    with messages.step("fetch") as note:
        fetched = obtain_spec(project, source, base, fresh=fresh)
        note(f"upstream {source.url}" if fetched.origin == "upstream" else f"the tracked {SPEC}, as locked")
        note(f"runtime@{source.short_commit}")
    if fetched.note:
        messages(fetched.note)
    return fetched
