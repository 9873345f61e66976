"""e2b 2.x's `e2b.sandbox.sandbox_api`: the sandbox's options and results, the same objects as `e2b`'s.

Code written for 2.x imports them from here (`from e2b.sandbox.sandbox_api
import SandboxQuery`). They are defined in `e2b._options` (what a call takes)
and `e2b._results` (what it answers), which `import e2b` loads anyway. Only the
names 2.x defines here and this SDK has: 2.x's MCP types, the network's
callable selectors and resolvers, and its request-building helpers are not
carried (docs/users/sdk.md, "What else differs from 2.63.0").
"""

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
    SandboxOnTimeoutKill,
    SandboxOnTimeoutPause,
    SandboxQuery,
    SnapshotMode,
)
from e2b._results import (
    SandboxInfo,
    SandboxInfoLifecycle,
    SandboxMetrics,
    SandboxNetworkInfo,
    SandboxState,
    SnapshotInfo,
)

__all__ = [
    "SandboxEgressProxyOpts",
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
    "SandboxOnResume",
    "SandboxOnTimeout",
    "SandboxOnTimeoutKill",
    "SandboxOnTimeoutPause",
    "SandboxQuery",
    "SandboxState",
    "SnapshotInfo",
    "SnapshotMode",
]
