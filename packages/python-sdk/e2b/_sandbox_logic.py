"""The sandbox calls' flavour-free half: request bodies, expected statuses, result mapping.

The sync and async `Sandbox` classes are rendered from one template
(templates/overlays/sandbox.py.jinja) and do only I/O; every decision they
share lives here, written once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import urlencode

from e2b._config import ConnectionConfig
from e2b._exceptions import SandboxException
from e2b._results import SandboxInfo, SandboxPauseResult

# Only schemas every upstream shape names alike (the contract pins the pause
# ones); the rest are built from wire dicts by the generated models themselves.
from e2b.api.client.models import (
    ListedSandbox,
    NewSandbox,
    SandboxDetail,
    SandboxPauseRequest,
    SandboxTimeoutRequest,
)
from e2b.api.client.models import (
    SandboxPauseResult as WirePauseResult,
)
from e2b.api.client.models import (
    SandboxState as WireState,
)
from e2b.api.client.types import UNSET, Unset

T = TypeVar("T")
ResumeMode = Literal["memory", "reboot"]

NEXT_TOKEN_HEADER = "X-Next-Token"

CREATE_STATUSES = frozenset({201})
CONNECT_STATUSES = frozenset({200, 201})
GET_STATUSES = frozenset({200})
LIST_STATUSES = frozenset({200})
TIMEOUT_STATUSES = frozenset({204})
KILL_STATUSES = frozenset({204})
# 204 is what APIs before SandboxPauseResult answered; they are still deployed.
# 409 means "already paused", a result rather than a failure.
PAUSE_STATUSES = frozenset({200, 204, 409})

BETA_PAUSE_WARNING = "beta_pause() is deprecated; call pause(), which takes the same arguments"


def _or_unset(value: T | None) -> T | Unset:
    return UNSET if value is None else value


def pause_request(*, force: bool | None, memory: bool | None) -> SandboxPauseRequest:
    """A body with only the options that were passed: the API applies its own defaults."""
    return SandboxPauseRequest(memory=_or_unset(memory), force=_or_unset(force))


def pause_result(status: int, parsed: object) -> SandboxPauseResult:
    if status == 409:
        return SandboxPauseResult(paused=False, forced=False)
    if isinstance(parsed, WirePauseResult):
        return SandboxPauseResult(paused=True, forced=parsed.forced)
    return SandboxPauseResult(paused=True, forced=False)


def new_sandbox(
    template: str,
    timeout: int,
    *,
    metadata: Mapping[str, str] | None,
    envs: Mapping[str, str] | None,
    auto_pause: bool | None,
    allow_internet_access: bool | None,
) -> NewSandbox:
    # from_dict gives metadata and envVars whatever type the spec's shape makes of them.
    wire: dict[str, Any] = {"templateID": template, "timeout": timeout}
    if metadata is not None:
        wire["metadata"] = dict(metadata)
    if envs is not None:
        wire["envVars"] = dict(envs)
    body = NewSandbox.from_dict(wire)
    body.auto_pause = _or_unset(auto_pause)
    body.allow_internet_access = _or_unset(allow_internet_access)
    return body


def connect_body(*, timeout: int, on_resume: ResumeMode | None) -> dict[str, Any]:
    """The connect request as wire data; the template builds the spec's model from it."""
    return {"timeout": timeout} if on_resume is None else {"timeout": timeout, "on_resume": on_resume}


def timeout_request(timeout: int) -> SandboxTimeoutRequest:
    return SandboxTimeoutRequest(timeout=timeout)


def _text(value: str | Unset | None) -> str | None:
    return None if isinstance(value, Unset) else value


def sandbox_info(model: SandboxDetail | ListedSandbox) -> SandboxInfo:
    raw: Any = model.metadata
    # A model of its own in one spec shape, a plain mapping in another.
    metadata = {} if isinstance(raw, Unset) else dict(raw.to_dict() if hasattr(raw, "to_dict") else raw)
    return SandboxInfo(
        sandbox_id=model.sandbox_id,
        template_id=model.template_id,
        state="paused" if model.state is WireState.PAUSED else "running",
        started_at=model.started_at,
        end_at=model.end_at,
        cpu_count=model.cpu_count,
        memory_mb=model.memory_mb,
        alias=_text(model.alias),
        metadata=metadata,
        envd_version=_text(getattr(model, "envd_version", None)),
    )


def list_states(state: Collection[str] | None) -> list[WireState] | Unset:
    # No states means no filter: the API refuses an empty `state=` (its enum has no "").
    return [WireState(s) for s in state] if state else UNSET


class PageCursor:
    """Where a listing stands: its filters and settings, whether there is a next page and its token."""

    def __init__(self, query: ListQuery, config: ConnectionConfig) -> None:
        self._query = query
        self._config = config
        self.has_next = True
        self.next_token: str | None = None

    def advance(self, headers: Mapping[str, str]) -> None:
        # The API marks the last page by leaving the header out.
        self.next_token = headers.get(NEXT_TOKEN_HEADER) or None
        self.has_next = self.next_token is not None

    def ensure_more(self) -> None:
        if not self.has_next:
            # Not StopIteration: inside a coroutine that turns into RuntimeError.
            raise SandboxException("no more pages: check has_next before next_items()")


M = TypeVar("M")


def parsed_as(parsed: object, model: type[M]) -> M:
    """The generated parser's result, when it is the model the status promises."""
    if not isinstance(parsed, model):
        raise SandboxException(f"the API answered with an unexpected body: {parsed!r}")
    return parsed


def parsed_list(parsed: object, model: type[M]) -> list[M]:
    if not isinstance(parsed, list) or not all(isinstance(item, model) for item in parsed):
        raise SandboxException(f"the API answered with an unexpected body: {parsed!r}")
    return parsed


@dataclass(frozen=True)
class ListQuery:
    """The filters of one listing; every page is fetched with the same ones."""

    state: Collection[str] | None = None
    metadata: Mapping[str, str] | None = None
    limit: int | None = None

    def params(self, next_token: str | None) -> dict[str, Any]:
        """Keywords for the generated `list_sandboxes` request builder."""
        return {
            "state": list_states(self.state),
            # The API expects the pairs URL-encoded, as a query string.
            "metadata": UNSET if self.metadata is None else urlencode(dict(self.metadata)),
            "next_token": _or_unset(next_token),
            "limit": _or_unset(self.limit),
        }
