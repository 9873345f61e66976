"""This SDK's `Sandbox`/`AsyncSandbox` and data plane against the released e2b 2.63.0's: names, positions, keywords.

`released_signatures.py` prints both installations' signatures (run by the
released virtualenv's interpreter and by this one's); every difference must be
one listed below, with the reason the users' guide gives ("Migrating to 3.0").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.test_released_sdk import clean_env, released_python  # noqa: F401  (a fixture)

SCRIPT = Path(__file__).with_name("released_signatures.py")

# (method, parameter) -> why this SDK does not take it as e2b 2.63.0 does.
DIFFERENCES = {
    ("pause", "strict"): "the pause contract: the default pause checks the guest agent, force=True skips the check",
    ("create", "mcp"): "MCP servers live in the sandbox's guest agent, which this control-plane SDK does not wrap",
    ("create", "logger"): "a connection setting here (keyword), as on every call",
    ("connect", "logger"): "a connection setting here (keyword), as on every call",
    ("fork", "logger"): "a connection setting here (keyword), as on every call",
}
# Parameters that are keyword-only here though positional in 2.63.0: after `mcp`, a positional
# argument would bind to the wrong parameter, so it is a TypeError instead.
KEYWORD_ONLY_HERE = {("create", name) for name in ("network", "iam", "lifecycle", "volume_mounts", "idempotency_key")}
# Connection settings of 2.63.0 this SDK does not take (a TypeError names them).
SETTINGS_NOT_TAKEN = {
    "api_headers": "headers= does the same",
    "http_version": "the transport decides (pyqwest: HTTP/1.1 and HTTP/2)",
    "proxy": "pass a transport configured with a proxy as transport=",
    "sandbox_url": "only for the guest agent's API, which this SDK does not wrap",
    "validate_api_key": "the key is checked by the API",
}


# The data plane: (class, method, parameter) -> why its position differs from 2.63.0's.  From that
# parameter on, a positional argument is refused (a TypeError naming the keyword), never bound wrong.
SYNC_PTY = "e2b.sandbox_sync.commands.pty.Pty"
DATA_PLANE_POSITIONS = {
    (SYNC_PTY, "create", "user"): "the sync flavour is derived from the async one, whose on_data comes second "
    "(as in 2.x's AsyncSandbox); here it is optional, and a positional user is refused as not callable",
    (SYNC_PTY, "connect", "timeout"): "as create: on_data comes second, optional",
}


def signatures(python: Path | str, cwd: Path) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), "-I", str(SCRIPT)], capture_output=True, text=True, cwd=cwd, env=clean_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="module")
def both(released_python: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:  # noqa: F811
    cwd = tmp_path_factory.mktemp("signatures")
    return signatures(released_python, cwd), signatures(sys.executable, cwd)


def _accepted(form: dict[str, list[str]], settings: list[str]) -> set[str]:
    return {*form["positional"], *form["keyword"], *settings}


def _forms(released: dict[str, Any], ours: dict[str, Any]) -> list[tuple[str, str, str, Any, Any]]:
    rows = []
    for cls, methods in released["classes"].items():
        for method, forms in methods.items():
            if method == "context manager":
                continue
            for form in ("instance", "class"):
                rows.append((cls, method, form, forms[form], ours["classes"][cls].get(method, {}).get(form)))
    return rows


def test_the_released_signatures_were_read(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    assert released["version"] == "2.63.0"
    assert len(_forms(released, ours)) == 2 * 2 * 14


def test_every_form_of_every_released_call_exists(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    missing = [(c, m, f) for c, m, f, theirs, mine in _forms(released, ours) if theirs is not None and mine is None]
    assert missing == []


def test_positions_match_up_to_a_documented_difference(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    wrong = []
    for cls, method, form, theirs, mine in _forms(released, ours):
        if theirs is None:
            continue
        for index, name in enumerate(theirs["positional"]):
            if (method, name) in DIFFERENCES or (method, name) in KEYWORD_ONLY_HERE:
                break  # from here on, positions differ on purpose: a TypeError, never a wrong binding
            if index >= len(mine["positional"]) or mine["positional"][index] != name:
                wrong.append((cls, method, form, index, name, mine["positional"]))
    assert wrong == []


def test_every_keyword_is_taken_or_its_difference_documented(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    not_taken = []
    for cls, method, form, theirs, mine in _forms(released, ours):
        if theirs is None:
            continue
        accepted = _accepted(mine, ours["settings"])
        for name in {*theirs["positional"], *theirs["keyword"]} - accepted:
            if (method, name) not in DIFFERENCES:
                not_taken.append((cls, method, form, name))
    assert not_taken == []


def test_the_documented_differences_are_real(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """A difference that no longer exists must leave the list (and the migration guide)."""
    released, ours = both
    stale = []
    for method, name in DIFFERENCES:
        theirs = released["classes"]["Sandbox"][method]
        mine = ours["classes"]["Sandbox"][method]
        for form in ("instance", "class"):
            if theirs[form] is None or name not in {*theirs[form]["positional"], *theirs[form]["keyword"]}:
                continue
            if name in mine[form]["positional"]:
                stale.append((method, name, form))
    assert stale == []


def test_connection_settings(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    assert set(released["settings"]) - set(ours["settings"]) == set(SETTINGS_NOT_TAKEN)


def test_values_carry_every_released_field(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    for name, fields in released["values"].items():
        if name == "SandboxState":
            assert ours["values"][name] == fields  # members and their wire strings
        else:
            assert set(fields) <= set(ours["values"][name]), name


def test_with_blocks(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    for cls in ("Sandbox", "AsyncSandbox"):
        assert set(released["classes"][cls]["context manager"]) <= set(ours["classes"][cls]["context manager"])


def _data_plane(both: tuple[dict[str, Any], dict[str, Any]]) -> list[tuple[str, str, Any, Any]]:
    released, ours = both
    return [
        (cls, name, shape, ours["data plane"].get(cls, {}).get(name, "missing"))
        for cls, members in released["data plane"].items()
        for name, shape in members.items()
    ]


def test_the_data_plane_was_read(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, _ = both
    assert len(released["data plane"]) == 13
    assert {"run", "connect", "list", "kill", "send_stdin", "close_stdin"} <= set(
        released["data plane"]["e2b.sandbox_sync.commands.command.Commands"]
    )


def test_every_data_plane_class_method_and_property_is_at_its_released_path(
    both: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    missing = [(cls, name) for cls, name, _, mine in _data_plane(both) if mine == "missing"]
    assert missing == []
    kinds = [(cls, name) for cls, name, theirs, mine in _data_plane(both) if (theirs is None) != (mine is None)]
    assert kinds == []  # a property stays one, a method stays one


def test_data_plane_positions_match_up_to_a_documented_difference(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    wrong = []
    for cls, method, theirs, mine in _data_plane(both):
        if theirs is None or not isinstance(mine, dict):
            continue
        for index, name in enumerate(theirs["positional"]):
            if (cls, method, name) in DATA_PLANE_POSITIONS:
                break
            if index >= len(mine["positional"]) or mine["positional"][index] != name:
                wrong.append((cls, method, index, name, mine["positional"]))
    assert wrong == []


def test_every_data_plane_keyword_is_taken(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    not_taken = []
    for cls, method, theirs, mine in _data_plane(both):
        if theirs is None or not isinstance(mine, dict):
            continue
        not_taken += [(cls, method, n) for n in {*theirs["positional"], *theirs["keyword"]} - _accepted(mine, [])]
    assert not_taken == []


def test_the_documented_data_plane_differences_are_real(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    released, ours = both
    stale = []
    for cls, method, name in DATA_PLANE_POSITIONS:
        theirs = released["data plane"][cls][method]["positional"]
        mine = ours["data plane"][cls][method]["positional"]
        if mine.index(name) == theirs.index(name):
            stale.append((cls, method, name))
    assert stale == []
