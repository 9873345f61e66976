"""A no-change check in milliseconds: what a generation produced, keyed by the bytes it used.

How it works, and why: docs/maintainers/design.md, "codegen/generation/cache.py".
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codegen.config import TOOLCHAIN, Source
from codegen.generation.inputs import GenerationInputs
from codegen.tree.write import generated_entries
from toolkit.paths import SPEC, Project
from toolkit.read import read_or_none
from toolkit.records import Digest, entry_path, read_entry, write_entry

if TYPE_CHECKING:
    from codegen.envd.synced import SyncedFile

FORMAT = "e2b-codegen-generation/2"
VALIDATION_FORMAT = "e2b-codegen-validation/1"
PREPARED_FORMAT = "e2b-codegen-prepared/2"
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
    """What the generation with this key produced: path -> sha256, and the warnings it gave."""

    files: Mapping[str, str]
    warnings: tuple[str, ...]


def _key(namespace: str, inputs: GenerationInputs, groups: tuple[str, ...], **extra: bytes) -> str:
    """A kind's key: its namespace, the interpreter, the digests of the input groups it depends on, its own extra."""
    digest = Digest()
    digest.add("namespace", namespace.encode())
    digest.add("python", sys.version.encode())
    for group in groups:
        digest.add(group, inputs.digests[group].encode())
    for name, data in extra.items():
        digest.add(name, data)
    return digest.hexdigest()


def synced_digest(synced: Sequence[SyncedFile]) -> bytes:
    """The envd files a run synced, as a generation key holds them: each path with its bytes' digest."""
    return json.dumps([[f.path, hashlib.sha256(f.data).hexdigest()] for f in synced]).encode()


def generation_key(inputs: GenerationInputs, source: Source, spec: bytes, synced: bytes = b"[]") -> str:
    """Every input of a generation, as the run read them: equal keys, byte-identical output.

    `synced`: `synced_digest` of the envd files, which reach the output (the tree, their lock).
    """
    # Every field of the source that reaches the output (the lock, the filter, the overlays).
    where = (source.commit, source.configured_url, source.branch, source.spec_path, *source.sdk_tags)
    return _key(
        FORMAT,
        inputs,
        ("contract", "operations", "toolchain", "templates", "code"),
        source=json.dumps([*where, *source.envd_files]).encode(),
        spec=spec,
        synced=synced,
        # What is installed, in case the environment and the lock disagree.
        installed=json.dumps([_installed(name) for name in TOOLCHAIN]).encode(),
    )


def validation_key(inputs: GenerationInputs, spec: bytes) -> str:
    """The spec's bytes, the validator's versions and the code that calls it."""
    spec_digest = hashlib.sha256(spec).hexdigest().encode()
    validator = json.dumps([[name, _installed(name)] for name in VALIDATOR]).encode()
    return _key(VALIDATION_FORMAT, inputs, ("code",), spec=spec_digest, validator=validator)


def prepared_key(inputs: GenerationInputs, source: Source) -> str:
    """What the spec, contract and filter steps make of the spec at the pinned commit depends on.

    The commit stands for the spec's bytes until the fetch confirms them: it is not where they
    came from (a mirror's commit is the same commit), so the URL and branch are not in it.  The
    toolchain's lock is (PyYAML parses the spec); the templates are not (they come after).
    """
    where = json.dumps([source.commit, source.spec_path, *source.sdk_tags]).encode()
    return _key(PREPARED_FORMAT, inputs, ("contract", "operations", "toolchain", "code"), source=where)


def _installed(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version  # only once the generators have their spec

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def record(project: Project, key: str, files: Mapping[str, bytes], warnings: tuple[str, ...]) -> None:
    """After a real generation: remember what it produced (atomically; a failure to cache is no failure)."""
    entry = {
        "format": FORMAT,
        "key": key,
        "files": {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())},
        "warnings": list(warnings),
    }
    write_entry(entry_path(project, "generations", key), entry)


def record_valid(project: Project, key: str) -> None:
    """The validator passed the spec of `key`."""
    write_entry(entry_path(project, "validations", key), {"format": VALIDATION_FORMAT, "key": key, "valid": True})


def recall_valid(project: Project, key: str) -> bool:
    """True when the validator passed exactly this spec with exactly this validator and code."""
    return read_entry(entry_path(project, "validations", key)) == {
        "format": VALIDATION_FORMAT,
        "key": key,
        "valid": True,
    }


@dataclass(frozen=True)
class Prepared:
    """The filtered spec the generators read, for the spec whose sha256 is `spec`, and its contract warnings.

    `validation`: the validator's key (`validation_key`) when it was prepared, so that a later run
    missing that verdict can tell a changed validator from a verdict that was not kept.
    """

    spec: str
    filtered: dict[str, Any]
    warnings: tuple[str, ...]
    validation: str = ""

    def is_for(self, data: bytes) -> bool:
        return hashlib.sha256(data).hexdigest() == self.spec


def record_prepared(
    project: Project,
    key: str,
    spec: bytes,
    filtered: Mapping[str, Any],
    warnings: tuple[str, ...],
    *,
    validation: str = "",
) -> None:
    """After a run whose spec passed the contract: the filtered spec it generated from."""
    entry = {
        "format": PREPARED_FORMAT,
        "key": key,
        "spec": hashlib.sha256(spec).hexdigest(),
        "filtered": filtered,
        "warnings": list(warnings),
        "validation": validation,
    }
    write_entry(entry_path(project, "prepared", key), entry)


def recall_prepared(project: Project, key: str) -> Prepared | None:
    """The entry for `key`, or None when there is none or it is not one this version wrote whole."""
    entry = read_entry(entry_path(project, "prepared", key))
    if not isinstance(entry, dict) or entry.get("format") != PREPARED_FORMAT or entry.get("key") != key:
        return None
    spec, filtered, warnings = entry.get("spec"), entry.get("filtered"), entry.get("warnings")
    validation = entry.get("validation")
    if not (isinstance(spec, str) and len(spec) == 64 and set(spec) <= _SHA256_HEX and isinstance(filtered, dict)):
        return None
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        return None
    if not isinstance(validation, str):
        return None
    return Prepared(spec=spec, filtered=filtered, warnings=tuple(warnings), validation=validation)


def recall(project: Project, key: str) -> Recorded | None:
    """The entry for `key`, or None when there is none or it is not one this version wrote whole."""
    entry = read_entry(entry_path(project, "generations", key))
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
        return None
    files, warnings = entry.get("files"), entry.get("warnings")
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
