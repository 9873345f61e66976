"""The envd protos parsed by the pinned protoc (grpcio-tools'), behind bounds and an import fence.

How it works, and why: docs/maintainers/design.md, "codegen/envd/protos.py".
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2  # type: ignore[import-untyped]  # protobuf ships no stubs

from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR
from toolkit.printable import printable

# Far above envd's (about 35 messages, 3 levels in 300 lines), far below what makes protoc or a
# later walk of the descriptors slow: a hostile runtime commit is refused in milliseconds.
MAX_BYTES = 1024 * 1024
MAX_MESSAGES = 1_000
MAX_NESTING = 32
PROTOC_SECONDS = 60
WELL_KNOWN = "google/protobuf/"
REMEDY = "the envd protos are the runtime's: fix them there, then bump to the fixed commit"

_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\f\v]+)|(?P<newline>\n)|(?P<line_comment>//[^\n]*)|(?P<block_comment>/\*.*?\*/)"""
    r"""|(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(?P<word>[A-Za-z_][A-Za-z0-9_.]*)"""
    r"""|(?P<other>.)""",
    re.DOTALL,
)
_PROTOC_LINE = re.compile(r"(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<said>.*)")


def tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, line) of each token outside comments; an unterminated comment or string is protoc's to report."""
    line = 1
    for match in _TOKEN.finditer(text):
        kind, value = match.lastgroup or "other", match.group()
        if kind in ("word", "string", "other"):
            yield kind, value, line
        line += value.count("\n")


def prescan(path: str, data: bytes, synced: frozenset[str]) -> list[str]:
    """Bounds and the import fence, before protoc reads a byte: the imports this proto makes.

    `synced`: the protos' paths relative to ENVD_DIR, the only files besides the well-known types
    an import may name.  protoc itself would read `/etc/...` or `../x` through its include path.
    """
    if len(data) > MAX_BYTES:
        raise _refuse(path, None, f"is {len(data):,} bytes, more than the {MAX_BYTES:,} an envd proto may have")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _refuse(path, None, f"is not UTF-8 ({error.reason} at byte {error.start})") from None
    imports: list[str] = []
    found = list(tokens(text))
    messages = depth = 0
    for index, (kind, value, line) in enumerate(found):
        if kind == "other" and value == "{":
            depth += 1
            if depth > MAX_NESTING:
                raise _refuse(path, line, f"nests blocks more than {MAX_NESTING} deep")
        elif kind == "other" and value == "}":
            depth -= 1
        elif kind == "word" and value == "message" and _is_declaration(found, index):
            messages += 1
            if messages > MAX_MESSAGES:
                raise _refuse(path, line, f"declares more than {MAX_MESSAGES:,} messages")
        elif kind == "word" and value == "import" and depth == 0:
            named = _imported(found, index)
            if named is None:
                continue  # not an import statement protoc would accept: it says so itself
            if not _inside_fence(named, synced):
                raise _refuse(
                    path,
                    line,
                    f"imports {printable(named)!r}: only the other envd protos (paths relative to {ENVD_DIR}/) "
                    f"and protoc's well-known types ({WELL_KNOWN}...) may be imported",
                )
            imports.append(named)
    return imports


def _is_declaration(tokens: list[tuple[str, str, int]], index: int) -> bool:
    """`message Name {`: not a field or option that happens to be called `message`."""
    following = tokens[index + 1 : index + 3]
    return len(following) == 2 and following[0][0] == "word" and following[1][1] == "{"


def _imported(tokens: list[tuple[str, str, int]], index: int) -> str | None:
    rest = tokens[index + 1 : index + 4]
    if rest and rest[0][1] in ("public", "weak"):
        rest = tokens[index + 2 : index + 4]
    if len(rest) < 2 or rest[0][0] != "string" or rest[1][1] != ";":
        return None
    literal = rest[0][1][1:-1]
    # An escape could spell `..` or `/` in a way the fence does not see: such a name is refused.
    return literal if "\\" not in literal else "\\"


def _inside_fence(name: str, synced: frozenset[str]) -> bool:
    if name in synced:
        return True
    if not name.startswith(WELL_KNOWN) or name.count("/") != 2:
        return False
    folder = well_known_folder()
    return folder is not None and (folder / name).is_file() and not (folder / name).is_symlink()


def well_known_folder() -> Path | None:
    """Where grpcio-tools keeps the well-known types, found without importing it (its import installs finders)."""
    spec = importlib.util.find_spec("grpc_tools")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) / "_proto" if locations else None


def _refuse(path: str, line: int | None, what: str) -> ToolError:
    return ToolError(Problem(what, where=f"{path}:{line}" if line else path, remedy=REMEDY))


def parse_protos(protos: Mapping[str, bytes]) -> bytes:
    """The protos (path under ENVD_DIR/ -> bytes) as protoc's FileDescriptorSet, imports included.

    Each proto passes `prescan` first; protoc then reads copies of them in a private folder, so
    that nothing beside them (the tree, the cache) is on its include path.  Its first error is
    the problem, with the file and line it gives.
    """
    relative = {path.removeprefix(ENVD_DIR + "/"): data for path, data in protos.items()}
    synced = frozenset(relative)
    for rel, data in relative.items():
        prescan(f"{ENVD_DIR}/{rel}", data, synced)
    with tempfile.TemporaryDirectory(prefix="codegen-envd-") as scratch:
        root = Path(scratch) / "protos"
        for rel, data in relative.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        out = Path(scratch) / "descriptors.pb"
        said = _run_protoc(root, out, sorted(relative))
        if said is not None:
            raise _protoc_problem(said, root)
        return out.read_bytes()


def _run_protoc(root: Path, out: Path, names: list[str]) -> str | None:
    """protoc on `names`, in a process of its own (its errors go to its stderr); None when it succeeds."""
    command = [
        sys.executable,
        "-I",
        "-m",
        "grpc_tools.protoc",  # adds the well-known types' folder to the include path itself
        f"-I{root}",
        f"--descriptor_set_out={out}",
        "--include_imports",
        *names,
    ]
    env = {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C.UTF-8", "GRPC_PYTHON_DISABLE_DYNAMIC_STUBS": "1"}
    with subprocess.Popen(
        command,
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=PROTOC_SECONDS)
        except BaseException:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
    if process.returncode == 0:
        return None
    lines = [ln for ln in (stderr + stdout).decode("utf-8", "replace").splitlines() if ln.strip()]
    lines = [ln for ln in lines if ": warning:" not in ln] or lines  # the error, not an unused import
    return lines[0] if lines else f"protoc exited {process.returncode}"


def _protoc_problem(said: str, root: Path) -> ToolError:
    """protoc's line as a problem, the scratch folder's path turned back into the file's under ENVD_DIR."""
    said = said.strip().replace(f"{root}/", "")
    match = _PROTOC_LINE.fullmatch(said)
    if match is None:
        return ToolError(Problem(f"protoc: {printable(said)}", where=ENVD_DIR, remedy=REMEDY))
    where = f"{ENVD_DIR}/{printable(match['file'])}:{match['line']}:{match['column']}"
    return ToolError(Problem(printable(match["said"]), where=where, remedy=REMEDY))


def read_descriptors(data: bytes) -> Any:
    """protoc's FileDescriptorSet as protobuf's message (imported here: only the envd lane needs protobuf)."""
    return descriptor_pb2.FileDescriptorSet.FromString(data)


def name_problems(descriptors: Any, files: frozenset[str]) -> list[Problem]:
    """Each service or RPC of the envd protos (`files`, relative to ENVD_DIR) whose name Python cannot use.

    The generated clients turn them into classes and methods: a keyword or a name that is not an
    identifier would be a syntax error there, or a method that shadows another.
    """
    problems: list[Problem] = []
    for file in descriptors.file:
        if file.name not in files:
            continue  # a well-known type
        for service in file.service:
            names = [("service", service.name)] + [("RPC", f"{service.name}.{m.name}") for m in service.method]
            for what, dotted in names:
                name = dotted.rpartition(".")[2]
                if not name.isidentifier() or keyword.iskeyword(name):
                    problems.append(
                        Problem(
                            f"the {what} name {printable(dotted)!r} is not a Python identifier, or is a keyword",
                            where=f"{ENVD_DIR}/{file.name}",
                            remedy=REMEDY,
                        )
                    )
    return problems
