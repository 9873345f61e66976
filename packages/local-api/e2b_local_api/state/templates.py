"""The built-in templates: what a sandbox can start from before any snapshot exists.

A fixed few, public to every API key, named by identifier or alias; `base` is the clients'
default. Snapshots are templates too (`snapshots.py`); these are always there and cannot be deleted.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/state/templates.py".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

# The guest agent version every sandbox reports. The released SDK refuses a
# sandbox whose envd is older than 0.1.0 and warns on metrics below 0.2.4.
ENVD_VERSION = "0.6.4"  # what dataplane/ implements (the SDK gates features on it)

# Fixed, so answers do not change from one server start to the next.
BUILT_AT = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class BuiltinTemplate:
    template_id: str
    alias: str
    cpu_count: int
    memory_mb: int
    disk_size_mb: int

    @property
    def build_id(self) -> str:
        """One build each, named for the template: stable across restarts."""
        return f"{self.template_id}-build-1"


BUILTIN_TEMPLATES: tuple[BuiltinTemplate, ...] = (
    BuiltinTemplate("local-base", "base", cpu_count=2, memory_mb=512, disk_size_mb=1024),
    BuiltinTemplate("local-code-interpreter", "code-interpreter-v1", cpu_count=2, memory_mb=1024, disk_size_mb=2048),
    BuiltinTemplate("local-desktop", "desktop", cpu_count=4, memory_mb=4096, disk_size_mb=8192),
)

_BY_NAME = {name: t for t in BUILTIN_TEMPLATES for name in (t.template_id, t.alias)}


def builtin_template(name: str) -> BuiltinTemplate | None:
    """The built-in template with this identifier or alias."""
    return _BY_NAME.get(name)
