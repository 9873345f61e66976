"""Bump's check of this repository's own code against the regenerated client: import it, type-check it.

How it works, and why: docs/maintainers/design.md, "codegen/commands/handwritten.py".
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.api_changes.report import ApiChangeReport, code_span
from codegen.messages import Messages
from codegen.tree.file_lock import held
from toolkit.cache_folder import cache_root
from toolkit.errors import Problem, ToolError
from toolkit.paths import GENERATED_ROOTS, Project
from toolkit.printable import printable
from toolkit.read import holds_exactly
from toolkit.records import Records

# The hand-written packages and their import names (what `nox -s lint` type-checks besides codegen and release).
PACKAGES: tuple[str, ...] = (
    "packages/python-sdk/e2b",
    "packages/cli/e2b_cli",
    "packages/local-api/e2b_local_api",
)
SECTION_TITLE = "## Hand-written code to update"
IMPORT_TIMEOUT = 120.0  # seconds for importing every package once
MYPY_TIMEOUT = 300.0
_SHOWN = 40  # entries in the section; the rest are counted
_DRIVER = """\
import importlib, json, sys, traceback
out = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        frames = [[f.filename, f.lineno] for f in traceback.extract_tb(exc.__traceback__)]
        if isinstance(exc, SyntaxError) and exc.filename:
            frames.append([exc.filename, exc.lineno or 0])
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        out.append({"package": name, "type": type(exc).__name__, "message": str(exc), "frames": frames,
                    "missing": missing})
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Finding:
    """One problem a check found: where (relative to the checked root), what, and which check said it."""

    path: str
    line: int
    message: str
    code: str  # mypy's error code; "import" for an import; "syntax" for a module that does not parse

    @property
    def key(self) -> tuple[str, int, str, str]:
        return (self.path, self.line, self.code, self.message)


@dataclass(frozen=True)
class Breakage:
    """A place in this repository's code that the regenerated client breaks."""

    path: str  # packages/python-sdk/e2b/_sandbox_logic.py
    line: int
    message: str  # mypy's, or the import's exception
    said_by: str  # "mypy", "import", "parse"
    used: str | None  # the generated name it used: e2b.api.client.models.SandboxState
    became: str | None  # what that name became: "`SandboxLifecycle` (model renamed at `...`; griffe: ...)"
    generated: bool  # the place itself is a generated file (an overlay rendered from templates/, a sync twin)
    new: bool = True  # broken by this bump; False: broken before it, and still

    def render(self) -> str:
        where = code_span(f"{printable(self.path)}:{self.line}")
        line = f"- {where}{' (**new**)' if self.new else ''}: "
        if self.used:
            line += f"uses {code_span(printable(self.used))}"
            line += f", now {self.became}" if self.became else ""
            line += "; "
        line += f"{self.said_by}: {code_span(printable(self.message))}"
        if self.generated:
            line += " (a generated file: its template, its async source or the spec)"
        return line


@dataclass(frozen=True)
class Verdict:
    """What the check found: the section (empty when nothing broke) and its breakages."""

    breakages: tuple[Breakage, ...]
    section: str

    @property
    def broken(self) -> bool:
        return bool(self.breakages)


@contextmanager
def handwritten_check(project: Project, generated: Mapping[str, bytes], messages: Messages) -> Iterator[PendingCheck]:
    """Start importing and type-checking the hand-written packages against `generated` (the staged files).

    The checks run in processes of their own while the block runs (bump's griffe step: two cores);
    `PendingCheck.verdict` waits for them.  Leaving the block stops whatever still runs.  Unchanged
    generated files are checked too, as the tree holds them: a bump must not pass over code an
    earlier bump left broken (its findings are usually remembered: that bump's own).
    """
    unchanged = generated_unchanged(project, generated)
    if importlib.util.find_spec("mypy") is None:
        raise ToolError(
            Problem(
                "bump type-checks this repository's code against the regenerated client with mypy, "
                f"which {sys.executable} lacks",
                remedy="run it as `nox -s bump -- <ref>` (requirements/codegen.txt has mypy), or install "
                "requirements/codegen.txt into this interpreter",
            )
        )
    started = time.perf_counter()
    folder = cache_root(project) / "typecheck"
    folder.mkdir(mode=0o700, exist_ok=True)
    with (
        held(folder / "lock", f"the type-check cache {folder}", messages),
        tempfile.TemporaryDirectory(prefix="tree-", dir=folder) as scratch,
    ):
        context = _Context(project, folder, messages, started, Records(project, "typecheck-findings", {}))
        pending = PendingCheck(context)
        try:
            if unchanged:  # the copy would be the tree: the tree itself is checked
                messages("typecheck  the generated files are unchanged: the tree as it is")
                pending.start(_Copy(project.root, _digest(_planned(project.root, None), project)), lambda: None)
            else:  # the copy is made only when its findings are not remembered: its digest is the plan's
                copy = _Copy(Path(scratch), _digest(_planned(project.root, generated), project))
                pending.start(copy, lambda: _copy_packages(project.root, copy.root, generated))
            yield pending
        finally:
            pending.stop()


@dataclass(frozen=True)
class _Context:
    project: Project
    folder: Path  # typecheck/ in the cache folder: mypy's cache
    messages: Messages
    started: float
    # The findings by the digest of what was checked (`_digest`, which says what they depend on).
    findings: Records


class PendingCheck:
    """The check of the copy, under way; `verdict` is its answer less the tree's own (the baseline)."""

    def __init__(self, context: _Context | None) -> None:
        self._context = context
        self._checks: list[_Check] = []

    def start(self, copy: _Copy, make: Callable[[], None]) -> None:
        """Check the packages in `copy`, made by `make` unless their findings are remembered."""
        assert self._context is not None
        self._checks.append(_Check(copy, self._context, make))

    def verdict(self, report: ApiChangeReport, python_breaks: Sequence[str]) -> Verdict:
        """Every problem the code has against the regenerated client, those the bump brought marked new.

        Every one counts (exit 3), however it arose: a bump after one that left the code broken is
        no cleaner for it.  Said in one step line.
        """
        if self._context is None or not self._checks:
            return Verdict((), "")
        after = self._checks[0].findings()
        known: set[tuple[str, int, str, str]] = set()
        if after:
            root = self._context.project.root
            baseline = _Check(_Copy(root, _digest(_planned(root, None), self._context.project)), self._context)
            self._checks.append(baseline)
            known = {finding.key for finding in baseline.findings()}
        found = _dedupe(after)
        breakages = tuple(_breakage(f, report, python_breaks, new=f.key not in known) for f in found)
        self._context.messages.step_done(
            "typecheck",
            time.perf_counter() - self._context.started,
            f"mypy {_mypy_version()} --strict and an import of each package, alongside python api: "
            f"{len(breakages)} problem(s), {sum(b.new for b in breakages)} new",
        )
        return Verdict(breakages, render_section(breakages) if breakages else "")

    def stop(self) -> None:
        for check in self._checks:
            check.stop()


def render_section(breakages: Sequence[Breakage]) -> str:
    new = sum(b.new for b in breakages)
    before = len(breakages) - new
    lines = [
        SECTION_TITLE,
        "",
        "This repository's own code does not work with the regenerated client (`mypy --strict` with the lint "
        "configuration, and an import of each package, on a copy of the tree with the regenerated files). The "
        "tree and the fragment are written: fix these in the same pull request.",
        "",
        f"{new} place(s) marked **new** break with this bump; {before} were broken before it and still are.",
        "",
        *(breakage.render() for breakage in sorted(breakages, key=lambda b: not b.new)[:_SHOWN]),
    ]
    if len(breakages) > _SHOWN:
        lines.append(f"- and {len(breakages) - _SHOWN} more")
    return "\n".join(lines) + "\n"


# --- the two checks -----------------------------------------------------------------


@dataclass(frozen=True)
class _Copy:
    """Where the packages checked are (or are to be copied), and the digest of what they hold."""

    root: Path
    digest: str


class _Check:
    """Every finding on the packages under `root`: remembered by the digest of what was checked, else run.

    The import and mypy start at once, each in its own session; `findings` waits for both.
    """

    def __init__(self, copy: _Copy, context: _Context, make: Callable[[], None] = lambda: None) -> None:
        self.root = root = copy.root
        self.context = context
        self.digest = copy.digest.encode()
        self.known = _findings_from(context.findings.recall(self.digest))
        self.processes: list[_Process] = []
        if self.known is None:  # not checked before (or an entry that is not findings): check now
            make()
            self.processes = [
                _Process(_import_command(root), None, IMPORT_TIMEOUT, "the import of the packages", env={}),
                _Process(_mypy_command(context), root, MYPY_TIMEOUT, "mypy"),
            ]

    def findings(self) -> list[Finding]:
        if self.known is None:
            imports, mypy = self.processes
            found = _import_findings(imports.output(), self.root, self.context.messages)
            found += _mypy_findings(mypy.output())
            self.context.findings.remember(self.digest, [finding.__dict__ for finding in found])
            self.known = found
        return self.known

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


def _findings_from(entries: object) -> list[Finding] | None:
    """The findings a remembered value holds; None when it is not one `_Check.findings` wrote."""
    if not isinstance(entries, list):
        return None
    try:
        known = [Finding(**entry) for entry in entries]
    except TypeError:
        return None
    for finding in known:
        texts = (finding.path, finding.message, finding.code)
        if type(finding.line) is not int or not all(isinstance(text, str) for text in texts):
            return None
    return known


class _Process:
    """A check's process, started now in a session of its own; `output` is its standard output once done."""

    def __init__(
        self, command: list[str], cwd: Path | None, timeout: float, what: str, env: dict[str, str] | None = None
    ) -> None:
        self.what = what
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        # A folder of its own to run in when none is given: nothing of the tree is its working directory.
        self.scratch = tempfile.TemporaryDirectory(prefix="cwd-") if cwd is None else None
        self.process = subprocess.Popen(
            command,
            cwd=cwd if cwd is not None else self.scratch.name if self.scratch else None,
            env=env if env is not None else {"PATH": os.environ.get("PATH", os.defpath)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def output(self) -> str:
        try:
            out, err = self.process.communicate(timeout=max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.stop()
            raise ToolError(Problem(f"{self.what} took more than {self.timeout:g} s; stopped it")) from None
        code = self.process.returncode
        if code not in (0, 1, 2) or (code and not out.strip()):
            tail = tuple(printable(line) for line in err.strip().splitlines()[-5:])
            raise ToolError(Problem(f"{self.what} failed (exit {code})", detail=tail))
        return out

    def stop(self) -> None:
        """Kill it (its whole process group) if it still runs; its scratch folder goes."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.communicate()
        if self.scratch is not None:
            self.scratch.cleanup()


def _mypy_command(context: _Context) -> list[str]:
    return [
        sys.executable,
        "-I",
        "-m",
        "mypy",
        "--config-file",
        str(context.project.pyproject),
        "--cache-dir",
        str(context.folder / "mypy"),
        "--output",
        "json",
        "--no-error-summary",
        *PACKAGES,
    ]


def _mypy_findings(output: str) -> list[Finding]:
    found = []
    for line in output.splitlines():
        try:
            entry = json.loads(line)
            finding = Finding(
                str(entry["file"]), int(entry["line"]), _mypy_message(entry), str(entry.get("code") or "")
            )
        except (ValueError, KeyError, TypeError):
            continue  # mypy's own notes about the run, not about a line
        if entry.get("severity") == "error":
            found.append(finding)
    return found


def _mypy_message(entry: Mapping[str, Any]) -> str:
    code = entry.get("code")
    return f"{entry['message']} [{code}]" if code else str(entry["message"])


def _import_command(root: Path) -> list[str]:
    names = [Path(package).name for package in PACKAGES]
    paths = [str(root / Path(package).parent) for package in PACKAGES]
    site = list(dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib")))
    bootstrap = f"import sys; sys.path[:0] = {[*paths, *site]!r}; sys.argv[0] = ''\n"
    return [sys.executable, "-I", "-S", "-B", "-c", bootstrap + _DRIVER, *names]


def _import_findings(output: str, root: Path, messages: Messages) -> list[Finding]:
    names = [Path(package).name for package in PACKAGES]
    try:
        failures = json.loads(output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise ToolError(
            Problem(f"the import of {', '.join(names)} printed no verdict: {printable(output[-400:])}")
        ) from None
    found = []
    for failure in failures:
        missing = str(failure.get("missing") or "")
        if missing and missing.split(".")[0] not in names:
            messages(f"typecheck: {failure['package']} not imported here ({missing} is not installed); mypy checks it")
            continue
        path, line = _deepest_own_frame(failure["frames"], root)
        message = f"{failure['type']}: {failure['message']}"
        found.append(Finding(path, line, message, "syntax" if failure["type"] == "SyntaxError" else "import"))
    return found


def _deepest_own_frame(frames: Sequence[Sequence[Any]], root: Path) -> tuple[str, int]:
    """The innermost frame in a hand-written file of the copy (else in any file of it): the line to fix."""
    own: list[tuple[str, int]] = []
    for filename, line in frames:
        path = Path(str(filename))
        if path.is_absolute() and path.is_relative_to(root):
            own.append((path.relative_to(root).as_posix(), int(line or 0)))
    handwritten = [frame for frame in own if not _is_generated(frame[0])]
    return (handwritten or own or [("(unknown)", 0)])[-1]


# --- the copy, its digest -------------------------------------------------------------


def _is_generated(path: str) -> bool:
    return path.startswith(tuple(f"{root}/" for root in GENERATED_ROOTS))


def _planned(root: Path, generated: Mapping[str, bytes] | None) -> dict[str, bytes]:
    """Path -> sha256 of each file in the packages, as `_copy_packages` would make them (None: as the tree has them)."""
    planned = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*"):
            rel = path.relative_to(root).as_posix()
            if "__pycache__" in path.parts:
                continue
            if path.is_symlink():
                # The copy would keep it, and mypy and the import would read through it, out of the tree.
                raise ToolError(
                    Problem(
                        f"{printable(rel)} is a symlink; bump's check of the hand-written code reads no file "
                        "through one",
                        remedy="replace it with the regular file or folder from git, or delete it, then run again",
                    )
                )
            if path.is_file() and not (generated is not None and _is_generated(rel)):
                planned[rel] = hashlib.sha256(path.read_bytes()).digest()
    for rel, data in (generated or {}).items():
        if rel.startswith(tuple(f"{package}/" for package in PACKAGES)):
            planned[rel] = hashlib.sha256(data).digest()
    return planned


def generated_unchanged(project: Project, generated: Mapping[str, bytes]) -> bool:
    """Whether `generated` is what the tree's generated folders hold, file for file."""
    return all(_is_generated(rel) for rel in generated) and holds_exactly(project.root, GENERATED_ROOTS, generated)


def _copy_packages(source: Path, dest: Path, generated: Mapping[str, bytes]) -> None:
    """The hand-written packages of `source` into `dest`, their generated folders replaced by `generated`."""
    for package in PACKAGES:
        shutil.copytree(source / package, dest / package, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in GENERATED_ROOTS:
        shutil.rmtree(dest / folder, ignore_errors=True)
    for rel, data in generated.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _digest(files: Mapping[str, bytes], project: Project) -> str:
    """What a check's answer depends on: the files checked, the configuration, mypy and the installed distributions."""
    digest = hashlib.sha256()
    for part in (sys.version, sys.prefix, _mypy_version(), *_installed(), _DRIVER, *PACKAGES):
        digest.update(part.encode() + b"\0")
    digest.update(hashlib.sha256(project.pyproject.read_bytes()).digest())
    for rel, sha in sorted(files.items()):
        digest.update(os.fsencode(rel) + b"\0" + sha)
    return digest.hexdigest()


def _installed() -> list[str]:
    """Every distribution on sys.path, by its metadata folder's name (name and version; no metadata parsed)."""
    found = []
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        found += [f"{entry}/{name}" for name in names if name.endswith((".dist-info", ".egg-info"))]
    return sorted(found)


def _mypy_version() -> str:
    try:
        return importlib.metadata.version("mypy")
    except importlib.metadata.PackageNotFoundError:
        return "(none)"


# --- what a problem means: the generated name it used, what that became --------------------

_USED = (
    re.compile(r'Module "(?P<module>[\w.]+)" has no attribute "(?P<name>\w+)"'),
    re.compile(
        r'(?:Cannot find implementation or library stub for module named|No module named) ["\'](?P<module>[\w.]+)["\']'
    ),
    re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'"),
    re.compile(r'"(?P<module>[\w.]+)" has no attribute "(?P<name>\w+)"'),
    re.compile(r'Unexpected keyword argument "(?P<name>\w+)" for "(?P<module>[\w.]+)"'),
    re.compile(r'Name "(?P<name>\w+)" is not defined'),
)


def _used_name(message: str) -> str | None:
    for pattern in _USED:
        found = pattern.search(message)
        if found:
            parts = found.groupdict()
            return ".".join(part for part in (parts.get("module"), parts.get("name")) if part)
    return None


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _became(used: str, report: ApiChangeReport, python_breaks: Sequence[str]) -> str | None:
    """What `used` became: the report's rename of it (its class, or its module), and griffe's verdict on it."""
    leaf = used.rsplit(".", 1)[-1]
    name, why = None, []
    for change in report.changes:
        if change.kind != "model renamed" or " -> " not in change.detail:
            continue
        old, new = change.detail.split(" -> ", 1)
        if leaf in (old, _snake(old)):
            name = code_span(printable(new if leaf == old else _snake(new)))
            why.append(f"model renamed at {code_span(printable(change.location))}")
            break
    for verdict in python_breaks:
        path, _, what = verdict.partition(": ")
        if path == used or path.endswith(f".{used}"):
            why.append(f"griffe: {printable(what)}")
            break
    if not why:
        return None
    return f"{name or 'gone'} ({'; '.join(why)})"


def _breakage(problem: Finding, report: ApiChangeReport, python_breaks: Sequence[str], *, new: bool) -> Breakage:
    used = _used_name(problem.message) if problem.code != "syntax" else None
    became = _became(used, report, python_breaks) if used else None
    said_by = "does not parse" if problem.code == "syntax" else "import" if problem.code == "import" else "mypy"
    generated = _is_generated(problem.path)
    return Breakage(problem.path, problem.line, problem.message, said_by, used, became, generated, new)


def _dedupe(problems: Iterable[Finding]) -> list[Finding]:
    """One problem per place: mypy and the import often say the same line; mypy's words are the more precise.

    A module that does not parse is one problem, at its first error: what the parser says after it follows from it.
    """
    seen: dict[tuple[str, int], Finding] = {}
    unparsed: set[str] = set()
    for problem in sorted(problems, key=lambda p: (p.path, p.line, p.code == "import", p.message)):
        if problem.path in unparsed:
            continue
        if problem.code == "syntax":
            unparsed.add(problem.path)
            seen = {place: found for place, found in seen.items() if place[0] != problem.path}
        seen.setdefault((problem.path, problem.line), problem)
    return list(seen.values())
