"""The lock: where the tracked spec came from (runtime URL, path, commit, git blob id)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from codegen.config import FULL_COMMIT
from toolkit.errors import Problem, ToolError
from toolkit.paths import Project


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob, so the lock can be checked without git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Lock:
    runtime: str
    branch: str
    path: str
    commit: str
    blob: str

    def render(self) -> bytes:
        return (json.dumps(asdict(self), indent=2) + "\n").encode()

    def why_not_for(self, commit: str, spec_path: str) -> str | None:
        """Why this lock cannot vouch for the spec at `commit`:`spec_path` (None: it can).

        The one rule behind every fallback to the tracked spec (fetch offline,
        bump's old side): the lock must name that very commit and path; then
        the bytes whose blob id it records are that spec.
        """
        if self.commit != commit:
            return f"the lock records runtime@{self.commit[:7]}, not {commit[:7]}"
        if self.path != spec_path:
            return f"the lock records {self.path}, not {spec_path}"
        return None


def read_lock(project: Project) -> Lock:
    where = project.relative(project.lock)
    try:
        raw = json.loads(project.lock.read_text(encoding="utf-8"))
        lock = Lock(**{k: raw[k] for k in ("runtime", "branch", "path", "commit", "blob")})
    except FileNotFoundError:
        raise ToolError(Problem("the lock is missing", where=where, remedy="restore it from git")) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ToolError(Problem(f"the lock is unreadable: {exc}", where=where, remedy="restore it from git")) from None
    if not (FULL_COMMIT.fullmatch(lock.commit) and FULL_COMMIT.fullmatch(lock.blob)):
        raise ToolError(Problem("the lock's commit or blob is not a full id", where=where))
    return lock
