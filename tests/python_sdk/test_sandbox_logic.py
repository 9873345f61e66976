"""e2b._sandbox_logic: what the sync and async sandbox classes decide alike."""

from __future__ import annotations

import pytest
from e2b import SandboxException, SandboxPauseResult
from e2b._config import ConnectionConfig
from e2b._sandbox_logic import ListQuery, PageCursor, pause_request, pause_result
from e2b.api.client.models import SandboxPauseResult as WirePauseResult


@pytest.mark.parametrize(
    ("force", "memory", "body"),
    [
        (None, None, {}),
        (True, None, {"force": True}),
        (False, None, {"force": False}),
        (None, False, {"memory": False}),
    ],
)
def test_pause_request_omits_what_was_not_passed(
    force: bool | None, memory: bool | None, body: dict[str, bool]
) -> None:
    assert pause_request(force=force, memory=memory).to_dict() == body


@pytest.mark.parametrize(
    ("status", "parsed", "result"),
    [
        (200, WirePauseResult(forced=True), SandboxPauseResult(True, True)),
        (200, WirePauseResult(forced=False), SandboxPauseResult(True, False)),
        (204, None, SandboxPauseResult(True, False)),
        (409, None, SandboxPauseResult(False, False)),
    ],
)
def test_pause_result(status: int, parsed: object, result: SandboxPauseResult) -> None:
    assert pause_result(status, parsed) == result


def test_pause_result_is_frozen_and_always_truthy() -> None:
    result = SandboxPauseResult(paused=False, forced=False)
    assert bool(result) is True
    with pytest.raises(AttributeError):
        result.paused = True  # type: ignore[misc]


def test_cursor_stops_when_the_header_is_absent() -> None:
    cursor = PageCursor(ListQuery(), ConnectionConfig(api_key="k"))
    assert cursor.has_next
    cursor.advance({"X-Next-Token": "t"})
    assert (cursor.has_next, cursor.next_token) == (True, "t")
    cursor.advance({})
    assert (cursor.has_next, cursor.next_token) == (False, None)
    with pytest.raises(SandboxException):
        cursor.ensure_more()
