"""E2B SDK: create, pause, resume and manage cloud sandboxes.

`Sandbox` blocks, `AsyncSandbox` awaits; both are rendered from one template
(e2b.api.sandbox_sync / e2b.api.sandbox_async). Every exception derives from
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
    InvalidArgumentException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxPauseRefusedException,
    ServiceBusyException,
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
    from e2b.api.sandbox_async import AsyncSandbox, AsyncSandboxPaginator, AsyncSnapshotPaginator
    from e2b.api.sandbox_sync import Sandbox, SandboxPaginator, SnapshotPaginator

__all__ = [
    "SANDBOX_PAUSE_REFUSED_ERROR_CODE",
    "ApiParams",
    "AsyncSandbox",
    "AsyncSandboxPaginator",
    "AsyncSnapshotPaginator",
    "AuthenticationException",
    "ConnectionConfig",
    "ConnectionException",
    "InvalidArgumentException",
    "NotFoundException",
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
    "SandboxOnResume",
    "SandboxOnTimeout",
    "SandboxPaginator",
    "SandboxPauseRefusedException",
    "SandboxPauseResult",
    "SandboxQuery",
    "SandboxState",
    "ServiceBusyException",
    "SnapshotInfo",
    "SnapshotMode",
    "SnapshotPaginator",
    "TimeoutException",
    "UnexpectedResponseException",
    "default_async_transport",
    "default_transport",
]

# Where each name imported on first use lives; loading one module exports all of its names.
_LAZY = {
    "AsyncSandbox": "e2b.api.sandbox_async",
    "AsyncSandboxPaginator": "e2b.api.sandbox_async",
    "AsyncSnapshotPaginator": "e2b.api.sandbox_async",
    "Sandbox": "e2b.api.sandbox_sync",
    "SandboxPaginator": "e2b.api.sandbox_sync",
    "SnapshotPaginator": "e2b.api.sandbox_sync",
    # The retrying transports, to pass as transport= with a policy of one's own.
    "default_async_transport": "e2b._transport",
    "default_transport": "e2b._transport",
}


def _present_as_e2b(names: list[str]) -> None:
    # Tracebacks and reprs show `e2b.Sandbox`, the name users import, not the
    # private module that defines it.
    for name in names:
        obj = globals()[name]
        if isinstance(obj, type):
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
