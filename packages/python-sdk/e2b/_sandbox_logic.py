"""The sandbox calls' flavour-free half: request bodies, expected statuses, result mapping.

The async `Sandbox` class (e2b/sandbox_async/main.py) and its derived sync twin
do only I/O; every decision they share lives here, written once. Bodies are built as wire data (the API's JSON)
and answers are read back as wire data (`to_dict()`), so this module names no
generated model and works with every spec shape the contract admits.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from e2b import _options as options
from e2b._config import ConnectionConfig
from e2b._exceptions import (
    SHAPE_ERRORS,
    InvalidArgumentException,
    SandboxException,
    api_exception_from_code,
    brief,
    not_the_api,
)
from e2b._headers import header_value
from e2b._results import SandboxInfo, SandboxMetrics, SandboxPauseResult, SandboxState, SnapshotInfo

# Only the enums every spec shape names alike; bodies and answers are wire data.
from e2b.api.client.models import OrderDirection
from e2b.api.client.models import SandboxState as WireState
from e2b.api.client.types import UNSET
from e2b.api.operations import SUCCESS, Operation

NEXT_TOKEN_HEADER = "X-Next-Token"
IDEMPOTENCY_HEADER = "Idempotency-Key"

# What a call handles beyond the successes the spec at hand lists (e2b.api.operations.SUCCESS).
# Pause: both generations of its contract are deployed, and a spec lists one of them: 204 before
# SandboxPauseResult, 200 with it. 409 ("already paused") is a result, not a failure, though no
# spec calls it a success.
ALSO_HANDLED: Mapping[Operation, frozenset[int]] = {"pauseSandbox": frozenset({200, 204, 409})}

BETA_PAUSE_WARNING = "beta_pause() is deprecated; call pause(), which takes the same arguments"
KEEP_MEMORY_WARNING = 'keep_memory is deprecated; pass mode="full" or mode="filesystem"'
DEBUG_SANDBOX_ID = "debug_sandbox_id"  # what create() answers in debug mode, as e2b 2.x does


def expected(operation: Operation) -> frozenset[int]:
    """The statuses a call of `operation` takes as its answer; any other is raised as an error."""
    return SUCCESS[operation] | ALSO_HANDLED.get(operation, frozenset())


def _or_unset(value: Any) -> Any:
    return UNSET if value is None else value


# --- request bodies ----------------------------------------------------------


def create_body(
    template: str,
    timeout: int,
    *,
    metadata: object,
    envs: object,
    secure: object,
    allow_internet_access: object,
    network: object,
    lifecycle: object,
    volume_mounts: object,
    iam: object,
) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "templateID": options.text("template", template),
        "timeout": options.integer("timeout", timeout),
    }
    if metadata is not None:
        wire["metadata"] = options.string_map("metadata", metadata)
    if envs is not None:
        wire["envVars"] = options.string_map("envs", envs)
    for field, value in (("secure", secure), ("allow_internet_access", allow_internet_access)):
        if options.optional_bool(field, value) is not None:
            wire[field] = value
    if network is not None:
        wire["network"] = options.network_wire(network)
    if lifecycle is not None:
        wire.update(options.lifecycle_wire(lifecycle))
    if volume_mounts is not None:
        wire["volumeMounts"] = options.volume_mounts_wire(volume_mounts)
    if iam is not None:
        wire["iam"] = options.iam_wire(iam)
    return wire


def idempotency_headers(key: str | None) -> dict[str, str]:
    """The create's key: the caller's, or a fresh one; every retry of the call sends the same one."""
    chosen = (
        uuid.uuid4().hex
        if key is None
        else header_value(
            "idempotency_key", options.text("idempotency_key", key, max_length=options.MAX_IDEMPOTENCY_KEY)
        )
    )
    return {IDEMPOTENCY_HEADER: chosen}


def connect_body(timeout: int, on_resume: object) -> dict[str, Any]:
    wire: dict[str, Any] = {"timeout": options.integer("timeout", timeout)}
    # "restore" is the API's default, so it travels as an absent field.
    if options.choice("on_resume", on_resume, ("restore", "reboot")) == "reboot":
        wire["memory"] = False
    return wire


def pause_body(*, keep_memory: object, mode: object, force: object) -> dict[str, Any]:
    """A body with only the options that were passed: the API applies its own defaults."""
    memory = options.snapshot_memory("mode", mode, keep_memory)
    force = options.optional_bool("force", force)
    if force and memory is False:
        raise InvalidArgumentException('force=True needs a memory snapshot: not with mode="filesystem"')
    wire: dict[str, Any] = {}
    if memory is not None:
        wire["memory"] = memory
    if force is not None:
        wire["force"] = force
    return wire


def pause_result(status: int, parsed: object) -> SandboxPauseResult:
    if status == 409:
        return SandboxPauseResult(paused=False, forced=False)
    forced = getattr(parsed, "forced", False)
    return SandboxPauseResult(paused=True, forced=forced is True)


def timeout_body(timeout: int) -> dict[str, Any]:
    return {"timeout": options.integer("timeout", timeout)}


def fork_body(timeout: int | None, count: int | None) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    if timeout is not None:
        wire["timeout"] = options.integer("timeout", timeout)
    if count is not None:
        wire["count"] = options.integer("count", count, low=1, high=options.MAX_FORK_COUNT)
    return wire


def snapshot_body(name: str | None, mode: object) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    if name is not None:
        wire["name"] = options.text("name", name)
    memory = options.snapshot_memory("mode", mode)
    if memory is not None:
        wire["memory"] = memory
    return wire


def metrics_params(start: object, end: object) -> dict[str, Any]:
    """Keywords for the generated metrics request: Unix seconds, or unset."""
    params: dict[str, Any] = {}
    for field, value in (("start", start), ("end", end)):
        if value is not None and not isinstance(value, datetime.datetime):
            raise InvalidArgumentException(f"{field} must be a datetime (got {value!r})")
        params[field] = UNSET if value is None else int(options.in_range(field, value).timestamp())
    if start is not None and end is not None and params["start"] > params["end"]:
        raise InvalidArgumentException("start must not be after end")
    return params


def network_update_body(network: object) -> dict[str, Any]:
    return options.network_update_wire(network)


def snapshot_id(value: object) -> str:
    # A snapshot id may hold "/" and ":" (team/name:tag); the generated client sends it as one
    # percent-encoded path segment.
    return options.snapshot_id("snapshot_id", value)


def sandbox_id(value: object) -> str:
    """The id a `Sandbox` wraps, checked before it becomes a request's path."""
    return options.sandbox_id("sandbox_id", value)


# --- answers -----------------------------------------------------------------


# Every answer that is not the API's raises `UnexpectedResponseException` ("the answer is
# not the API's: ..."), whichever step finds it: the generated parser (`e2b._http`) or these.


def wire(parsed: object) -> dict[str, Any]:
    """The generated parser's model as the API's JSON."""
    to_dict = getattr(parsed, "to_dict", None)
    if to_dict is None:
        raise not_the_api(f"{brief(parsed)} is not an answer of the spec's")
    try:
        data = to_dict()
    except SHAPE_ERRORS as error:
        raise not_the_api(f"{type(error).__name__}: {error}") from error
    if not isinstance(data, dict):
        raise not_the_api(f"{brief(parsed)} is not an object")
    return data


def wire_list(parsed: object) -> list[dict[str, Any]]:
    if not isinstance(parsed, list):
        raise not_the_api(f"{brief(parsed)} is not a list")
    return [wire(item) for item in parsed]


def _when(value: object) -> datetime.datetime:
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.datetime.fromisoformat(value)
        except ValueError:
            pass
    raise not_the_api(f"{brief(value)} is not a date-time")


def _optional(data: Mapping[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    return value if isinstance(value, kind) else None


_NETWORK_INFO = {
    "allowOut": "allow_out",
    "denyOut": "deny_out",
    "rules": "rules",
    "egressProxy": "egress_proxy",
    "allowPublicTraffic": "allow_public_traffic",
    "maskRequestHost": "mask_request_host",
}


def _network_info(data: object) -> Any:
    if not isinstance(data, dict):
        return None
    info: dict[str, Any] = {_NETWORK_INFO[key]: value for key, value in data.items() if key in _NETWORK_INFO}
    proxy = info.get("egress_proxy")
    if isinstance(proxy, dict):
        info["egress_proxy"] = {k: v for k, v in proxy.items() if k != "password"}
    elif "egress_proxy" in info:
        del info["egress_proxy"]
    return info


def _lifecycle_info(data: object) -> Any:
    if not isinstance(data, dict) or data.get("onTimeout") not in ("pause", "kill"):
        return None
    return {"on_timeout": data["onTimeout"], "auto_resume": data.get("autoResume") is True}


def _required(data: Mapping[str, Any], key: str, kind: type) -> Any:
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{key} is {brief(value)}, not {'a string' if kind is str else 'an integer'}")
    return value


def _number(data: Mapping[str, Any], key: str) -> int | float:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{key} is {brief(value)}, not a number")
    return value


def _labels(value: object) -> dict[str, str]:
    """A `SandboxMetadata`: string keys, string values (what the CLI prints as such)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError(f"metadata {brief(value)} is not a map of strings")
    return dict(value)


def sandbox_info(data: Mapping[str, Any], *, detail: bool = False) -> SandboxInfo:
    """A `SandboxDetail` (`detail`) or `ListedSandbox` as wire data."""
    try:
        state = SandboxState(data["state"])
        mounts = data.get("volumeMounts") or []
        return SandboxInfo(
            sandbox_id=_required(data, "sandboxID", str),
            sandbox_domain=_optional(data, "domain", str) if detail else None,
            template_id=_required(data, "templateID", str),
            name=_optional(data, "alias", str),
            metadata=_labels(data.get("metadata")),
            started_at=_when(data["startedAt"]),
            end_at=_when(data["endAt"]),
            state=state,
            cpu_count=_required(data, "cpuCount", int),
            memory_mb=_required(data, "memoryMB", int),
            envd_version=_optional(data, "envdVersion", str) or "",
            allow_internet_access=_optional(data, "allowInternetAccess", bool),
            network=_network_info(data.get("network")),
            lifecycle=_lifecycle_info(data.get("lifecycle")),
            volume_mounts=[{"name": m["name"], "path": m["path"]} for m in mounts if isinstance(m, dict)],
            envd_unresponsive_at_pause=True if data.get("envdUnresponsiveAtPause") is True else None,
            disk_size_mb=_optional(data, "diskSizeMB", int),
        )
    except SHAPE_ERRORS as error:
        raise not_the_api(f"{type(error).__name__}: {error} in a sandbox record") from error


@dataclass(frozen=True)
class Created:
    """What create, connect and fork answer about a sandbox."""

    sandbox_id: str
    template_id: str | None
    envd_version: str | None
    envd_access_token: str | None
    traffic_access_token: str | None
    sandbox_domain: str | None


def created(data: Mapping[str, Any]) -> Created:
    sandbox_id = data.get("sandboxID")
    if not isinstance(sandbox_id, str):
        raise not_the_api(f"no sandboxID in {brief(dict(data))}")
    try:
        options.sandbox_id("sandboxID", sandbox_id)
    except InvalidArgumentException as error:  # the API's to fix, not the caller's: no later call could use it
        raise not_the_api(error.message) from None
    return Created(
        sandbox_id=sandbox_id,
        template_id=_optional(data, "templateID", str),
        envd_version=_optional(data, "envdVersion", str),
        envd_access_token=_optional(data, "envdAccessToken", str),
        traffic_access_token=_optional(data, "trafficAccessToken", str),
        sandbox_domain=_optional(data, "domain", str),
    )


def fork_results(entries: list[dict[str, Any]]) -> list[Created | SandboxException]:
    """One entry per requested fork: the new sandbox, or the exception for the error that kept it from starting."""
    results: list[Created | SandboxException] = []
    for entry in entries:
        sandbox, error = entry.get("sandbox"), entry.get("error")
        if isinstance(sandbox, dict) and error is None:
            results.append(created(sandbox))
        elif isinstance(error, dict):
            code = error.get("code")
            results.append(api_exception_from_code(code if isinstance(code, int) else 500, error))
        else:
            results.append(SandboxException("a fork did not start and the API gave no reason"))
    return results


# OSError too: some platforms' fromtimestamp raise it for a timestamp out of their range.
_SAMPLE_ERRORS: tuple[type[Exception], ...] = (*SHAPE_ERRORS, OSError)


def metrics(entries: list[dict[str, Any]]) -> list[SandboxMetrics]:
    try:
        return [
            SandboxMetrics(
                cpu_count=_required(entry, "cpuCount", int),
                cpu_used_pct=float(_number(entry, "cpuUsedPct")),
                disk_total=_required(entry, "diskTotal", int),
                disk_used=_required(entry, "diskUsed", int),
                mem_total=_required(entry, "memTotal", int),
                mem_used=_required(entry, "memUsed", int),
                mem_cache=_required(entry, "memCache", int),
                timestamp=datetime.datetime.fromtimestamp(_number(entry, "timestampUnix"), datetime.UTC),
            )
            for entry in entries
        ]
    except _SAMPLE_ERRORS as error:
        raise not_the_api(f"{type(error).__name__}: {error} in a metric sample") from error


def snapshot_info(data: Mapping[str, Any]) -> SnapshotInfo:
    snapshot = data.get("snapshotID")
    names = data.get("names") or []
    if not isinstance(snapshot, str) or not isinstance(names, list):
        raise not_the_api(f"{brief(dict(data))} is not a snapshot")
    return SnapshotInfo(snapshot_id=snapshot, names=[name if isinstance(name, str) else brief(name) for name in names])


# --- listings ----------------------------------------------------------------


class PageCursor:
    """Where a listing stands: its request keywords, whether there is a next page and its token."""

    def __init__(self, params: dict[str, Any], config: ConnectionConfig, next_token: str | None = None) -> None:
        self._params = params
        self._config = config
        self.has_next = True
        self.next_token: str | None = next_token

    def request(self, opts: Mapping[str, Any]) -> tuple[ConnectionConfig, dict[str, Any]]:
        """The settings and generated-request keywords for the next page."""
        if not self.has_next:
            # Not StopIteration: inside a coroutine that turns into RuntimeError.
            raise SandboxException("no more pages: check has_next before next_items()")
        config = self._config.merged(**opts) if opts else self._config
        return config, {**self._params, "next_token": _or_unset(self.next_token)}

    def advance(self, headers: Mapping[str, str]) -> None:
        # The API marks the last page by leaving the header out.
        self.next_token = headers.get(NEXT_TOKEN_HEADER) or None
        self.has_next = self.next_token is not None


def _limit(limit: object) -> Any:
    return UNSET if limit is None else options.integer("limit", limit, low=1, high=options.MAX_PAGE)


def _token(next_token: object) -> str | None:
    return None if next_token is None else options.text("next_token", next_token)


def list_params(query: object, limit: object, next_token: object, order: object) -> tuple[dict[str, Any], str | None]:
    """Keywords for the generated `list_sandboxes` request, checked, and the first page's token."""
    fields = options.query_fields(query)
    states = options.states_wire(fields.state)
    metadata = UNSET if not fields.metadata else urlencode(dict(fields.metadata))
    params: dict[str, Any] = {
        "metadata": metadata,
        "state": _or_unset(states and [WireState(s) for s in states]),
        "started_after": _or_unset(options.started_after_wire(fields.started_after)),
        "template": _or_unset(fields.template),
        "limit": _limit(limit),
    }
    if order is not None:
        # Only when asked for: a client generated from a spec without `order` takes no such keyword.
        params["order"] = OrderDirection(options.choice("order", order, ("asc", "desc")))
    return params, _token(next_token)


def snapshot_params(
    sandbox_id: object, limit: object, next_token: object, name: object
) -> tuple[dict[str, Any], str | None]:
    params: dict[str, Any] = {
        "sandbox_id": UNSET if sandbox_id is None else options.sandbox_id("sandbox_id", sandbox_id),
        "name": UNSET if name is None else options.text("name", name),
        "limit": _limit(limit),
    }
    return params, _token(next_token)
