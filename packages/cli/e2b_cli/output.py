"""Where and how the CLI writes: rich consoles, tables, JSON.

Colour only goes to a terminal, and never when `NO_COLOR` is set (any
non-empty value, https://no-color.org): then no ANSI escape is written at
all. Off a terminal nothing wraps, so that scripts get whole lines. Every
value from the API goes through `e2b_cli.printable` first.

rich is imported when something is printed with it, not with this module:
`e2b --help` and `e2b --version` never load it.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import IO, TYPE_CHECKING, Any

import click

from e2b_cli.printable import printable

if TYPE_CHECKING:
    from e2b import SandboxInfo, SandboxMetrics, SnapshotInfo
    from rich.console import Console
    from rich.text import Text

__all__ = [
    "CELL_WIDTH",
    "LIST_CELL_WIDTH",
    "cell",
    "console",
    "info_dict",
    "metrics_dict",
    "metrics_table",
    "print_error",
    "print_json",
    "sandbox_detail",
    "sandbox_table",
    "say",
    "size",
    "snapshot_dict",
    "snapshot_table",
]

# Off a terminal: wide enough that no line of ours is ever wrapped.
_PIPE_WIDTH = 10_000
# The widest value in a listing's table, in terminal columns: a longer one (an id, a 100 KB
# metadata label) is cut and ends in an ellipsis, so that one row cannot pad every row of
# the table to its width. A cell that lists several values (metadata, a snapshot's names)
# is cut at LIST_CELL_WIDTH. `info` and `--json` show every value whole.
CELL_WIDTH = 60
LIST_CELL_WIDTH = 4 * CELL_WIDTH


def color_disabled() -> bool:
    return bool(os.environ.get("NO_COLOR"))


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich would exit with status 1 here; the CLI's top-level handler decides (141, quietly).
            self.quiet = True
            raise BrokenPipeError

    return _Console


def console(*, stderr: bool = False, file: IO[str] | None = None) -> Console:
    """A console over the current stdout (or stderr), as CliRunner swaps them in tests."""
    target = file or (sys.stderr if stderr else sys.stdout)
    # color_system=None writes no escape at all, styles (bold) included.
    con = _console_class()(
        file=target,
        color_system=None if color_disabled() else "auto",
        highlight=False,
        emoji=False,
        markup=False,
    )
    if not con.is_terminal:
        con.width = _PIPE_WIDTH
    return con


def print_error(message: str, hint: str | None, *, verbatim: bool, file: IO[Any] | None = None) -> None:
    from rich.text import Text

    con = console(stderr=True, file=file)
    if verbatim:
        con.print(Text(printable(message)), soft_wrap=True)
        return
    con.print(Text.assemble(("Error: ", "bold red"), printable(message)), soft_wrap=True)
    if hint:
        con.print(Text(printable(hint), style="yellow"), soft_wrap=True)


def say(message: str, style: str | None = None) -> None:
    """One line of human output on stdout; `message` may carry API values."""
    from rich.text import Text

    console().print(Text(printable(message), style=style or ""), soft_wrap=True)


def print_json(value: object, file: IO[Any] | None = None) -> None:
    # click.echo, not rich: JSON is for programs, never highlighted or wrapped.
    click.echo(json.dumps(value, indent=2, sort_keys=False), file=file)


def _utc(value: datetime.datetime) -> datetime.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=datetime.UTC)
    return value.astimezone(datetime.UTC)


def _when(value: datetime.datetime) -> str:
    return _utc(value).strftime("%Y-%m-%d %H:%M:%SZ")


def info_dict(info: SandboxInfo) -> dict[str, Any]:
    """A sandbox as plain JSON values: the SDK's `SandboxInfo` fields; timestamps in ISO 8601, UTC.

    `alias` repeats `name` (the template's alias), the key e2b-cli 2.0 printed,
    so that scripts reading it keep working.
    """
    data: dict[str, Any] = {}
    for key, value in asdict(info).items():
        data[key] = value
        if key == "name":
            data["alias"] = value
    data["state"] = str(info.state)
    data["started_at"] = _utc(info.started_at).isoformat()
    data["end_at"] = _utc(info.end_at).isoformat()
    data["metadata"] = dict(info.metadata)
    return data


def metrics_dict(sample: SandboxMetrics) -> dict[str, Any]:
    """One metrics sample as plain JSON values: sizes in bytes, the timestamp in ISO 8601, UTC."""
    data = asdict(sample)
    data["timestamp"] = _utc(sample.timestamp).isoformat()
    return data


def snapshot_dict(snapshot: SnapshotInfo) -> dict[str, Any]:
    return {"snapshot_id": snapshot.snapshot_id, "names": list(snapshot.names)}


def _state(state: str) -> Text:
    from rich.text import Text

    return Text(printable(state), style="green" if state == "running" else "yellow")


def cell(value: str | Text, width: int = CELL_WIDTH) -> Text:
    """A table cell of a listing, at most `width` columns: a longer value is cut and ends in "…".

    `value` is already printable (`e2b_cli.printable`); the width counts terminal
    columns, so a wide character counts two.
    """
    from rich.text import Text

    text = value if isinstance(value, Text) else Text(value)
    text.truncate(width, overflow="ellipsis")
    return text


def _clip(value: str) -> str:
    """One printable value, cut as a listing's cell is."""
    return cell(value).plain


def _metadata(metadata: Mapping[str, str], *, clip: bool = False) -> str:
    if clip:
        return ", ".join(f"{_clip(printable(k))}={_clip(printable(v))}" for k, v in metadata.items())
    return ", ".join(f"{printable(k)}={printable(v)}" for k, v in metadata.items())


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _lifecycle(info: SandboxInfo) -> str:
    if info.lifecycle is None:
        return "-"
    action = printable(str(info.lifecycle.get("on_timeout", "-")))
    return f"{action}, resumed by traffic" if info.lifecycle.get("auto_resume") else action


def _volumes(mounts: Sequence[Mapping[str, str]]) -> str:
    return ", ".join(f"{printable(m.get('name', ''))} at {printable(m.get('path', ''))}" for m in mounts)


def size(count: int) -> str:
    """A byte count in binary units, one decimal from KiB on: `512 B`, `512.0 MiB`."""
    if abs(count) < 1024:
        return f"{count} B"
    value = count / 1024
    for unit in ("KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def sandbox_table(sandboxes: Sequence[SandboxInfo]) -> None:
    from rich import box
    from rich.console import JustifyMethod
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, show_edge=False)
    for name in ("SANDBOX ID", "TEMPLATE", "ALIAS", "STATE", "STARTED", "ENDS", "CPU", "MEMORY MB", "METADATA"):
        justify: JustifyMethod = "right" if name in ("CPU", "MEMORY MB") else "left"
        table.add_column(name, justify=justify, no_wrap=name == "SANDBOX ID")
    for s in sandboxes:
        row: tuple[str | Text, ...] = (
            printable(s.sandbox_id),
            printable(s.template_id),
            printable(s.name or ""),
            _state(s.state),
            _when(s.started_at),
            _when(s.end_at),
            str(s.cpu_count),
            str(s.memory_mb),
        )
        table.add_row(*(cell(value) for value in row), cell(_metadata(s.metadata, clip=True), LIST_CELL_WIDTH))
    console().print(table)


def sandbox_detail(info: SandboxInfo) -> None:
    """One line per field, each value whole however long (`CELL_WIDTH` is for listings only).

    Not a rich table: off a terminal it would cut a value wider than the page,
    on one fold it into the column; here a long line is the terminal's to wrap.
    """
    from rich.text import Text

    rows: list[tuple[str, str | Text]] = [
        ("Sandbox ID", printable(info.sandbox_id)),
        ("Template", printable(info.template_id)),
        ("Alias", printable(info.name or "-")),
        ("State", _state(info.state)),
        ("Started", _when(info.started_at)),
        ("Ends", _when(info.end_at)),
        ("CPUs", str(info.cpu_count)),
        ("Memory", f"{info.memory_mb} MB"),
        ("Disk", "-" if info.disk_size_mb is None else f"{info.disk_size_mb} MB"),
        ("envd", printable(info.envd_version or "-")),
        ("Domain", printable(info.sandbox_domain or "-")),
        ("Internet access", _yes_no(info.allow_internet_access)),
        ("At the deadline", _lifecycle(info)),
        ("Volumes", _volumes(info.volume_mounts) or "-"),
        ("Metadata", _metadata(info.metadata) or "-"),
    ]
    width = max(len(name) for name, _ in rows)
    con = console()
    for name, value in rows:
        con.print(Text.assemble((name.ljust(width), "bold"), "  ", value), soft_wrap=True)


def metrics_table(samples: Sequence[SandboxMetrics]) -> None:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, show_edge=False)
    table.add_column("TIME", no_wrap=True)
    for name in ("CPUS", "CPU %", "MEMORY USED / TOTAL", "DISK USED / TOTAL"):
        table.add_column(name, justify="right")
    for sample in samples:
        table.add_row(
            _when(sample.timestamp),
            str(sample.cpu_count),
            f"{sample.cpu_used_pct:.1f}",
            f"{size(sample.mem_used)} / {size(sample.mem_total)}",
            f"{size(sample.disk_used)} / {size(sample.disk_total)}",
        )
    console().print(table)


def snapshot_table(snapshots: Sequence[SnapshotInfo]) -> None:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, show_edge=False)
    table.add_column("SNAPSHOT ID", no_wrap=True)
    table.add_column("NAMES")
    for snapshot in snapshots:
        names = ", ".join(_clip(printable(name)) for name in snapshot.names)
        table.add_row(cell(printable(snapshot.snapshot_id)), cell(names, LIST_CELL_WIDTH))
    console().print(table)
