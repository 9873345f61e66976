"""What a run produced, as the tree will hold it: the spec, the lock, the manifest and the generated files.

The pipeline builds it (codegen/generation/stage.py); the last step writes it
over the tree or compares the tree with it (codegen/tree/write.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolkit.paths import ENVD_LOCK, LOCK, MANIFEST, SPEC


@dataclass(frozen=True)
class Staged:
    """The pipeline's complete output."""

    spec: bytes
    lock: bytes
    generated: dict[str, bytes]  # files inside GENERATED_ROOTS
    manifest: bytes
    # The envd files synced at the same pin (path -> bytes, all under ENVD_DIR) and their lock;
    # empty, and no lock, when `[tool.codegen]` names none.
    synced: dict[str, bytes] = field(default_factory=dict)
    envd_lock: bytes | None = None

    def files(self) -> dict[str, bytes]:
        envd = {} if self.envd_lock is None else {ENVD_LOCK: self.envd_lock, **self.synced}
        return {SPEC: self.spec, LOCK: self.lock, MANIFEST: self.manifest, **envd, **self.generated}
