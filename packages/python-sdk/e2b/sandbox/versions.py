"""Which envd version a data-plane feature needs, and how a sandbox's version is compared.

The create/connect answer carries `envdVersion` ("0.2.4"); a sandbox whose
version is unknown (debug mode, a hand-made `Sandbox(id)`) or unreadable is
taken as current, as e2b 2.x takes debug sandboxes, so no feature is refused
on a guess.
"""

from __future__ import annotations

import re

__all__ = [
    "ENVD_COMMANDS_STDIN",
    "ENVD_DEFAULT_USER",
    "ENVD_ENVD_CLOSE",
    "ENVD_FILE_METADATA",
    "ENVD_OCTET_STREAM_UPLOAD",
    "ENVD_VERSION_FS_EVENT_ENTRY_INFO",
    "ENVD_VERSION_RECURSIVE_WATCH",
    "ENVD_VERSION_WATCH_NETWORK_MOUNTS",
    "UNKNOWN_VERSION",
    "EnvdVersion",
    "envd_version",
]

EnvdVersion = tuple[int, int, int]

# What an unknown version counts as: newer than every gate.
UNKNOWN_VERSION: EnvdVersion = (99, 99, 99)

ENVD_VERSION_RECURSIVE_WATCH: EnvdVersion = (0, 1, 4)
ENVD_COMMANDS_STDIN: EnvdVersion = (0, 3, 0)
ENVD_DEFAULT_USER: EnvdVersion = (0, 4, 0)
ENVD_ENVD_CLOSE: EnvdVersion = (0, 5, 2)
ENVD_OCTET_STREAM_UPLOAD: EnvdVersion = (0, 5, 7)
ENVD_FILE_METADATA: EnvdVersion = (0, 6, 2)
ENVD_VERSION_FS_EVENT_ENTRY_INFO: EnvdVersion = (0, 6, 3)
ENVD_VERSION_WATCH_NETWORK_MOUNTS: EnvdVersion = (0, 6, 4)

_RELEASE = re.compile(r"v?(\d{1,9})(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?")


def envd_version(value: str | None) -> EnvdVersion:
    """`value`'s release numbers ("0.5.7-rc1" is 0.5.7); `UNKNOWN_VERSION` when it has none."""
    match = _RELEASE.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        return UNKNOWN_VERSION
    major, minor, patch = (int(part or 0) for part in match.groups())
    return (major, minor, patch)


def shown(version: EnvdVersion) -> str:
    return "unknown" if version == UNKNOWN_VERSION else ".".join(map(str, version))
