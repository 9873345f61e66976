"""The replay (issue 30): a short real-shape history, bumped one revision after another as release PRs would.

R0 is the runtime's spec as upstream writes it (../shared/fixtures/e2b-openapi.yml) with the pause contract:
tests/codegen/test_real_upstream.py's bump, built once per run and shared here.  Then five revisions made
from it in code, each a kind of change that the replay of the real API's history once got wrong:

1. a case-only rename of a header in two security schemes the SDK never sends: no change (`misc`);
2. two auth alternatives the SDK does not use dropped from every operation that has them: notes (`misc`);
3. an alternative the SDK cannot use added to those operations: notes (`misc`);
4. a documented response header the generated client does not surface: `patch` (`fix`);
5. `SandboxState` renamed, which the hand-written SDK (`e2b/_sandbox_logic.py`) and the local server import:
   `major` (`breaking`), the "Hand-written code to update" section naming each import, exit 3, the
   regenerated tree and the fragment written.

Each bump runs on the tree the one before it left, its fragment then released (moved out: each report is
its revision's own), in a real git repository copied from the shared one, with the cache folder (mypy's
cache among it) the shared bump warmed.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from codegen.api_changes.compare import WHY_HEADER_NOT_SURFACED, WHY_OTHER_CREDENTIAL
from codegen.commands.handwritten import SECTION_TITLE
from tests.codegen import test_real_upstream as real_shape
from tests.codegen.conftest import Result, Upstream, run_in_process, unchanged
from tests.fixtures import needs_real_spec
from tests.once_per_run import build_once
from toolkit.errors import EXIT_CANNOT_RUN, EXIT_HANDWRITTEN

pytestmark = [needs_real_spec, pytest.mark.slow]  # slow: the replay, built once for the module

# The real-shape upstream and the project bumped to it (R0), from tests/codegen/test_real_upstream.py.
real_upstream = real_shape.real_upstream
bumped = real_shape.bumped

CHANGELOG = "packages/python-sdk/changelog.d"
SECURITY_BLOCK = (
    "      security:\n"
    "        - ApiKeyAuth: []\n"
    "        - AuthProviderBearerAuth: []\n"
    "          AuthProviderTeamAuth: []\n"
    "        - AdminApiKeyAuth: []\n"
    "          AdminTeamAuth: []\n"
)


def replace_all(text: str, old: str, new: str, *, at_least: int = 1) -> str:
    assert text.count(old) >= at_least, f"expected {old!r} in the spec"
    return text.replace(old, new)


def team_header_case(text: str) -> str:
    """X-Team-ID becomes X-Team-Id in AuthProviderTeamAuth and AdminTeamAuth: HTTP reads both alike."""
    return replace_all(text, "      name: X-Team-ID\n", "      name: X-Team-Id\n", at_least=2)


def drop_dashboard_alternatives(text: str) -> str:
    """The two dashboard token alternatives leave every operation that also takes the SDK's API key."""
    case_fixed = SECURITY_BLOCK.replace("X-Team-ID", "X-Team-Id")
    return replace_all(text, case_fixed, "      security:\n        - ApiKeyAuth: []\n", at_least=10)


def add_bearer_alternative(text: str) -> str:
    """Those operations gain a bearer-token alternative, which the SDK cannot send."""
    only_key = "      security:\n        - ApiKeyAuth: []\n      "
    return replace_all(
        text,
        only_key,
        "      security:\n        - ApiKeyAuth: []\n        - AuthProviderBearerAuth: []\n      ",
        at_least=10,
    )


def document_request_id_header(text: str) -> str:
    """listSandboxes documents a response header the generated client does not surface."""
    anchor = '            X-Total-Running:\n              $ref: "#/components/headers/XTotalRunning"\n'
    header = "            X-Request-ID:\n              description: The request's id, for support.\n"
    header += "              schema:\n                type: string\n"
    assert text.count(anchor) == 1
    return text.replace(anchor, anchor + header)


def rename_sandbox_state(text: str) -> str:
    """SandboxState becomes SandboxLifecycleState: the same JSON, another generated class."""
    text = replace_all(text, '"#/components/schemas/SandboxState"', '"#/components/schemas/SandboxLifecycleState"')
    return replace_all(text, "\n    SandboxState:\n", "\n    SandboxLifecycleState:\n")


REVISIONS: list[tuple[str, Callable[[str], str]]] = [
    ("team-header-case", team_header_case),
    ("drop-dashboard-alternatives", drop_dashboard_alternatives),
    ("add-bearer-alternative", add_bearer_alternative),
    ("document-request-id-header", document_request_id_header),
    ("rename-sandbox-state", rename_sandbox_state),
]


@dataclass(frozen=True)
class Bumped:
    commit: str
    result: Result
    fragments: list[str]  # the fragment(s) this bump added


@dataclass(frozen=True)
class Replay:
    root: Path
    revisions: dict[str, Bumped]


@pytest.fixture(scope="module")
def replay(
    bumped: tuple[Path, Result], real_upstream: real_shape.RealUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Replay:
    """R0's project and cache copied, R1..R5 committed on a copy of R0's upstream, each bumped in turn."""
    start, first = bumped
    assert first.code == 0, first.text

    def build(folder: Path) -> None:
        runtime = folder / "runtime"
        shutil.copytree(Path(real_upstream.url), runtime, symlinks=True)
        upstream = Upstream(runtime)
        root, cache = folder / "project", folder / "cache"
        shutil.copytree(start, root, symlinks=True)
        shutil.copytree(start.parent / "cache", cache, symlinks=True)  # warm: the mypy cache of R0's bump
        env: dict[str, str | None] = {"E2B_RUNTIME_REPO": str(runtime), "E2B_CODEGEN_CACHE": str(cache)}
        done = {}
        released = folder / "released"
        released.mkdir()

        def release() -> None:  # as `nox -s release` consumes them: the next bump's record starts afresh
            for fragment in (root / CHANGELOG).glob("+runtime-*.md"):
                fragment.rename(released / fragment.name)

        release()
        for name, edit in REVISIONS:
            commit = upstream.commit_edit(edit, name)
            before = set((root / CHANGELOG).iterdir())
            result = run_in_process(root, "bump", commit, env=env)
            added = sorted(p.name for p in set((root / CHANGELOG).iterdir()) - before)
            release()
            done[name] = {"commit": commit, "result": asdict(result), "fragments": added}
        (folder / "replay.json").write_text(json.dumps(done))

    folder = build_once(tmp_path_factory, "bump-replay", build)
    revisions = {
        name: Bumped(entry["commit"], Result(**entry["result"]), entry["fragments"])
        for name, entry in json.loads((folder / "replay.json").read_text()).items()
    }
    return Replay(folder / "project", revisions)


def level_of(result: Result) -> str:
    found = re.search(r"^Semver: \*\*(\w+)\*\*", result.out, re.MULTILINE)
    assert found is not None, result.text
    return found[1]


EXPECTED = [
    # (revision, exit status, level, fragment type)
    ("team-header-case", 0, "none", "misc"),
    ("drop-dashboard-alternatives", 0, "none", "misc"),
    ("add-bearer-alternative", 0, "none", "misc"),
    ("document-request-id-header", 0, "patch", "fix"),
    ("rename-sandbox-state", EXIT_HANDWRITTEN, "major", "breaking"),
]


@pytest.mark.parametrize(("name", "code", "level", "kind"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_each_bump_s_level_is_what_the_sdk_s_users_see(
    replay: Replay, name: str, code: int, level: str, kind: str
) -> None:
    bump = replay.revisions[name]
    assert bump.result.code == code, bump.result.text
    assert level_of(bump.result) == level
    (fragment,) = bump.fragments
    assert re.fullmatch(rf"\+runtime-[0-9a-f]{{12}}-{bump.commit[:12]}\.{kind}\.md", fragment), fragment
    assert "Traceback" not in bump.result.text
    # Only the rename breaks this repository's code.
    assert (SECTION_TITLE in bump.result.out) == (name == "rename-sandbox-state")


def test_a_case_only_header_rename_in_a_security_scheme_is_no_change(replay: Replay) -> None:
    result = replay.revisions["team-header-case"].result
    assert "Semver: **none** — no API changes" in result.out
    assert "security" not in result.out.split("## Python API")[0].split("\n", 3)[-1]
    assert "typecheck  the generated files are unchanged: the tree as it is" in result.err


def test_dropping_alternatives_the_sdk_does_not_use_is_a_note_naming_each_scheme(replay: Replay) -> None:
    result = replay.revisions["drop-dashboard-alternatives"].result
    report = result.out.split("## Python API")[0]
    assert "## Breaking (major)" not in report and "## New (minor)" not in report
    upstream_only = report.split("## Upstream only (no SDK change)\n", 1)[1]
    removed = re.findall(r"^- security scheme removed: `(\w+)` \(in (\d+) operations \(", upstream_only, re.MULTILINE)
    # One line per scheme, whatever the number of operations.
    assert sorted(scheme for scheme, _ in removed) == [
        "AdminApiKeyAuth",
        "AdminTeamAuth",
        "AuthProviderBearerAuth",
        "AuthProviderTeamAuth",
    ]
    assert all(int(count) > 1 for _, count in removed)
    assert WHY_OTHER_CREDENTIAL in report
    assert "## Python API (what importers see)\n\nNo change to the public Python API of any package." in result.out


def test_adding_an_alternative_the_sdk_cannot_use_is_a_note(replay: Replay) -> None:
    result = replay.revisions["add-bearer-alternative"].result
    report = result.out.split("## Python API")[0]
    assert "## New (minor)" not in report
    assert re.search(r"^- security alternative added: `AuthProviderBearerAuth` \(in \d+ operations \(", report, re.M)


def test_a_header_the_client_does_not_surface_is_patch(replay: Replay) -> None:
    result = replay.revisions["document-request-id-header"].result
    assert "- response header added: `listSandboxes 200 response header X-Request-ID` [1]" in result.out
    assert f"1. {WHY_HEADER_NOT_SURFACED}" in result.out
    assert "## New (minor)" not in result.out


def test_a_rename_that_hand_written_code_imports_is_named_where_it_is_used(replay: Replay) -> None:
    bump = replay.revisions["rename-sandbox-state"]
    result, root = bump.result, replay.root
    section = result.out.split(SECTION_TITLE, 1)[1].split("\ncodegen: ", 1)[0]
    now = "now `SandboxLifecycleState` (model renamed at "
    for path, import_line in (
        ("packages/python-sdk/e2b/_sandbox_logic.py", "from e2b.api.client.models import SandboxState as WireState"),
        ("packages/local-api/e2b_local_api/state/listing.py", "from e2b_local_api.wire.models import SandboxState"),
        ("packages/local-api/e2b_local_api/state/store.py", "from e2b_local_api.wire.models import SandboxState"),
    ):
        line = (root / path).read_text().splitlines().index(import_line) + 1
        entries = [entry for entry in section.splitlines() if entry.startswith(f"- `{path}:{line}` (**new**): ")]
        assert len(entries) == 1, section
        assert now in entries[0], entries[0]
    sdk = next(entry for entry in section.splitlines() if "_sandbox_logic.py" in entry)
    assert "uses `e2b.api.client.models.SandboxState`" in sdk
    assert "griffe: class removed" in sdk
    # The report said it too; the exit status is bump's own, and the tree and the fragment are written.
    assert "- model renamed: `" in result.out and "(SandboxState -> SandboxLifecycleState)" in result.out
    assert f"exit {EXIT_HANDWRITTEN}" in result.out
    assert (root / "spec/runtime-ref").read_text() == bump.commit + "\n"
    assert (root / "packages/python-sdk/e2b/api/client/models/sandbox_lifecycle_state.py").is_file()
    fragment = (root.parent / "released" / bump.fragments[0]).read_text()
    assert fragment.startswith("The runtime API from runtime@")
    assert "(SandboxState -> SandboxLifecycleState)" in fragment
    assert SECTION_TITLE not in fragment  # the fragment is for the SDK's users; the section for this pull request


# --- bad input: the SDK's credential gone from the spec ---------------------------------


def rename_api_key_scheme(text: str) -> str:
    text = replace_all(text, "        - ApiKeyAuth: []\n", "        - KeyAuth: []\n", at_least=10)
    return replace_all(text, "\n    ApiKeyAuth:\n", "\n    KeyAuth:\n")


def test_a_credential_the_spec_lacks_is_a_contract_miss_and_nothing_is_written(
    bumped: tuple[Path, Result], real_upstream: real_shape.RealUpstream, tmp_path: Path
) -> None:
    start, _ = bumped
    runtime, root = tmp_path / "runtime", tmp_path / "project"
    shutil.copytree(Path(real_upstream.url), runtime, symlinks=True)
    shutil.copytree(start, root, symlinks=True)
    commit = Upstream(runtime).commit_edit(rename_api_key_scheme, "ApiKeyAuth is KeyAuth now")
    env: dict[str, str | None] = {"E2B_RUNTIME_REPO": str(runtime), "E2B_CODEGEN_CACHE": str(tmp_path / "cache")}
    with unchanged(root):
        result = run_in_process(root, "bump", commit, env=env)
    assert result.code == EXIT_CANNOT_RUN, result.text
    pointer = "/components/securitySchemes/ApiKeyAuth"
    assert f"contract miss: {pointer} is missing; needed because the SDK sends its API key" in result.err
    assert re.search(rf"codegen: error: runtime@{commit[:7]}:spec/openapi.yml:\d+ \({re.escape(pointer)}\)", result.err)
    assert f"runtime@{commit[:7]} lacks what the SDK needs: pick a later commit" in result.err
    # The report, printed first, says it: every SDK operation stops accepting the SDK's key.
    assert "Semver: **major**" in result.out
    assert "security scheme removed by this commit (see the report: `" in result.err
    assert "Traceback" not in result.text
