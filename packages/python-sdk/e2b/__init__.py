"""E2B SDK: create, pause, resume and manage cloud sandboxes.

`Sandbox` blocks, `AsyncSandbox` awaits; the sync one is derived from the async one
(e2b.sandbox_sync.main from e2b.sandbox_async.main). Every exception derives from
`SandboxException`; see e2b._exceptions for the tree.

The sandbox classes are imported on first use (PEP 562): they bring in httpx,
pyqwest and the generated client, which cost most of an import of `e2b`, so
`import e2b` and the exceptions and settings stay cheap.
"""

# Only public names at module level (tests/python_sdk/test_public_api.py):
# hence no `from __future__` import and the underscored modules.
import importlib as _importlib
import typing as _typing

from e2b._config import ApiParams, ConnectionConfig
from e2b._exceptions import (
    AuthenticationException,
    ConnectionException,
    FileNotFoundException,
    InvalidArgumentException,
    NotEnoughSpaceException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxNotRunningException,
    SandboxPauseRefusedException,
    SandboxUnreachableException,
    ServiceBusyException,
    TemplateException,
    TimeoutException,
    UnexpectedResponseException,
)
from e2b._options import (
    SandboxEgressProxyOpts,
    SandboxIamOpts,
    SandboxIamToken,
    SandboxLifecycle,
    SandboxListOrder,
    SandboxNetworkOpts,
    SandboxNetworkRule,
    SandboxNetworkTransform,
    SandboxNetworkUpdate,
    SandboxOnResume,
    SandboxOnTimeout,
    SandboxQuery,
    SnapshotMode,
)
from e2b._results import (
    SandboxInfo,
    SandboxInfoLifecycle,
    SandboxMetrics,
    SandboxNetworkInfo,
    SandboxPauseResult,
    SandboxState,
    SnapshotInfo,
)
from e2b.api.error_codes import SANDBOX_PAUSE_REFUSED_ERROR_CODE

if _typing.TYPE_CHECKING:
    from e2b._transport import default_async_transport, default_transport
    from e2b.sandbox.commands.command_handle import (
        CommandExitException,
        CommandResult,
        PtyOutput,
        PtySize,
        Stderr,
        Stdout,
    )
    from e2b.sandbox.commands.main import ProcessInfo
    from e2b.sandbox.filesystem.filesystem import (
        AsyncWriteData,
        EntryInfo,
        FileType,
        WriteData,
        WriteEntry,
        WriteInfo,
    )
    from e2b.sandbox.filesystem.watch_handle import FilesystemEvent, FilesystemEventType
    from e2b.sandbox_async.commands.command_handle import AsyncCommandHandle
    from e2b.sandbox_async.commands.command_input_handle import AsyncCommandInputHandle
    from e2b.sandbox_async.filesystem.watch_handle import AsyncWatchHandle
    from e2b.sandbox_async.main import AsyncSandbox
    from e2b.sandbox_async.paginator import AsyncSandboxPaginator, AsyncSnapshotPaginator
    from e2b.sandbox_sync.commands.command_handle import CommandHandle
    from e2b.sandbox_sync.filesystem.watch_handle import WatchHandle
    from e2b.sandbox_sync.main import Sandbox
    from e2b.sandbox_sync.paginator import SandboxPaginator, SnapshotPaginator

__all__ = [
    "SANDBOX_PAUSE_REFUSED_ERROR_CODE",
    "ApiParams",
    "AsyncCommandHandle",
    "AsyncCommandInputHandle",
    "AsyncSandbox",
    "AsyncSandboxPaginator",
    "AsyncSnapshotPaginator",
    "AsyncWatchHandle",
    "AsyncWriteData",
    "AuthenticationException",
    "CommandExitException",
    "CommandHandle",
    "CommandResult",
    "ConnectionConfig",
    "ConnectionException",
    "EntryInfo",
    "FileNotFoundException",
    "FileType",
    "FilesystemEvent",
    "FilesystemEventType",
    "InvalidArgumentException",
    "NotEnoughSpaceException",
    "NotFoundException",
    "ProcessInfo",
    "PtyOutput",
    "PtySize",
    "RateLimitException",
    "Sandbox",
    "SandboxEgressProxyOpts",
    "SandboxException",
    "SandboxIamOpts",
    "SandboxIamToken",
    "SandboxInfo",
    "SandboxInfoLifecycle",
    "SandboxLifecycle",
    "SandboxListOrder",
    "SandboxMetrics",
    "SandboxNetworkInfo",
    "SandboxNetworkOpts",
    "SandboxNetworkRule",
    "SandboxNetworkTransform",
    "SandboxNetworkUpdate",
    "SandboxNotFoundException",
    "SandboxNotRunningException",
    "SandboxOnResume",
    "SandboxOnTimeout",
    "SandboxPaginator",
    "SandboxPauseRefusedException",
    "SandboxPauseResult",
    "SandboxQuery",
    "SandboxState",
    "SandboxUnreachableException",
    "ServiceBusyException",
    "SnapshotInfo",
    "SnapshotMode",
    "SnapshotPaginator",
    "Stderr",
    "Stdout",
    "TemplateException",
    "TimeoutException",
    "UnexpectedResponseException",
    "WatchHandle",
    "WriteData",
    "WriteEntry",
    "WriteInfo",
    "default_async_transport",
    "default_transport",
]

# Where each name imported on first use lives; loading one module exports all of its names.
_LAZY = {
    "AsyncSandbox": "e2b.sandbox_async.main",
    "AsyncSandboxPaginator": "e2b.sandbox_async.paginator",
    "AsyncSnapshotPaginator": "e2b.sandbox_async.paginator",
    "Sandbox": "e2b.sandbox_sync.main",
    "SandboxPaginator": "e2b.sandbox_sync.paginator",
    "SnapshotPaginator": "e2b.sandbox_sync.paginator",
    # The data plane's handles (issue 43): their modules bring in the envd client's messages.
    "AsyncCommandHandle": "e2b.sandbox_async.commands.command_handle",
    "AsyncCommandInputHandle": "e2b.sandbox_async.commands.command_input_handle",
    "AsyncWatchHandle": "e2b.sandbox_async.filesystem.watch_handle",
    "CommandHandle": "e2b.sandbox_sync.commands.command_handle",
    "WatchHandle": "e2b.sandbox_sync.filesystem.watch_handle",
    # The data plane's types, at the paths e2b 2.x defines them: none loads the envd client, but together
    # they cost a third of `import e2b` (gzip among them), which the CLI's start-up and the control plane
    # need not pay.
    **dict.fromkeys(
        ["CommandExitException", "CommandResult", "PtyOutput", "PtySize", "Stderr", "Stdout"],
        "e2b.sandbox.commands.command_handle",
    ),
    "ProcessInfo": "e2b.sandbox.commands.main",
    **dict.fromkeys(
        ["AsyncWriteData", "EntryInfo", "FileType", "WriteData", "WriteEntry", "WriteInfo"],
        "e2b.sandbox.filesystem.filesystem",
    ),
    **dict.fromkeys(["FilesystemEvent", "FilesystemEventType"], "e2b.sandbox.filesystem.watch_handle"),
    # The retrying transports, to pass as transport= with a policy of one's own.
    "default_async_transport": "e2b._transport",
    "default_transport": "e2b._transport",
}


def _present_as_e2b(names: list[str]) -> None:
    # Tracebacks and reprs show `e2b.Sandbox`, the name users import, not the
    # private module that defines it.
    for name in names:
        obj = globals()[name]
        # Only the SDK's own classes: `Stdout` is `str`, whose module is not ours to rename.
        if isinstance(obj, type) and obj.__module__.startswith("e2b"):
            obj.__module__ = "e2b"


def __getattr__(name: str) -> object:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'e2b' has no attribute {name!r}")
    module = _importlib.import_module(module_name)
    names = [n for n, m in _LAZY.items() if m == module_name]
    globals().update({n: getattr(module, n) for n in names})
    _present_as_e2b(names)
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


_present_as_e2b([name for name in __all__ if name not in _LAZY])
__version__ = "3.0.0"
