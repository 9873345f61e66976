"""e2b._sandbox_logic: what the sync and async sandbox classes decide alike."""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any, get_args

import pytest
from e2b import InvalidArgumentException, SandboxException, SandboxPauseResult, UnexpectedResponseException
from e2b._config import ConnectionConfig
from e2b._sandbox_logic import (
    PageCursor,
    connect_body,
    expected,
    fork_body,
    metrics_params,
    pause_body,
    pause_result,
    snapshot_id,
    snapshot_info,
    wire,
    wire_list,
)
from e2b.api import operations
from e2b.api.client.models import SandboxPauseResult as WirePauseResult
from e2b.api.operations import SUCCESS, Operation


@pytest.mark.parametrize(
    ("kwargs", "body"),
    [
        ({}, {}),
        ({"force": True}, {"force": True}),
        ({"force": False}, {"force": False}),
        ({"mode": "filesystem"}, {"memory": False}),
        ({"mode": "full"}, {"memory": True}),
        ({"keep_memory": False}, {"memory": False}),
    ],
)
def test_pause_body_omits_what_was_not_passed(kwargs: dict[str, Any], body: dict[str, bool]) -> None:
    assert pause_body(**{"keep_memory": None, "mode": None, "force": None, **kwargs}) == body


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "memory"}, "mode must be one of 'full', 'filesystem'"),
        ({"mode": "full", "keep_memory": True}, "not both"),
        ({"force": "yes"}, "force must be a bool"),
        ({"force": True, "mode": "filesystem"}, "needs a memory snapshot"),
    ],
)
def test_pause_body_refuses_what_the_api_would(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgumentException, match=message):
        pause_body(**{"keep_memory": None, "mode": None, "force": None, **kwargs})


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


def test_connect_body() -> None:
    assert connect_body(30, "restore") == {"timeout": 30}
    assert connect_body(30, "reboot") == {"timeout": 30, "memory": False}
    with pytest.raises(InvalidArgumentException, match="on_resume must be one of 'restore', 'reboot'"):
        connect_body(30, "memory")


@pytest.mark.parametrize("count", [0, 21, -1, True, 2.0, "3"])
def test_fork_count_out_of_range(count: object) -> None:
    with pytest.raises(InvalidArgumentException, match="count must be an integer from 1 to 20"):
        fork_body(None, count)  # type: ignore[arg-type]


def test_metrics_range_must_be_datetimes_in_order() -> None:
    import datetime

    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
    assert metrics_params(start, None)["start"] == 1735689600
    with pytest.raises(InvalidArgumentException, match="start must not be after end"):
        metrics_params(start, start - datetime.timedelta(seconds=1))
    with pytest.raises(InvalidArgumentException, match="end must be a datetime"):
        metrics_params(None, 1735689600)


def test_a_snapshot_id_must_be_text() -> None:
    assert snapshot_id("team/snap:v1") == "team/snap:v1"  # the generated client encodes it once
    with pytest.raises(InvalidArgumentException, match="snapshot_id"):
        snapshot_id("")


def test_an_answer_without_a_model_is_an_sdk_exception() -> None:
    with pytest.raises(UnexpectedResponseException, match=r"^the answer is not the API's: None is not an answer"):
        wire(None)


def test_a_model_whose_to_dict_fails_is_not_the_api_s() -> None:
    class Broken:
        def to_dict(self) -> dict[str, object]:
            raise RecursionError("maximum recursion depth exceeded")

    with pytest.raises(UnexpectedResponseException, match="RecursionError"):
        wire(Broken())
    deep = re.escape("not the API's: {'deep': [[[...]]]} is not a list")
    with pytest.raises(UnexpectedResponseException, match=deep + "$"):
        wire_list({"deep": [[[[[[1]]]]]]})


def test_snapshot_names_that_are_not_strings_are_shown_briefly() -> None:
    info = snapshot_info({"snapshotID": "s", "names": ["a", 10**5000, [[[["deep"]]]], 10**100]})
    # str() of the first would raise (over 4,300 digits), of the second recurse for a deep enough one.
    assert info.names == ["a", "<int>", "[[[[...]]]]", "100000000000000000...0000000000000000000"]


def test_cursor_stops_when_the_header_is_absent() -> None:
    cursor = PageCursor({}, ConnectionConfig(api_key="k"))
    assert cursor.has_next
    cursor.advance({"X-Next-Token": "t"})
    assert (cursor.has_next, cursor.next_token) == (True, "t")
    cursor.advance({})
    assert (cursor.has_next, cursor.next_token) == (False, None)
    with pytest.raises(SandboxException, match="no more pages"):
        cursor.request({})


# The statuses each call expected when they were constants kept by hand in e2b/_sandbox_logic.py:
# now the spec's successes (e2b/api/operations.py, generated) and, for pause, what is kept by hand.
EXPECTED_BEFORE = {
    "createSandbox": {201},
    "connectSandbox": {200, 201},
    "getSandbox": {200},
    "listSandboxes": {200},
    "listSnapshots": {200},
    "getSandboxMetrics": {200},
    "setSandboxTimeout": {204},
    "updateSandboxNetwork": {204},
    "killSandbox": {204},
    "forkSandbox": {201},
    "createSnapshot": {201},
    "deleteTemplate": {204},
    "pauseSandbox": {200, 204, 409},
}


@pytest.mark.parametrize(("operation", "statuses"), sorted(EXPECTED_BEFORE.items()))
def test_each_call_expects_what_it_did_when_the_statuses_were_kept_by_hand(
    operation: Operation, statuses: set[int]
) -> None:
    assert expected(operation) == statuses


def test_pause_handles_both_contracts_and_already_paused_whatever_the_spec_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The deployed API's spec lists 204 for pause (spec/upstream-history/base.openapi.yml's shape).
    monkeypatch.setitem(SUCCESS, "pauseSandbox", frozenset({204}))
    assert expected("pauseSandbox") == {200, 204, 409}
    # A status the spec adds is expected too: the spec says what succeeds.
    monkeypatch.setitem(SUCCESS, "killSandbox", frozenset({200, 204}))
    assert expected("killSandbox") == {200, 204}


def test_every_operation_in_the_table_is_a_module_of_the_generated_client() -> None:
    names = [name for name in dir(operations) if not name.startswith("_") and name not in ("SUCCESS", "Operation")]
    modules = {name for name in names if isinstance(getattr(operations, name), ModuleType)}
    assert len(modules) == len(SUCCESS) == len(get_args(Operation))
    for name in modules:
        module = getattr(operations, name)
        assert module.__name__.startswith("e2b.api.client.api.") and module.__name__.endswith(f".{name}")
        assert callable(module.asyncio_detailed) and callable(module.sync_detailed)
    with pytest.raises(AttributeError, match="no attribute 'no_such_operation'"):
        operations.no_such_operation  # type: ignore[attr-defined]  # noqa: B018
