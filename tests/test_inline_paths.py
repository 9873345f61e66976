"""Every file path the docs, READMEs and comments name is a file of this repository.

Links are checked by tests/test_docs.py; this checks the paths written as text
(`codegen/config.py`, "see tests/codegen/commands/test_bump.py"), which go stale
silently when a module moves, bare module names in code spans, and `path.py NAME` references, whose NAME must
still be defined there. A path counts from the root, from the folder or the top folder of
the file that names it (`generation/x.json` in codegen/), from docs/ (mkdocs.yml's nav), or from a
package's folder (`e2b/_http.py`); a NAME defined nowhere is a placeholder (`probe.py REQUEST`).
Not read: the tests (their paths are scratch files they make), the generated
folders and the upstream history (spec text), and the changelogs and
benchmarks/HISTORY.md (history names the paths of its day).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READ = (".md", ".py", ".toml", ".yml", ".yaml", ".jinja", ".sh", ".cfg")
NOT_READ = (
    "tests/",
    "packages/python-sdk/e2b/api/",
    "packages/local-api/e2b_local_api/wire/",
    "spec/openapi.yml",
    "spec/upstream-history/",
    "benchmarks/HISTORY.md",  # the benchmarks' dated sittings: like a changelog, it names the paths of its day
)
PACKAGE_FOLDERS = ("packages/python-sdk/", "packages/cli/", "packages/local-api/")
# Paths that are not this repository's, each for a reason.
ELSEWHERE = (
    "base/",  # the required check's checkout of the base revision (generated-files.yml)
    "tree/",  # and of the pull request's tree
    "property_templates/",  # openapi-python-client's own templates, which ours import
)
# Bare module names that are not this repository's, each for a reason.
NOT_OURS = (
    "sitecustomize.py",  # Python's own startup hook, named where a planted one is discussed
    "quickstart.py",  # the user's script in the SDK guide's example
)
# An example fragment: any name under a changelog.d folder is one a maintainer would write.
FRAGMENT = re.compile(r"(^|/)changelog\.d/[^/]+\.md$")
PATH = re.compile(
    r"(?<![\w./~:$}-])((?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)+[A-Za-z0-9_.-]+"
    r"\.(?:py|md|yml|yaml|toml|json|txt|in|jinja|cfg|sh|lock|patch|cjs))(?![\w/])"
)
# A bare module name in a code span (`history.py`): some tracked file must have that name.
BARE = re.compile(r"`([A-Za-z0-9_][A-Za-z0-9_.-]*\.py)`")
# `codegen/config.py GENERATED_ROOTS`, with or without backticks: a constant named after its module.
NAMED = re.compile(r"([\w./-]+\.py)`?\s+`?([A-Z][A-Z0-9_]{2,})\b")


def tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def read_files(files: list[str]) -> list[str]:
    return [
        name
        for name in files
        if name.endswith(READ) and not name.startswith(NOT_READ) and not name.endswith("CHANGELOG.md")
    ]


def resolve(path: str, where: str, files: set[str]) -> str | None:
    """The tracked file `path` names: from the root, the naming file's folder or top folder, docs/, a package."""
    here = str(Path(where).parent) + "/" if "/" in where else ""
    top = where.split("/", 1)[0] + "/" if "/" in where else ""
    for base in ("", here, top, "docs/", *PACKAGE_FOLDERS):
        if base + path in files:
            return base + path
    return None


def defines(source: str, name: str) -> bool:
    return re.search(rf"^{name}\b[^=\n]*=|^(def|class) {name}\b", source, flags=re.M) is not None


def stale_paths(root: Path, files: list[str]) -> list[str]:
    known = set(files)
    basenames = {name.rsplit("/", 1)[-1] for name in files}
    python = {name: (root / name).read_text(encoding="utf-8") for name in files if name.endswith(".py")}
    stale = []
    for name in read_files(files):
        text = (root / name).read_text(encoding="utf-8")
        for match in PATH.finditer(text):
            path = match.group(1)
            if path.startswith(ELSEWHERE) or FRAGMENT.search(path) or resolve(path, name, known):
                continue
            stale.append(f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {path}")
        for match in BARE.finditer(text):
            if match.group(1) not in basenames and match.group(1) not in NOT_OURS:
                stale.append(f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(1)}")
        for match in NAMED.finditer(text):
            found = resolve(match.group(1), name, known)
            constant = match.group(2)
            if found is None or not found.endswith(".py"):
                continue  # a missing path is said above
            if not defines(python[found], constant) and any(defines(s, constant) for s in python.values()):
                line = text.count(chr(10), 0, match.start()) + 1
                stale.append(f"{name}:{line}: {found} does not define {constant}")
    return stale


def test_every_path_the_docs_and_comments_name_exists() -> None:
    stale = stale_paths(ROOT, tracked())
    assert not stale, "paths that name no file (or no such constant) of this repository:\n" + "\n".join(stale)


def test_a_moved_module_and_a_moved_constant_are_caught(tmp_path: Path) -> None:
    """The check itself, on a file list where a doc names a module that moved and a constant it lost."""
    files = ["docs/page.md", "codegen/config.py", "codegen/generation/stage.py"]
    texts = {
        "docs/page.md": "See `codegen/stage.py` and codegen/generation/stage.py GENERATED_ROOTS (`stage.py ARGS`).\n"
        "Renamed: `upstream_history.py`.\n",
        "codegen/config.py": "GENERATED_ROOTS = ()\n",
        "codegen/generation/stage.py": "def stage() -> None: ...\n",
    }
    for name, text in texts.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert stale_paths(tmp_path, files) == [
        "docs/page.md:1: codegen/stage.py",
        "docs/page.md:2: upstream_history.py",
        "docs/page.md:1: codegen/generation/stage.py does not define GENERATED_ROOTS",
    ]
