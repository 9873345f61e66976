"""Option values the CLI reads itself: times, states, metadata pairs.

A value that cannot be read is a usage error (exit status 2, click's
`BadParameter`), said before any request is sent, never an API error.
Nothing here imports the SDK's client or httpx: `e2b --help` loads this module.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    _TimeParam = click.ParamType[datetime.datetime]
else:  # click before 8.2 has no generic ParamType: the package allows click>=8.1
    _TimeParam = click.ParamType

__all__ = ["STATES", "TIMEOUT_SECONDS", "Timestamp", "metadata_pairs", "non_empty", "state_list"]

STATES = ("running", "paused")
"""The states `e2b sandbox list --state` filters on: the SDK's `SandboxState` values."""

TIMEOUT_SECONDS = click.IntRange(min=1)
"""A sandbox's timeout, 1 or more: the API takes 0, which makes the sandbox expire as the request ends."""


class Timestamp(_TimeParam):
    """An ISO 8601 / RFC 3339 date-time (`2025-01-02T03:04:05Z`, `2025-01-02 03:04:05+01:00`), as an aware datetime.

    Without an offset it is UTC, as every time the CLI prints is; a date alone
    is its midnight, UTC. `T`/`Z` may be lower case (RFC 3339 allows it), and a
    space may stand for the `T`, so a time copied from a table (`2025-01-02 03:04:05Z`) reads back.
    """

    name = "timestamp"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime.datetime:
        if isinstance(value, datetime.datetime):
            return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
        text = str(value).strip()
        try:
            parsed = datetime.datetime.fromisoformat(text.upper()) if text else None
        except ValueError:
            parsed = None
        if parsed is None:
            self.fail(
                f"{value!r} is not an ISO 8601 date-time: expected e.g. 2025-01-02T03:04:05Z, "
                "2025-01-02T03:04:05+01:00 or 2025-01-02 (no offset means UTC)",
                param,
                ctx,
            )
        aware = parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)
        try:
            aware.astimezone(datetime.UTC)
        except OverflowError:  # 0001-01-01T00:00+14:00 is before year 1 in UTC
            self.fail(f"{value!r} is out of range: in UTC it falls outside the years 1 to 9999", param, ctx)
        return aware


def state_list(_ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    """`--state running --state paused` or `--state running,paused`: the states, each once, in order."""
    states: list[str] = []
    for value in values:
        for part in value.split(","):
            state = part.strip()
            if state not in STATES:
                allowed = ", ".join(repr(s) for s in STATES)
                raise click.BadParameter(f"{part!r} is not one of {allowed}.", param=param)
            if state not in states:
                states.append(state)
    return states


def metadata_pairs(_ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    """`--metadata KEY=VALUE`, repeated: the pairs, split at the first `=` (a value may hold one)."""
    pairs: dict[str, str] = {}
    for value in values:
        key, equals, item = value.partition("=")
        if not equals or not key:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE.", param=param)
        if key in pairs and pairs[key] != item:
            raise click.BadParameter(f"{key!r} is given twice, with different values.", param=param)
        pairs[key] = item
    return pairs


def non_empty(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An optional value that, when given, is not empty (the API refuses an empty filter)."""
    if value is not None and not value.strip():
        raise click.BadParameter("must not be empty.", param=param)
    return value
