"""What `commands.list()` says about a running process."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProcessInfo"]


@dataclass
class ProcessInfo:
    """A process envd started that is still running: a command, a terminal or the template's start command."""

    pid: int
    """Its process id in the sandbox."""
    tag: str | None
    """The tag it was started with (the template's start command has one), else None."""
    cmd: str
    """The executable."""
    args: list[str]
    """Its arguments."""
    envs: dict[str, str]
    """The environment variables it was started with."""
    cwd: str | None
    """Its working directory, when one was given."""


def process_info(process: object) -> ProcessInfo:
    """A generated `ProcessInfo` message as the SDK's."""
    config = getattr(process, "config", None)
    has_tag = getattr(process, "has_field", lambda _: False)("tag")
    cwd = config.cwd if config is not None and config.has_field("cwd") else None
    return ProcessInfo(
        pid=getattr(process, "pid", 0),
        tag=getattr(process, "tag", None) if has_tag else None,
        cmd=getattr(config, "cmd", "") if config is not None else "",
        args=list(getattr(config, "args", None) or []),
        envs=dict(getattr(config, "envs", None) or {}),
        cwd=cwd,
    )
