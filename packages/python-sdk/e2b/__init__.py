"""E2B SDK: create, pause, resume and manage cloud sandboxes.

`Sandbox` blocks, `AsyncSandbox` awaits; both are rendered from one template
(e2b.api.sandbox_sync / e2b.api.sandbox_async). Every exception derives from
`SandboxException`; see e2b._exceptions for the tree.
"""

from e2b._config import ApiParams, ConnectionConfig
from e2b._exceptions import (
    AuthenticationException,
    InvalidArgumentException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxPauseRefusedException,
    ServiceBusyException,
    TimeoutException,
)
from e2b._results import SandboxInfo, SandboxPauseResult, SandboxState
from e2b.api.error_codes import SANDBOX_PAUSE_REFUSED_ERROR_CODE
from e2b.api.sandbox_async import AsyncSandbox, AsyncSandboxPaginator
from e2b.api.sandbox_sync import Sandbox, SandboxPaginator

__all__ = [
    "SANDBOX_PAUSE_REFUSED_ERROR_CODE",
    "ApiParams",
    "AsyncSandbox",
    "AsyncSandboxPaginator",
    "AuthenticationException",
    "ConnectionConfig",
    "InvalidArgumentException",
    "RateLimitException",
    "Sandbox",
    "SandboxException",
    "SandboxInfo",
    "SandboxNotFoundException",
    "SandboxPaginator",
    "SandboxPauseRefusedException",
    "SandboxPauseResult",
    "SandboxState",
    "ServiceBusyException",
    "TimeoutException",
]

# Tracebacks and reprs show `e2b.Sandbox`, the name users import, not the
# private module that defines it.
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = "e2b"
del _name, _obj
__version__ = "2.0.0"
