"""`GET /v2/sandboxes`: the query parameters, which sandboxes they select, in which order.

Parameters the spec does not name are ignored, as the spec says ("a client
may send filters an older server does not know"); a named one with a bad
value is a 400 naming it, so a wrong filter never silently lists everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote

from e2b_local_api.http.errors import bad_request
from e2b_local_api.http.validation import parse_datetime, parse_int, query_value
from e2b_local_api.wire.models import SandboxState

MAX_LIMIT = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class ListQuery:
    states: frozenset[SandboxState]
    metadata: Mapping[str, str]
    started_after: datetime | None = None
    template: str | None = None
    descending: bool = True
    next_token: str | None = None
    limit: int = MAX_LIMIT

    @property
    def asks_for_running(self) -> bool:
        """Whether the answer carries `X-Total-Running` (the spec: when running sandboxes were asked for)."""
        return SandboxState.running in self.states


def list_query(params: Any) -> ListQuery:
    """The query of a list request (a Starlette `QueryParams`)."""
    limit = query_value(params, "limit")
    order = query_value(params, "order")
    if order not in (None, "asc", "desc"):
        raise bad_request(f"order: expected asc or desc, got {order!r}")
    started_after = query_value(params, "startedAfter")
    return ListQuery(
        states=parse_states(params.getlist("state")),
        metadata=parse_metadata(query_value(params, "metadata")),
        started_after=None if started_after is None else parse_datetime(started_after, "startedAfter"),
        template=query_value(params, "template"),
        descending=order != "asc",
        next_token=query_value(params, "nextToken"),
        limit=MAX_LIMIT if limit is None else parse_int(limit, "limit", minimum=1, maximum=MAX_LIMIT),
    )


def parse_states(values: list[str]) -> frozenset[SandboxState]:
    """`style: form, explode: false`: `state=running,paused`; repeats are accepted too.

    No `state` parameter means every state. A present one must name states only:
    `state=` and `state=,,` hold empty items, which the spec's enum forbids.
    """
    if not values:
        return frozenset(SandboxState)
    try:
        return frozenset(SandboxState(name) for value in values for name in value.split(","))
    except ValueError:
        allowed = ", ".join(s.value for s in SandboxState)
        raise bad_request(f"state: expected a comma-separated list of {allowed}") from None


def parse_metadata(value: str | None) -> dict[str, str]:
    """The metadata filter, itself a query string: `user=abc&app=prod`, each key and value URL-encoded.

    The spec asks clients to encode each key and value before joining them,
    and the released SDK does, then encodes the joined string once more as a
    parameter value: so after the form decoding each key and value is decoded
    once more (`a%2520b` -> `a%20b` -> `a b`).
    """
    if value is None:
        return {}
    # Not strict: any string is a valid `metadata` (the schema says string), and
    # a bare `user` asks for an empty value, as Go's url.ParseQuery reads it.
    return {unquote(k): unquote(v) for k, v in parse_qsl(value, keep_blank_values=True)}


class Listable(Protocol):
    @property
    def state(self) -> SandboxState: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def seq(self) -> int: ...
    @property
    def metadata(self) -> Mapping[str, str]: ...
    @property
    def template_names(self) -> frozenset[str]: ...


def sort_key(record: Listable) -> tuple[int, int]:
    """Start time, ties (forks start together) broken by creation order: the same order on every call."""
    return (record.started_at - _EPOCH) // _MICROSECOND, record.seq


def select(records: Iterable[Listable], query: ListQuery, template_id: Callable[[str], str | None]) -> list[Any]:
    """The records matching every filter, in the query's order (`template_id` resolves a name to an id)."""
    wanted_templates: set[str] = set()
    if query.template is not None:
        wanted_templates.add(query.template)
        resolved = template_id(query.template)
        if resolved is not None:
            wanted_templates.add(resolved)
    matching = [
        r
        for r in records
        if r.state in query.states
        and all(r.metadata.get(k) == v for k, v in query.metadata.items())
        and (query.started_after is None or r.started_at >= query.started_after)
        and (query.template is None or not wanted_templates.isdisjoint(r.template_names))
    ]
    return sorted(matching, key=sort_key, reverse=query.descending)
