"""e2b._sandbox_logic: what the sync and async sandbox classes decide alike."""

from __future__ import annotations

import warnings

import httpx
import pytest
from e2b import SandboxException, SandboxPauseResult
from e2b._sandbox_logic import PageCursor, checked, pause_request, pause_result, unexploded, warn_beta_pause
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


def test_beta_pause_warning_points_at_the_caller() -> None:
    def beta_pause() -> None:
        warn_beta_pause()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        beta_pause()
    assert caught[0].category is DeprecationWarning
    assert caught[0].filename == __file__


def test_cursor_stops_when_the_header_is_absent() -> None:
    cursor = PageCursor()
    assert cursor.has_next
    cursor.advance({"X-Next-Token": "t"})
    assert (cursor.has_next, cursor.next_token) == (True, "t")
    cursor.advance({})
    assert (cursor.has_next, cursor.next_token) == (False, None)
    with pytest.raises(SandboxException):
        cursor.ensure_more()


def test_unexploded_joins_array_parameters() -> None:
    assert unexploded({"params": {"state": ["running", "paused"], "limit": 2}}) == {
        "params": {"state": "running,paused", "limit": 2}
    }


def test_checked_refuses_a_non_json_success_answer() -> None:
    page = httpx.Response(200, content=b"<html>login</html>", headers={"content-type": "text/html"})
    with pytest.raises(SandboxException) as raised:
        checked(page, {200})
    assert raised.value.status_code == 200
    assert str(raised.value).startswith("the API answered 200 with text/html, not JSON")
    empty = httpx.Response(204)
    assert checked(empty, {204}) is empty
    ok = httpx.Response(200, json=[])
    assert checked(ok, {200}) is ok
