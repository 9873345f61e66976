"""A no-change check in milliseconds: what a generation produced, keyed by the bytes it used.

How it works, and why: docs/maintainers/design.md, "codegen/generation/cache.py".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codegen.config import TOOLCHAIN, Source
from codegen.generation.inputs import GenerationInputs
from codegen.tree.write import generated_entries
from toolkit.paths import SPEC, Project
from toolkit.read import read_or_none
from toolkit.records import Records

if TYPE_CHECKING:
    from codegen.envd.synced import SyncedFile

# In what every answer of its kind depends on: another layout of the answers is another kind's.
FORMAT = "e2b-codegen-generation/3"
VALIDATION_FORMAT = "e2b-codegen-validation/2"
# openapi-spec-validator and what decides its verdict with it.
VALIDATOR = (
    "openapi-spec-validator",
    "openapi-schema-validator",
    "jsonschema",
    "jsonschema-path",
    "jsonschema-specifications",
    "referencing",
)
_SHA256_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Recorded:
    """What the generation with these inputs produced: path -> sha256, and the warnings it gave."""

    files: Mapping[str, str]
    warnings: tuple[str, ...]


def generation_records(project: Project, inputs: GenerationInputs) -> Records:
    """What real generations produced (`generations/`), by everything they read but the spec and the pin.

    Those, per generation, are the answer's input (`generated_from`).
    """
    groups = ("contract", "operations", "toolchain", "templates", "code", "twin_sources")
    return Records(
        project,
        "generations",
        {
            "format": FORMAT.encode(),
            **{group: inputs.digests[group].encode() for group in groups},
            # What is installed, in case the environment and the lock disagree.
            "installed": json.dumps([_installed(name) for name in TOOLCHAIN]).encode(),
        },
    )


def generated_from(source: Source, spec: bytes, synced: Sequence[SyncedFile] = ()) -> bytes:
    """A generation's own input: equal inputs (and `generation_records`), byte-identical output.

    Every field of the source that reaches the output (the lock, the filter, the overlays), the spec's
    bytes, and the envd files synced with it, which reach it too (the tree, their lock).
    """
    where = (source.commit, source.configured_url, source.branch, source.spec_path, *source.sdk_tags)
    return json.dumps(
        {
            "source": [*where, *source.envd_files],
            "spec": hashlib.sha256(spec).hexdigest(),
            "synced": [[f.path, hashlib.sha256(f.data).hexdigest()] for f in synced],
        }
    ).encode()


def validation_records(project: Project, inputs: GenerationInputs) -> Records:
    """The specs the validator passed (`validations/`, by their bytes), with its versions and the code that calls it.

    Only a pass is kept: the answer is `True`.
    """
    validator = json.dumps([[name, _installed(name)] for name in VALIDATOR]).encode()
    return Records(
        project,
        "validations",
        {"format": VALIDATION_FORMAT.encode(), "code": inputs.digests["code"].encode(), "validator": validator},
    )


def _installed(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version  # only once the generators have their spec

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def record(records: Records, generation: bytes, files: Mapping[str, bytes], warnings: tuple[str, ...]) -> None:
    """After a real generation (`generated_from`): remember what it produced (a failure to cache is no failure)."""
    files_sha = {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())}
    records.remember(generation, {"files": files_sha, "warnings": list(warnings)})


def recall(records: Records, generation: bytes) -> Recorded | None:
    """What the generation `generation` produced, or None when none is remembered whole, in the form `record` wrote."""
    value = records.recall(generation)
    if not isinstance(value, dict):
        return None
    files, warnings = value.get("files"), value.get("warnings")
    if not isinstance(files, dict) or not isinstance(warnings, list) or SPEC not in files:
        return None
    for path, sha in files.items():
        if not (isinstance(path, str) and isinstance(sha, str) and len(sha) == 64 and set(sha) <= _SHA256_HEX):
            return None
    if not all(isinstance(w, str) for w in warnings):
        return None
    return Recorded(files=files, warnings=tuple(warnings))


def tree_matches(root: Path, recorded: Recorded, spec: bytes) -> bool:
    """True when the tree holds exactly what the recorded generation produced, spec included.

    The spec is compared with `spec`, the bytes the check obtained (the
    upstream's, or the tracked copy the lock vouched for).  Symlinks, leftovers
    and interrupted writes are the caller's to rule out first.
    """
    if read_or_none(root / SPEC) != spec:
        return False
    for path, sha in recorded.files.items():
        if path == SPEC:
            continue
        data = read_or_none(root / path)
        if data is None or hashlib.sha256(data).hexdigest() != sha:
            return False
    # Nothing else in the generated folders, nor in git's index there (a submodule, a symlink);
    # the manifest (compared above) lists what was generated.
    present, odd = generated_entries(root)
    return not odd and present <= recorded.files.keys()
