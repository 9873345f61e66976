"""Print, as JSON, the public signatures of an `e2b` installation's Sandbox, AsyncSandbox and data plane.

Run by any interpreter: the released SDK's (in its own virtualenv) or this
repository's. Imports nothing from this repository. For each method, the
instance form and the class form (the sandbox id first): positional
parameter names in order and keyword-only names, without `self`/`cls` and
without `**opts` (the connection settings, listed once under "settings").
The data plane's classes are read at the module paths 2.x users import them
from: each public method's parameters, and the names of its properties.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import json
import sys
import typing
from typing import Any

import e2b

METHODS = (
    "create", "connect", "kill", "get_info", "set_timeout", "pause", "beta_pause", "list", "get_metrics",
    "fork", "create_snapshot", "list_snapshots", "delete_snapshot", "update_network",
)  # fmt: skip


# module path -> the data plane's classes there; the sandbox's own data-plane members.
DATA_PLANE = {
    "e2b.sandbox_sync.commands.command": ("Commands",),
    "e2b.sandbox_sync.commands.pty": ("Pty",),
    "e2b.sandbox_sync.commands.command_handle": ("CommandHandle",),
    "e2b.sandbox_sync.filesystem.filesystem": ("Filesystem",),
    "e2b.sandbox_sync.filesystem.watch_handle": ("WatchHandle",),
    "e2b.sandbox_async.commands.command": ("Commands",),
    "e2b.sandbox_async.commands.pty": ("Pty",),
    "e2b.sandbox_async.commands.command_handle": ("AsyncCommandHandle",),
    "e2b.sandbox_async.commands.command_input_handle": ("AsyncCommandInputHandle",),
    "e2b.sandbox_async.filesystem.filesystem": ("Filesystem",),
    "e2b.sandbox_async.filesystem.watch_handle": ("AsyncWatchHandle",),
}
SANDBOX_DATA_PLANE = ("commands", "files", "pty", "is_running", "get_host", "download_url", "upload_url")


def _members(cls: type) -> dict[str, Any]:
    """A class's public methods (their parameters) and properties (None)."""
    members: dict[str, Any] = {}
    for name in dir(cls):
        if name.startswith("_"):
            continue
        static = inspect.getattr_static(cls, name)
        if isinstance(static, property):
            members[name] = None
        elif callable(static) or isinstance(static, classmethod | staticmethod):
            members[name] = _shape(getattr(cls, name))
    return members


def _shape(fn: Any) -> dict[str, list[str]]:
    params = [p for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]
    kinds = inspect.Parameter
    return {
        "positional": [p.name for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)],
        "keyword": sorted(p.name for p in params if p.kind is kinds.KEYWORD_ONLY),
    }


def _forms(cls: type, name: str) -> dict[str, Any]:
    static = inspect.getattr_static(cls, name)
    underlying = getattr(static, "method", None)  # a descriptor that keeps the instance form
    if underlying is not None:
        overloads = typing.get_overloads(underlying)
        instance = [
            o for o in overloads if not isinstance(o, staticmethod) and "self" in inspect.signature(o).parameters
        ]
        on_class = [o for o in overloads if o not in instance]
        return {
            "instance": _shape(instance[0] if instance else underlying),
            "class": _shape(getattr(on_class[0], "__func__", on_class[0])) if on_class else None,
        }
    if isinstance(static, classmethod | staticmethod):
        return {"instance": None, "class": _shape(getattr(cls, name))}
    forms: dict[str, Any] = {"class": _shape(getattr(cls, name))}
    try:
        forms["instance"] = _shape(getattr(object.__new__(cls), name))
    except Exception:  # a class-only method
        forms["instance"] = None
    return forms


def main() -> None:
    out: dict[str, Any] = {"version": importlib.metadata.version("e2b"), "classes": {}}
    for cls in (e2b.Sandbox, e2b.AsyncSandbox):
        out["classes"][cls.__name__] = {name: _forms(cls, name) for name in METHODS if hasattr(cls, name)}
        out["classes"][cls.__name__]["context manager"] = sorted(
            n for n in ("__enter__", "__exit__", "__aenter__", "__aexit__") if hasattr(cls, n)
        )
    out["settings"] = sorted(sys.modules["e2b"].ApiParams.__annotations__)
    out["values"] = {
        "SandboxInfo": sorted(e2b.SandboxInfo.__dataclass_fields__),
        "SandboxQuery": sorted(e2b.SandboxQuery.__dataclass_fields__),
        "SandboxMetrics": sorted(e2b.SandboxMetrics.__dataclass_fields__),
        "SnapshotInfo": sorted(e2b.SnapshotInfo.__dataclass_fields__),
        "SandboxState": {member.name: member.value for member in e2b.SandboxState},
    }
    out["data plane"] = {
        f"{module}.{name}": _members(getattr(importlib.import_module(module), name))
        for module, names in DATA_PLANE.items()
        for name in names
    }
    for cls in (e2b.Sandbox, e2b.AsyncSandbox):
        static = {name: inspect.getattr_static(cls, name, None) for name in SANDBOX_DATA_PLANE}
        out["data plane"][cls.__name__] = {
            name: None if isinstance(member, property) else _shape(getattr(cls, name))
            for name, member in static.items()
            if member is not None
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
