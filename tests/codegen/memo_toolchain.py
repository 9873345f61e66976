"""The test suite's toolchain: the real generators and ruff, each answer remembered by exactly what it read.

A full generation takes seconds, and the suite runs hundreds in process.  `MemoToolchain` stands
behind the same interface as `Generators` (codegen/generation/generators.py `Toolchain`), so a run in
a test is the production pipeline, every line of codegen's own included (the overlays, the syntax
check, the collection, the stamp); only the tools' processes are replaced, when an earlier run gave
them exactly the same arguments and files.  Their outputs are remembered in each worker and in a
folder the pytest-xdist workers share.  A tool that fails is not remembered: it runs again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from codegen.generation.generators import Generators

_REMEMBERED: dict[str, dict[str, bytes]] = {}  # this worker's answers, by key


def _files(path: Path) -> dict[str, bytes]:
    """A file's bytes (under ""), or every file under a folder by its relative path; bytecode left out."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _put(path: Path, files: dict[str, bytes]) -> None:
    """What `_files` read, written back at `path` (a folder's other files removed)."""
    if set(files) == {""}:
        path.write_bytes(files[""])
        return
    if path.is_dir():
        shutil.rmtree(path)
    for rel, data in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(data)
    path.mkdir(parents=True, exist_ok=True)


class MemoToolchain:
    """A `Toolchain` that answers from what the real one produced for the same inputs, and runs it otherwise."""

    def __init__(self, scratch: Path, shared: Path) -> None:
        self.scratch, self.shared = scratch, shared
        self.handed_at: float | None = None
        self._real: Generators | None = None  # started only for what the memo cannot answer
        self._outputs: dict[str, tuple[str, Path]] = {}  # a job that runs for real: its key and its output
        self._answered: list[str] = []  # jobs whose outputs the memo wrote

    def start(self) -> None:
        pass  # the memo mostly answers: a generator's interpreter starts only when it is needed

    def start_jobs(self, jobs: list[tuple[str, list[str]]]) -> None:
        self.handed_at = time.perf_counter()
        missed: list[tuple[str, list[str]]] = []
        for tool, args in jobs:
            key, output = self._job_key(tool, args)
            files = self._recall(key)
            if files is None:
                missed.append((tool, args))
                self._outputs[tool] = (key, output)
            else:
                _put(output, files)
                self._answered.append(tool)
        if missed:
            self._real = Generators(self.scratch)
            self._real.start_jobs(missed)

    def first_finished(self) -> str:
        return self._answered[-1] if self._answered else self._generators().first_finished()

    def wait(self, tool: str) -> None:
        if tool in self._answered:
            return
        self._generators().wait(tool)  # as often as the caller asks: the verdict stays
        if tool in self._outputs:
            key, output = self._outputs.pop(tool)
            self._remember(key, _files(output))

    def format(self, folder: Path) -> None:
        key = self._key("ruff", [json.dumps(sorted(_digests(_files(folder)).items()))])
        files = self._recall(key)
        if files is not None:
            _put(folder, files)
            return
        Generators(self.scratch).format(folder)
        self._remember(key, _files(folder))

    def close(self) -> None:
        if self._real is not None:
            self._real.close()

    def _generators(self) -> Generators:
        assert self._real is not None, "a generator the memo answered for is never waited for for real"
        return self._real

    def _job_key(self, tool: str, args: list[str]) -> tuple[str, Path]:
        """The job's key (its arguments, with what each path in the scratch folder holds) and its output.

        A path may follow an option's prefix (protoc's `-I<folder>`, `--py_out=<folder>`).  The one
        path in the scratch folder that does not exist yet, or is an empty folder, is where the tool writes
        (protoc's two plugins name the same one).
        """
        parts, output = [], None
        scratch = str(self.scratch)
        for arg in args:
            at = arg.find(scratch)
            if at < 0:
                parts.append(arg)
                continue
            prefix, path = arg[:at], Path(arg[at:])
            if path.exists() and not (path.is_dir() and not any(path.iterdir())):
                held = sorted(_digests(_files(path)).items())
                parts.append(prefix + json.dumps([path.relative_to(self.scratch).as_posix(), held]))
            else:
                assert output in (None, path), f"{tool}: two outputs in {args}"
                output = path
                parts.append(prefix + path.relative_to(self.scratch).as_posix())
        assert output is not None, f"{tool}: no output in {args}"
        return self._key(tool, parts), output

    @staticmethod
    def _key(tool: str, parts: list[str]) -> str:
        return hashlib.sha256(json.dumps([tool, *parts]).encode()).hexdigest()

    def _recall(self, key: str) -> dict[str, bytes] | None:
        if key not in _REMEMBERED:
            stored = self.shared / f"{key}.json"
            if not stored.exists():
                return None
            # latin-1 maps each byte to one character and back: the files' exact bytes.
            _REMEMBERED[key] = {rel: text.encode("latin-1") for rel, text in json.loads(stored.read_text()).items()}
        return _REMEMBERED[key]

    def _remember(self, key: str, files: dict[str, bytes]) -> None:
        _REMEMBERED[key] = files
        # Whole or not at all, for the other workers: written aside, then renamed into place.
        fd, temporary = tempfile.mkstemp(dir=self.shared, prefix=".entry-")
        with os.fdopen(fd, "w") as handle:
            json.dump({rel: data.decode("latin-1") for rel, data in files.items()}, handle)
        os.replace(temporary, self.shared / f"{key}.json")


def _digests(files: dict[str, bytes]) -> dict[str, str]:
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}
