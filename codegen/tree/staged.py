"""What a run produced, as the tree will hold it: the spec, the lock, the manifest and the generated files.

The pipeline builds it (codegen/generation/stage.py); the last step writes it
over the tree or compares the tree with it (codegen/tree/write.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.paths import LOCK, MANIFEST, SPEC


@dataclass(frozen=True)
class Staged:
    """The pipeline's complete output."""

    spec: bytes
    lock: bytes
    generated: dict[str, bytes]  # files inside GENERATED_ROOTS
    manifest: bytes

    def files(self) -> dict[str, bytes]:
        return {SPEC: self.spec, LOCK: self.lock, MANIFEST: self.manifest, **self.generated}
