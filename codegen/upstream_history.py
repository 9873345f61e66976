"""Rebuild, offline, the upstream "runtime" repository that owns the API spec.

`spec/openapi.yml` is a byte-for-byte copy of the runtime repository's
`spec/openapi.yml` at the commit pinned in `spec/runtime-ref`.  That upstream
is fictional, so the pin could not be checked, and the sync could not be
exercised, without recreating it: this module replays the history kept as
reviewable data in `spec/upstream-history/` (a base file, a patch and
`history.toml`) into a real git repository.  Every input of a commit id is
fixed (content, author, committer, dates, encoding), and nothing from the
user's git configuration can reach the build, so the ids are the same on
every machine.
"""

from __future__ import annotations

import os
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

from git import Actor, Repo

HISTORY_DIR = Path(__file__).resolve().parent.parent / "spec" / "upstream-history"

# Keep the user's and the system's git configuration (hooks, template dir,
# autocrlf, signing, default branch) out of the git commands we run.
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}
# Repository-level settings win over any configuration that still gets read,
# including by GitPython's own (pure Python) index and commit code.
_REPO_CONFIG = {
    ("core", "autocrlf"): "false",
    ("core", "hooksPath"): os.devnull,
    ("commit", "gpgSign"): "false",
    ("i18n", "commitEncoding"): "UTF-8",
}


def _text(path: Path) -> bytes:
    """A text file's bytes with LF line ends, however it was checked out."""
    return path.read_bytes().replace(b"\r\n", b"\n")


def build_runtime_repo(dest: Path, history: Path = HISTORY_DIR) -> list[tuple[str, str]]:
    """Create the runtime repository at `dest`; return (subject, commit id) per commit, in order.

    `dest` must not exist or be an empty directory.
    """
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"{dest} exists and is not an empty directory; refusing to build the runtime repository there")
    plan: dict[str, Any] = tomllib.loads((history / "history.toml").read_text(encoding="utf-8"))
    spec_path: str = plan["spec_path"]

    repo = Repo.init(dest, mkdir=True, initial_branch=plan["branch"], env=_GIT_ENV)
    repo.git.update_environment(**_GIT_ENV)
    with repo.config_writer() as config:
        for (section, option), value in _REPO_CONFIG.items():
            config.set_value(section, option, value)

    built: list[tuple[str, str]] = []
    for step in plan["commits"]:
        source = history / step["source"]
        if step["step"] == "write":
            target = dest / spec_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_text(source))
        elif step["step"] == "apply":
            patch = Path(repo.git_dir) / source.name  # outside the work tree, never committed
            patch.write_bytes(_text(source))
            try:
                repo.git.apply("--", str(patch))
            finally:
                patch.unlink()
        else:
            raise ValueError(f"{history / 'history.toml'}: unknown step {step['step']!r} (expected 'write' or 'apply')")
        repo.git.add("--all")
        person = Actor(step["author_name"], step["author_email"])
        date = datetime.fromisoformat(step["date"])
        message: str = step["message"].strip() + "\n"
        commit = repo.index.commit(
            message,
            author=person,
            committer=person,
            author_date=date,
            commit_date=date,
            skip_hooks=True,
        )
        if "tag" in step:
            repo.create_tag(step["tag"], ref=commit)
        built.append((message.splitlines()[0], commit.hexsha))
    return built
