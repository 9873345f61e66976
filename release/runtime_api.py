"""What a package exports at run time, on the base side and the new side, and the breaks between them.

How it works, and why: docs/maintainers/design.md, "release/runtime_api.py".
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from python_api.compare import ApiDiff, signature_breaks
from python_api.model import PUBLIC_TREES, Parameter, import_packages
from release.errors import Problem, ReleaseError
from release.packages import Package
from toolkit.printable import printable

PROBE = Path(__file__).with_name("runtime_probe.py")
PROBE_TIMEOUT = 60.0  # seconds for one side: imports of a real package take one or two
_SHOWN = 5  # last lines of a failed probe's output


@dataclass(frozen=True)
class Entry:
    kind: str  # module, class, function, attribute
    parameters: list[Parameter] | None = None  # a function's, when the interpreter can tell its signature


@dataclass(frozen=True)
class RuntimeApi:
    """One side as the interpreter sees it."""

    objects: dict[str, Entry]  # public path -> what it is
    missing: dict[str, str]  # path -> why it is not there: an `__all__` name or a module that did not load


def _read_listing(path: Path) -> RuntimeApi:
    """The probe's listing; ValueError, KeyError or TypeError when it is not what the probe writes."""
    listing = json.loads(path.read_text(encoding="utf-8"))
    objects: dict[str, Entry] = {}
    for key, entry in listing["objects"].items():
        kind, parameters = entry["kind"], entry.get("parameters")
        if not isinstance(kind, str):
            raise TypeError(kind)
        if parameters is not None:
            parameters = [(str(n), str(k), None if d is None else str(d)) for n, k, d in parameters]
        objects[str(key)] = Entry(kind, parameters)
    return RuntimeApi(objects, {str(k): str(v) for k, v in listing["missing"].items()})


def with_runtime_breaks(diff: ApiDiff, package: Package, old_dir: Path, new_dir: Path) -> ApiDiff:
    """`diff` (griffe's) and the breaks only the run-time view finds; a new package has nothing to break."""
    if not old_dir.is_dir():
        return diff
    old, new = probe(package, [old_dir, new_dir])
    found = tuple(b for b in runtime_breaks(old, new) if not _said(b, diff.breaks))
    return replace(diff, breaks=diff.breaks + found) if found else diff


def _said(line: str, static: tuple[str, ...]) -> bool:
    """griffe named this break, or removed an object above it."""
    bare = line.partition(" at run time")[0]
    path = bare.partition(":")[0].partition("(")[0]
    for said in static:
        if said == bare:
            return True
        above, _, what = said.partition(": ")
        if what.endswith(" removed") and "(" not in above and (path == above or path.startswith(above + ".")):
            return True
    return False


def runtime_breaks(old: RuntimeApi, new: RuntimeApi) -> Iterator[str]:
    for path, was in old.objects.items():
        now = new.objects.get(path)
        if now is None:
            if _removed_above(path, old, new):
                continue  # a removed module's or class's members are removed with it: name it alone
            why = new.missing.get(path)
            yield f"{path}: {was.kind} removed at run time" + (f" ({printable(why)})" if why else "")
        elif now.kind != was.kind:
            yield f"{path}: was a {was.kind}, now a {now.kind} at run time"
        elif was.parameters is not None:
            if now.parameters is None:
                yield f"{path}: its signature cannot be read at run time"
                continue
            for line in signature_breaks(path, was.parameters, now.parameters):
                yield f"{line} at run time"
    for path, why in new.missing.items():
        if path not in old.objects and path not in old.missing:  # e.g. a new `__all__` name that is not there
            yield f"{path}: does not resolve at run time ({printable(why)})"


def _removed_above(path: str, old: RuntimeApi, new: RuntimeApi) -> bool:
    """The nearest object above `path` that the old side has is gone from the new one."""
    while "." in path:
        path = path.rpartition(".")[0]
        if path in old.objects:
            return path not in new.objects
    return False


def probe(package: Package, sides: list[Path]) -> list[RuntimeApi]:
    """Each side's run-time view of `package` (its folder on that side), probed side by side."""
    with tempfile.TemporaryDirectory(prefix="e2b-api-runtime-") as tmp:
        scratch = Path(tmp)
        python = _interpreter(scratch)
        running = [_start(package, side, scratch / str(n), python) for n, side in enumerate(sides)]
        try:
            deadline = time.monotonic() + PROBE_TIMEOUT
            return [
                _finish(package, side, process, folder, deadline)
                for side, (process, folder) in zip(sides, running, strict=True)
            ]
        finally:
            for process, _ in running:
                _stop(process)


def _interpreter(scratch: Path) -> Path:
    """An empty virtual environment of this Python: site runs as a user's does, on nothing of this machine's.

    Its site-packages is empty (no `.pth`, none of this checkout's editable installs), and a virtual
    environment has no user site; the probe's folder and HOME are fresh.
    """
    venv = scratch / "venv"
    argv = [sys.executable, "-m", "venv", "--without-pip", str(venv)]
    try:
        done = subprocess.run(argv, env=_environment(scratch), capture_output=True, text=True, timeout=PROBE_TIMEOUT)
        failed = f"exit {done.returncode}" if done.returncode else ""
        output = done.stdout + done.stderr
    except (OSError, subprocess.TimeoutExpired) as error:
        failed, output = type(error).__name__, ""
    if failed:
        raise ReleaseError(
            Problem(
                f"`python -m venv` failed ({failed}), so the run-time view of the Python API cannot be taken",
                detail=tuple(output.splitlines()[-_SHOWN:]),
                remedy="repair this Python's venv module (Debian: apt-get install python3-venv), then run again",
            )
        )
    (scratch / "home").mkdir()
    (scratch / "probe").mkdir()
    shutil.copyfile(PROBE, scratch / "probe" / PROBE.name)
    return venv / "bin" / "python"


def _environment(scratch: Path) -> dict[str, str]:
    """What a user's shell gives a program: PATH and HOME (an empty one), and nothing of this run's (no secret)."""
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(scratch / "home")}


def _start(package: Package, package_dir: Path, folder: Path, python: Path) -> tuple[subprocess.Popen[bytes], Path]:
    folder.mkdir()
    siblings = sorted(p for p in package_dir.parent.glob("*/pyproject.toml") if p.parent != package_dir)
    names = import_packages(package_dir)
    scratch = folder.parent
    request = {
        "paths": [str(package_dir), *(str(p.parent) for p in siblings)],
        "site": sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}),
        "packages": names,
        "trees": [t for t in PUBLIC_TREES.get(package.name, ()) if t.partition(".")[0] in names],
        "out": str(folder / "listing.json"),
    }
    request_file = folder / "request.json"
    request_file.write_text(json.dumps(request), encoding="utf-8")
    with (folder / "output.txt").open("wb") as output:
        process = subprocess.Popen(
            # No -I, -S, -B or -E: sys.flags would tell a package it is being probed, as an empty environment did.
            [str(python), str(scratch / "probe" / PROBE.name), str(request_file)],
            cwd=folder,
            env=_environment(scratch),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            process_group=0,  # whatever the imports start is stopped with it
        )
    return process, folder


def _finish(
    package: Package, side: Path, process: subprocess.Popen[bytes], folder: Path, deadline: float
) -> RuntimeApi:
    try:
        code = process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise ReleaseError(
            Problem(
                f"{package.name}: importing it from {side} did not finish within {PROBE_TIMEOUT:g} s "
                "(the Python API check imports each side's packages)",
                detail=_tail(folder),
                remedy="make the package importable without waiting on anything",
            )
        ) from None
    try:
        return _read_listing(folder / "listing.json")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise ReleaseError(
            Problem(
                f"{package.name}: the run-time view of {side} could not be taken (the probe exited {code} "
                "without its listing)",
                detail=_tail(folder),
                remedy="make `import` of the package return normally (no os._exit, no crash), then run again",
            )
        ) from None


def _tail(folder: Path) -> tuple[str, ...]:
    try:
        with (folder / "output.txt").open("rb") as output:
            output.seek(max(0, output.seek(0, os.SEEK_END) - 4096))
            text = output.read().decode("utf-8", "replace")
    except OSError:
        return ()
    return tuple(line for line in text.splitlines()[-_SHOWN:])


def _stop(process: subprocess.Popen[bytes]) -> None:
    """The probe's whole process group, gone (it may have started processes of its own)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
