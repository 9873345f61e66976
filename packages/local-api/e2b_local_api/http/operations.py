"""Which public operation a raw request targets, by method and path.

The request counters and the fault injector sit in front of the router (they
must see busy 503s the router never produces), so they match paths themselves.
The names are the operation map's (spec/operations.yml); the `/v2` create and
connect routes, which it leaves unnamed, count apart as `createSandboxV2` and
`connectSandboxV2`, so a test sees which route a client took.
"""

from __future__ import annotations

import re

_ID = r"[^/]+"
# A template id may be a snapshot's, `local/name:default`: its `/` arrives decoded.
_TEMPLATE_ID = r".+"
_TABLE: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (method, re.compile(f"^{pattern}$"), operation_id)
    for method, pattern, operation_id in (
        ("POST", "/sandboxes", "createSandbox"),
        ("POST", "/v2/sandboxes", "createSandboxV2"),
        ("GET", "/v2/sandboxes", "listSandboxes"),
        ("GET", f"/sandboxes/{_ID}", "getSandbox"),
        ("DELETE", f"/sandboxes/{_ID}", "killSandbox"),
        ("GET", f"/sandboxes/{_ID}/metrics", "getSandboxMetrics"),
        ("POST", f"/sandboxes/{_ID}/timeout", "setSandboxTimeout"),
        ("POST", f"/sandboxes/{_ID}/refreshes", "refreshSandbox"),
        ("POST", f"/sandboxes/{_ID}/connect", "connectSandbox"),
        ("POST", f"/v2/sandboxes/{_ID}/connect", "connectSandboxV2"),
        ("POST", f"/sandboxes/{_ID}/pause", "pauseSandbox"),
        ("POST", f"/sandboxes/{_ID}/fork", "forkSandbox"),
        ("PUT", f"/sandboxes/{_ID}/network", "updateSandboxNetwork"),
        ("POST", f"/sandboxes/{_ID}/snapshots", "createSnapshot"),
        ("GET", "/snapshots", "listSnapshots"),
        ("GET", "/templates", "listTemplates"),
        ("DELETE", f"/templates/{_TEMPLATE_ID}", "deleteTemplate"),
    )
)

OPERATION_IDS = frozenset(op for _, _, op in _TABLE)


def operation_for(method: str, path: str) -> str | None:
    """The operationId for a request, or None (control surface, unknown path)."""
    for table_method, pattern, operation_id in _TABLE:
        if method == table_method and pattern.match(path):
            return operation_id
    return None
