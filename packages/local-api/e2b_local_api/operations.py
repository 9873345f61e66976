"""Which public operation a raw request targets, by method and path.

The request counters and the fault injector sit in front of the router (they
must see busy 503s the router never produces), so they match paths themselves.
"""

from __future__ import annotations

import re

_ID = r"[^/]+"
_TABLE: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (method, re.compile(f"^{pattern}$"), operation_id)
    for method, pattern, operation_id in (
        ("POST", "/sandboxes", "createSandbox"),
        ("GET", "/v2/sandboxes", "listSandboxes"),
        ("GET", f"/sandboxes/{_ID}", "getSandbox"),
        ("DELETE", f"/sandboxes/{_ID}", "killSandbox"),
        ("POST", f"/sandboxes/{_ID}/timeout", "setSandboxTimeout"),
        ("POST", f"/sandboxes/{_ID}/connect", "connectSandbox"),
        ("POST", f"/sandboxes/{_ID}/pause", "pauseSandbox"),
    )
)

OPERATION_IDS = frozenset(op for _, _, op in _TABLE)


def operation_for(method: str, path: str) -> str | None:
    """The operationId for a request, or None (control surface, unknown path)."""
    for table_method, pattern, operation_id in _TABLE:
        if method == table_method and pattern.match(path):
            return operation_id
    return None
