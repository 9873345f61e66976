"""e2b 2.x's `e2b.exceptions`: the exceptions 2.x defines there that this SDK has, the same classes as `e2b`'s.

Code written for 2.x imports them from here (`from e2b.exceptions import
TimeoutException`). They are defined in `e2b._exceptions`, with the whole tree;
the exceptions new in 3.0 are imported from `e2b`, and 2.x's template, volume,
secret and git exceptions are not carried (docs/users/sdk.md, "What else
differs from 2.63.0").
"""

from e2b._exceptions import (
    AuthenticationException,
    FileNotFoundException,
    InvalidArgumentException,
    NotEnoughSpaceException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxNotRunningException,
    SandboxUnreachableException,
    ServiceBusyException,
    TemplateException,
    TimeoutException,
)

__all__ = [
    "AuthenticationException",
    "FileNotFoundException",
    "InvalidArgumentException",
    "NotEnoughSpaceException",
    "NotFoundException",
    "RateLimitException",
    "SandboxException",
    "SandboxNotFoundException",
    "SandboxNotRunningException",
    "SandboxUnreachableException",
    "ServiceBusyException",
    "TemplateException",
    "TimeoutException",
]
