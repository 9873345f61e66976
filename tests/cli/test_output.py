"""`e2b_cli.output`: colour only on a terminal and never with NO_COLOR; no wrapping in pipes."""

from __future__ import annotations

import dataclasses
import datetime
import io
import json

import httpx
import pytest
from e2b import SandboxInfo, SandboxMetrics, SandboxState, SnapshotInfo
from e2b_cli import output
from rich.cells import cell_len

from tests.cli.conftest import SANDBOX_ID, Invoke, MockApi, error, sandbox_json

ESC = "\x1b["
PAUSE = f"/sandboxes/{SANDBOX_ID}/pause"


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _info() -> SandboxInfo:
    when = datetime.datetime(2025, 1, 2, 3, 4, 5)  # naive: taken as UTC
    return SandboxInfo(
        sandbox_id=SANDBOX_ID,
        sandbox_domain=None,
        template_id="base",
        name="my-alias",
        metadata={},
        started_at=when,
        end_at=when,
        state=SandboxState.PAUSED,
        cpu_count=2,
        memory_mb=512,
        envd_version="0.2.0",
    )


@pytest.fixture
def scripted(api: MockApi) -> MockApi:
    api.on("GET", "/v2/sandboxes", httpx.Response(200, json=[sandbox_json(), sandbox_json("b", state="paused")]))
    api.on("GET", f"/sandboxes/{SANDBOX_ID}", httpx.Response(200, json=sandbox_json()))
    api.on("POST", PAUSE, httpx.Response(200, json={"forced": True}))
    api.on("POST", "/sandboxes/nope/pause", error(404, "sandbox 'nope' not found"))
    return api


CASES = [
    ["sandbox", "list"],
    ["sandbox", "info", SANDBOX_ID],
    ["sandbox", "pause", SANDBOX_ID, "--force"],
    ["sandbox", "pause", "nope"],
]


@pytest.mark.parametrize("args", CASES)
def test_no_escapes_off_a_terminal(scripted: MockApi, run: Invoke, args: list[str]) -> None:
    result = run(*args)
    assert ESC not in result.stdout
    assert ESC not in result.stderr


@pytest.mark.parametrize("args", CASES)
def test_no_color_wins_over_a_forced_terminal(scripted: MockApi, run: Invoke, args: list[str]) -> None:
    result = run(*args, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert ESC not in result.stdout
    assert ESC not in result.stderr


def test_colour_on_a_terminal(scripted: MockApi, run: Invoke) -> None:
    # FORCE_COLOR makes rich treat CliRunner's stream as a terminal: the control for the tests above.
    result = run("sandbox", "pause", "nope", env={"FORCE_COLOR": "1"})
    assert ESC in result.stderr


def test_console_detects_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    tty = FakeTty()
    output.console(file=tty).print("x", style="red")
    assert ESC in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTty()
    output.console(file=tty).print("x", style="bold red")
    assert tty.getvalue() == "x\n"


def test_pipe_output_is_not_wrapped() -> None:
    pipe = io.StringIO()
    output.print_error("word " * 100, "hint " * 100, verbatim=False, file=pipe)
    assert len(pipe.getvalue().splitlines()) == 2


def test_info_dict_is_json_ready() -> None:
    data = output.info_dict(_info())
    assert data["started_at"] == "2025-01-02T03:04:05+00:00"
    assert data["metadata"] == {}
    assert data["state"] == "paused"


class ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError


def test_a_closed_pipe_is_left_to_the_top_level_handler() -> None:
    # rich would exit with status 1 itself; the CLI's handler turns this into a quiet 141.
    with pytest.raises(BrokenPipeError):
        output.console(file=ClosedPipe()).print("row")


def test_info_dict_keeps_the_2_0_alias_key_beside_name() -> None:
    data = output.info_dict(_info())
    assert data["name"] == data["alias"] == "my-alias"
    assert list(data)[:5] == ["sandbox_id", "sandbox_domain", "template_id", "name", "alias"]
    assert json.loads(json.dumps(data)) == data


def test_info_detail_shows_the_new_fields(capsys: pytest.CaptureFixture[str]) -> None:
    info = dataclasses.replace(
        _info(),
        sandbox_domain="e2b.app",
        disk_size_mb=2048,
        allow_internet_access=False,
        lifecycle={"on_timeout": "pause", "auto_resume": True},
        volume_mounts=[{"name": "data", "path": "/mnt/data"}],
    )
    output.sandbox_detail(info)
    rows = {line.split("  ")[0]: line.split("  ", 1)[1].strip() for line in capsys.readouterr().out.splitlines()}
    assert rows["Alias"] == "my-alias" and rows["State"] == "paused"
    assert rows["Disk"] == "2048 MB" and rows["Domain"] == "e2b.app" and rows["Internet access"] == "no"
    assert rows["At the deadline"] == "pause, resumed by traffic"
    assert rows["Volumes"] == "data at /mnt/data"


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536 * 1024, "1.5 MiB"),
        (10 * 1024**3, "10.0 GiB"),
        (3 * 1024**4, "3.0 TiB"),
        (2048 * 1024**4, "2048.0 TiB"),
    ],
)
def test_sizes_in_binary_units(count: int, shown: str) -> None:
    assert output.size(count) == shown


def test_metrics_and_snapshots_are_json_ready() -> None:
    when = datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    sample = SandboxMetrics(2, 12.5, 100, 50, 200, 100, 10, when)
    assert output.metrics_dict(sample) == {
        "cpu_count": 2,
        "cpu_used_pct": 12.5,
        "disk_total": 100,
        "disk_used": 50,
        "mem_total": 200,
        "mem_used": 100,
        "mem_cache": 10,
        "timestamp": "2025-01-02T03:04:05+00:00",
    }
    assert output.snapshot_dict(SnapshotInfo("snap_1", ["team/a:default"])) == {
        "snapshot_id": "snap_1",
        "names": ["team/a:default"],
    }


def test_a_listing_cell_is_cut_at_its_width_in_columns() -> None:
    assert output.cell("x" * output.CELL_WIDTH).plain == "x" * output.CELL_WIDTH
    assert output.cell("x" * 1000).plain == "x" * (output.CELL_WIDTH - 1) + "…"
    wide = output.cell("表" * 100).plain  # two columns each
    assert wide.endswith("…") and cell_len(wide) == output.CELL_WIDTH and len(wide) < output.CELL_WIDTH
    assert len(output.cell("y" * 1000, output.LIST_CELL_WIDTH).plain) == output.LIST_CELL_WIDTH


def test_many_labels_are_cut_as_one_cell_each_label_as_a_value(capsys: pytest.CaptureFixture[str]) -> None:
    labels = {f"k{n}": "v" * 100 for n in range(100)}
    output.sandbox_table([dataclasses.replace(_info(), metadata=labels)])
    row = capsys.readouterr().out.splitlines()[2].rstrip()
    metadata = row[row.index("k0=") :]
    assert len(metadata) == output.LIST_CELL_WIDTH and metadata.endswith("…")
    assert metadata.startswith("k0=" + "v" * 59 + "…, k1=")


def test_info_shows_every_value_whole(capsys: pytest.CaptureFixture[str]) -> None:
    output.sandbox_detail(dataclasses.replace(_info(), metadata={"big": "v" * 100_000}))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Sandbox", "ID", SANDBOX_ID]
    assert lines[-1] == "Metadata         big=" + "v" * 100_000
