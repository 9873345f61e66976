"""The data plane judged by the released `e2b` 2.63.0, then this repository's SDK compared with it call by call.

`dataplane_calls.py` runs twice against one `e2b-local-api` process whose
sandboxes run processes: once by the released SDK's interpreter (the virtualenv
of test_released_sdk.py, hashed lock) and once by this repository's. The released
SDK's run must observe what each call expects (issue 42, point 5); this SDK's run
must record, for every call, what the released SDK's recorded (issue 43): outputs,
exit codes, exception classes, EntryInfo fields, event sequences. A difference is
accepted only where DIFFERENCES names it, with its reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.dataplane_calls import GROUPS
from tests.conformance.server_process import running_server
from tests.conformance.test_released_sdk import clean_env, released_python  # noqa: F401 -- the fixture
from tests.once_per_run import build_once

# Two runs of the program (some 10 s each on a quiet machine, a minute under load) behind one server.
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("dataplane_calls.py")
RUN_TIMEOUT = 600
API_KEY = "e2b_local_dev_key"  # the server's default key (e2b_local_api.control.auth.DEV_API_KEY)

# (group, label) -> why this SDK's record may differ from the released SDK's. Empty: none is known.
DIFFERENCES: dict[tuple[str, str], str] = {}

# Fields of a record that are for the reader, never compared.
UNCOMPARED = ("message",)


def sandboxes_can_run() -> None:
    try:
        from e2b_local_api.runtime import isolation  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        pytest.fail("this e2b-local-api has no sandbox runtime (e2b_local_api.runtime.isolation)")
    found = isolation.probe()
    if not found.available:
        pytest.skip(f"sandboxes cannot run processes on this machine: {found.reason}")


def run_program(python: Path | str, url: str, cwd: Path) -> dict[str, Any]:
    command = [str(python), "-I", str(SCRIPT), "--api-url", url, "--api-key", API_KEY]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=clean_env(), cwd=cwd, timeout=RUN_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"{python}: the program did not end in {RUN_TIMEOUT} s\n{timeout.stdout!r}\n{timeout.stderr!r}")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        pytest.fail(f"{python} exited {done.returncode}:\n{done.stderr[-5000:]}{done.stdout[-2000:]}")
    run: dict[str, Any] = json.loads(lines[-1])
    return run


@pytest.fixture(scope="session")
def runs(released_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811 -- the fixture
    """Both runs, made once per test run behind one server (the first pytest-xdist worker makes them)."""
    sandboxes_can_run()

    def both(folder: Path) -> None:
        with running_server() as server:
            for name, python in (("released", released_python), ("this", Path(sys.executable))):
                (folder / f"{name}.json").write_text(json.dumps(run_program(python, server.url, folder)))

    return build_once(tmp_path_factory, "dataplane-runs", both)


@pytest.fixture
def released_run(runs: Path) -> dict[str, Any]:
    run: dict[str, Any] = json.loads((runs / "released.json").read_text())
    return run


@pytest.fixture
def this_run(runs: Path) -> dict[str, Any]:
    run: dict[str, Any] = json.loads((runs / "this.json").read_text())
    return run


def records_of(run: dict[str, Any], group: str) -> dict[str, list[dict[str, Any]]]:
    """A group's records by label (a label may repeat: its records in order)."""
    by_label: dict[str, list[dict[str, Any]]] = {}
    for record in run["records"]:
        if record["group"] == group:
            by_label.setdefault(record["label"], []).append(record)
    return by_label


def compared(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record["got"].items() if k not in UNCOMPARED}


def counts_table(counts: dict[str, int]) -> str:
    width = max(map(len, counts))
    return "\n".join(f"  {kind:{width}}  {n}" for kind, n in sorted(counts.items()))


def test_the_released_sdk_is_the_one_that_ran(released_run: dict[str, Any]) -> None:
    assert released_run["sdk"] == "2.63.0"


@pytest.mark.parametrize("group", list(GROUPS))
def test_every_call_of_the_released_sdk_works(released_run: dict[str, Any], group: str) -> None:
    records = [r for r in released_run["records"] if r["group"] == group]
    assert records, f"group {group} recorded nothing"
    failed = [f"{r['label']} ({r['kind']}): {json.dumps(r['got'])}" for r in records if not r["ok"]]
    assert not failed, f"released e2b, group {group}, {len(failed)} of {len(records)} failed:\n" + "\n".join(failed)


def test_the_calls_counted(released_run: dict[str, Any], this_run: dict[str, Any]) -> None:
    """Both SDKs made the same calls; the counts are printed (-s) for docs/maintainers/dataplane-conformance.md."""
    counts: dict[str, int] = released_run["counts"]
    print(f"\ncalls by kind, {sum(counts.values())} in all:\n{counts_table(counts)}")
    assert this_run["counts"] == counts


@pytest.mark.parametrize("group", list(GROUPS))
def test_this_sdk_records_what_the_released_sdk_records(
    released_run: dict[str, Any], this_run: dict[str, Any], group: str
) -> None:
    theirs, ours = records_of(released_run, group), records_of(this_run, group)
    if list(ours) != list(theirs):
        mine, released = [*ours, "(nothing more)"], [*theirs, "(nothing more)"]
        at = next(i for i, (a, b) in enumerate(zip(mine, released, strict=False)) if a != b)
        before = json.dumps(ours[mine[at - 1]][-1]["got"]) if at else "(none)"
        pytest.fail(
            f"group {group}: call #{at} is {mine[at]!r} for this SDK, {released[at]!r} for the released one;"
            f" this SDK's call before it recorded {before}",
            pytrace=False,
        )
    differ, same = [], []
    for label, records in theirs.items():
        pairs = list(zip(records, ours[label], strict=True))
        alike = all(compared(their) == compared(our) for their, our in pairs)
        if (group, label) in DIFFERENCES:
            if alike:  # a difference that went away leaves the list, so that the list stays the truth
                same.append(label)
            continue
        differ += [
            f"{label}:\n    released: {json.dumps(their['got'])}\n    this SDK: {json.dumps(our['got'])}"
            for their, our in pairs
            if compared(their) != compared(our)
        ]
    assert not differ, f"group {group}, {len(differ)} call(s) differ:\n" + "\n".join(differ)
    assert not same, f"group {group}: no longer different, remove from DIFFERENCES: {same}"
