"""The test suite's memo of two pure readings that codegen repeats from test to test, by exactly what they read.

griffe's reading of a package (python_api/reader.py `read_api`: about 1 s a package) and openapi-spec-validator's
verdict on a spec (codegen/openapi/document.py `validate_openapi`: about 1 s on the runtime's spec) take a tenth
of the suite's CPU, and hundreds of tests ask them the same questions: every bump reads the pristine project's
packages, every run validates one of a few specs.  An answer is remembered by the package's name and every file's
bytes, or by the spec's content (each value with its type, in order), in each worker and in the folder the
workers share with the memo toolchain (tests/codegen/memo_toolchain.py), so a test gets what the real reading
gives; only a failure is never remembered.  codegen's own records (toolkit/records.py) run as in production on
each test's empty cache folder.  A test that replaces either function (monkeypatch) replaces the memo too.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from codegen.openapi import document
from python_api import reader
from python_api.distributions import Distribution
from python_api.model import ApiEntry
from toolkit.errors import Problem

READINGS = "readings"  # the memo's folder, in the memo toolchain's
_REMEMBERED: dict[str, Any] = {}  # this worker's answers, by key
# What the real validator is handed as `where`: it marks each pointer, and the memo applies the caller's `where`.
_POINTER = "\0pointer:"


def _answer(shared: Path, key: str, compute: Callable[[], Any]) -> Any:
    """The answer remembered for `key`, else `compute()`'s, remembered (whole or not at all for the others)."""
    if key not in _REMEMBERED:
        stored = shared / f"{key}.json"
        if stored.exists():
            _REMEMBERED[key] = json.loads(stored.read_text())
        else:
            value = compute()
            fd, temporary = tempfile.mkstemp(dir=shared, prefix=".entry-")
            with os.fdopen(fd, "w") as handle:
                json.dump(value, handle)
            os.replace(temporary, stored)
            _REMEMBERED[key] = value
    return _REMEMBERED[key]


def _package_key(package: Distribution, package_dir: Path) -> str:
    digest = hashlib.sha256(json.dumps(["read_api", package.name, package.path]).encode())
    for path in sorted(package_dir.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(os.fsencode(path.relative_to(package_dir).as_posix()) + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _canonical(value: object) -> object:
    """`value` as nested lists that say every type: an int key and a string key never meet."""
    if isinstance(value, Mapping):
        return ["map", [[_canonical(k), _canonical(v)] for k, v in value.items()]]
    if isinstance(value, list | tuple):
        return ["list", [_canonical(item) for item in value]]
    return [type(value).__name__, repr(value)]


def memo_read_api(shared: Path, real: Callable[[Distribution, Path], dict[str, ApiEntry]]) -> Callable[..., Any]:
    def read_api(package: Distribution, package_dir: Path) -> dict[str, ApiEntry]:
        def compute() -> dict[str, list[Any]]:
            return {path: [e.kind, e.bases, e.parameters] for path, e in real(package, package_dir).items()}

        value = _answer(shared, _package_key(package, package_dir), compute)
        return {
            path: ApiEntry(kind, tuple(bases), tuple((name, how, default) for name, how, default in parameters))
            for path, (kind, bases, parameters) in value.items()
        }

    return read_api


def memo_validate_openapi(shared: Path, real: Callable[..., list[Problem]]) -> Callable[..., list[Problem]]:
    def validate_openapi(
        spec: Mapping[str, Any], *, where: Callable[[str], str] = lambda pointer: pointer or "/"
    ) -> list[Problem]:
        def compute() -> list[list[Any]]:
            found = real(spec, where=lambda pointer: _POINTER + pointer)
            return [[p.message, p.where, p.remedy, list(p.detail)] for p in found]

        key = hashlib.sha256(json.dumps(["validate_openapi", _canonical(spec)]).encode()).hexdigest()
        return [
            Problem(
                message,
                where=where(at.removeprefix(_POINTER)) if at is not None and at.startswith(_POINTER) else at,
                remedy=remedy,
                detail=tuple(detail),
            )
            for message, at, remedy, detail in _answer(shared, key, compute)
        ]

    return validate_openapi


@contextmanager
def memoized_readings(shared: Path) -> Iterator[None]:
    """Both readings answered from the memo in `shared` (a folder of its own) while the block runs."""
    shared.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader, "read_api", memo_read_api(shared, reader.read_api))
        patch.setattr(document, "validate_openapi", memo_validate_openapi(shared, document.validate_openapi))
        yield
