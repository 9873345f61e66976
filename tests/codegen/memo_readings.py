"""The test suite's memo of pure readings that codegen repeats from test to test, by exactly what they read.

griffe's reading of a package (python_api/reader.py `read_api`: about 1 s a package), openapi-spec-validator's
verdict on a spec (codegen/openapi/document.py `validate_openapi`: about 1 s on the runtime's spec), bump's
check of the hand-written packages (codegen/commands/handwritten.py: mypy and an import, 3 to 5 s), bump's parse
of a spec as the client generator parses it (codegen/api_changes/generated_names.py) and the sync twin of an
async module (codegen/generation/unasync.py) take a large share of the suite's CPU, and many tests ask them the
same questions: every bump reads the pristine project's packages, every run validates one of a few specs and
unasyncs the same sources, 36 checks of bump's tests cover 21 distinct trees.  An answer is remembered by
exactly what the reading reads: a package's name and every file's bytes, a spec's content (each value with its
type, in order) or its JSON, a module's bytes and path, or the check's own digest of what it depends on
(`_digest`: the files, the configuration, mypy, the installed distributions) with its process's command; in
each worker and in the folder the workers share with the memo toolchain (tests/codegen/memo_toolchain.py), so
a test gets what the real reading gives; only a failure is never remembered.  codegen's own records
(toolkit/records.py) are kept as in production on each test's empty cache folder, and the check still copies
its tree.  A test that replaces one of them (monkeypatch) replaces the memo too.
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

from codegen.api_changes import compare
from codegen.api_changes.generated_names import GeneratedNames, _as_value, _names_from
from codegen.api_changes.generated_names import generated_names as real_generated_names
from codegen.commands import handwritten
from codegen.generation import unasync
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
    known = _recall(shared, key)
    if known is None:
        known = _remember(shared, key, compute())
    return known[0]


def _recall(shared: Path, key: str) -> tuple[Any] | None:
    """The answer remembered for `key` (in a tuple: None is an answer too), else None."""
    if key not in _REMEMBERED:
        stored = shared / f"{key}.json"
        if not stored.exists():
            return None
        _REMEMBERED[key] = json.loads(stored.read_text())
    return (_REMEMBERED[key],)


def _remember(shared: Path, key: str, value: Any) -> tuple[Any]:
    fd, temporary = tempfile.mkstemp(dir=shared, prefix=".entry-")
    with os.fdopen(fd, "w") as handle:
        json.dump(value, handle)
    os.replace(temporary, shared / f"{key}.json")  # whole or not at all for the other workers
    _REMEMBERED[key] = value
    return (value,)


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


def memo_generated_names(shared: Path, real: Callable[..., GeneratedNames]) -> Callable[..., GeneratedNames]:
    """bump's comparison's parse of a spec as openapi-python-client parses it, remembered by the spec's JSON.

    The JSON is what the parse reads (it parses `json.loads(json.dumps(spec))`) and what codegen's own record
    of it is keyed by; the record is written as the real function writes it, on the test's empty cache.
    Another `path_key` than the comparison's is asked of the real function.
    """

    def generated_names(spec: dict[str, Any], path_key: Callable[[str], str], *, records: Any = None) -> GeneratedNames:
        if path_key is not compare._path_key:
            return real(spec, path_key, records=records)
        data = json.dumps(spec).encode()
        key = hashlib.sha256(b"generated_names\0" + data).hexdigest()
        known = _recall(shared, key)
        if known is None:
            names = real(spec, path_key, records=records)
            _remember(shared, key, _as_value(names))
            return names
        remembered = _names_from(known[0])
        assert remembered is not None, key
        if records is not None and _names_from(records.recall(data)) is None:
            records.remember(data, known[0])
        return remembered

    return generated_names


def memo_unasync_source(shared: Path, real: Callable[[bytes, str], str]) -> Callable[..., str]:
    """A sync twin by its async source's bytes and path (a refusal, which names the path, is never remembered)."""

    def unasync_source(data: bytes, path: str = "<source>") -> str:
        key = hashlib.sha256(json.dumps(["unasync_source", path]).encode() + b"\0" + data).hexdigest()
        return str(_answer(shared, key, lambda: real(data, path)))

    return unasync_source


# The check (and its context) whose processes are being started: `_Check.__init__` starts them.
_CHECKING: list[tuple[Any, Any]] = []
# What stands for a check's own folders in a remembered command or output.
_PLACES = ("\0copy", "\0cache", "\0project")


def memo_typecheck(shared: Path, real_check: Any, real_process: Any) -> tuple[Any, Any]:
    """Bump's `_Check` and `_Process`, whose processes' output is remembered by the check's digest.

    The key is the digest with the process's command, timeout and environment, each of the check's folders
    (the copy, the cache, the project) named by a placeholder: a test that runs another command, or the real
    one with another limit, is answered by a real process.  The output is stored with the copy's folder as
    a placeholder and read back with the new copy's, which is where the import's traceback frames point.
    """

    class Check(real_check):  # type: ignore[misc]
        def __init__(self, copy: Any, context: Any, *args: Any) -> None:
            _CHECKING.append((copy, context))
            try:
                super().__init__(copy, context, *args)
            finally:
                _CHECKING.pop()

    class Process:
        def __init__(
            self, command: list[str], cwd: Path | None, timeout: float, what: str, env: dict[str, str] | None = None
        ) -> None:
            copy, context = _CHECKING[-1]
            folders = (str(copy.root), str(context.folder), str(context.project.root))
            self.places = sorted(zip(folders, _PLACES, strict=True), key=lambda pair: -len(pair[0]))
            self.copy = folders[0]
            parts = [self._placed(part) for part in command]
            key = ["typecheck", copy.digest, parts, cwd is not None and self._placed(str(cwd)), timeout, what, env]
            self.key = hashlib.sha256(json.dumps(key).encode()).hexdigest()
            self.known = _recall(shared, self.key)
            self.real = None if self.known is not None else real_process(command, cwd, timeout, what, env=env)

        def _placed(self, text: str) -> str:
            for folder, place in self.places:
                text = text.replace(folder, place)
            return text

        def output(self) -> str:
            if self.real is None:
                assert self.known is not None
                return str(self.known[0]).replace(_PLACES[0], self.copy)
            out: str = self.real.output()  # a failure raises: nothing remembered
            _remember(shared, self.key, out.replace(self.copy, _PLACES[0]))
            return out

        def stop(self) -> None:
            if self.real is not None:
                self.real.stop()

    return Check, Process


@contextmanager
def memoized_readings(shared: Path) -> Iterator[None]:
    """The readings answered from the memo in `shared` (a folder of its own) while the block runs."""
    shared.mkdir(exist_ok=True)
    check, process = memo_typecheck(shared, handwritten._Check, handwritten._Process)
    with pytest.MonkeyPatch.context() as patch:
        # Where the comparison calls it: the name it imported.
        patch.setattr(compare, "generated_names", memo_generated_names(shared, real_generated_names))
        patch.setattr(unasync, "unasync_source", memo_unasync_source(shared, unasync.unasync_source))
        patch.setattr(handwritten, "_Check", check)
        patch.setattr(handwritten, "_Process", process)
        patch.setattr(reader, "read_api", memo_read_api(shared, reader.read_api))
        patch.setattr(document, "validate_openapi", memo_validate_openapi(shared, document.validate_openapi))
        yield
