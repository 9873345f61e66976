"""The built-in templates: what a sandbox can start from before any snapshot exists.

A local server builds no templates, so it ships a fixed few, public to every
API key. `base` is the one clients ask for by default (the SDK's and the CLI's
default template); the others give sandboxes of other sizes. Each is named by
its identifier or by its alias, as in the cloud, where the two differ; a
create request's `templateID` takes either, and the sandbox reports the
identifier as `templateID` and the alias as `alias`.

Snapshots are templates too (`snapshots.py`); these are the ones that are
always there and cannot be deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

# The guest agent version every sandbox reports. The released SDK refuses a
# sandbox whose envd is older than 0.1.0 and warns on metrics below 0.2.4.
ENVD_VERSION = "0.2.4"

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
