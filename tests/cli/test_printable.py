"""`e2b_cli.printable`, and API values that try to drive the terminal, through every command that prints them."""

from __future__ import annotations

import json
from ast import literal_eval

import httpx
import pytest
from e2b_cli.errors import ExitStatus
from e2b_cli.printable import printable
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.conftest import SANDBOX_ID, Invoke, MockApi, error, sandbox_json
from tests.fuzz_budget import examples

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;owned\x07"
C1_CSI = "\x9b2J"
RLO = "\u202e"
HOSTILE = f"base{CLEAR}{TITLE}{C1_CSI}{RLO}\nfake line"
# Nothing a terminal acts on may reach it: ESC, BEL, the C1 CSI, the bidi override, a newline.
RAW = ("\x1b", "\x07", "\x9b", RLO)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain sbx_123 ünïcode ✓", "plain sbx_123 ünïcode ✓"),
        (CLEAR, "\\x1b[2J"),
        (TITLE, "\\x1b]0;owned\\x07"),
        (C1_CSI, "\\x9b2J"),
        ("a\nb\tc\rd\x7f", "a\\nb\\tc\\rd\\x7f"),
        (f"x{RLO}y\u2066z", "x\\u202ey\\u2066z"),
        # Line and paragraph separators: str.splitlines splits on them, so one could fake a line.
        ("ok\u2028codegen: clean\u2029", "ok\\u2028codegen: clean\\u2029"),
        # Zero-width and other format characters (Cf), the BOM, a surrogate, an unassigned code point.
        ("a\u200bb\ufeffc\u00add\U000e0001", "a\\u200bb\\ufeffc\\xadd\\U000e0001"),
        ("\udcff\U0010ffff\u0378", "\\udcff\\U0010ffff\\u0378"),
        # Spaces other than the plain one (Zs): shown, so no two names look alike.
        ("a\u00a0b\u3000c d", "a\\xa0b\\u3000c d"),
        ("中文 テキスト 한국어 עברית e\u0301", "中文 テキスト 한국어 עברית e\u0301"),
    ],
)
def test_controls_come_out_as_escapes(text: str, shown: str) -> None:
    assert printable(text) == shown


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# What str.isprintable rejects, every category of it: Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs but the space.
NOT_PRINTABLE = BIDI + "\x00\x1b\x85\x9b\u00a0\u00ad\u200b\u2028\u2029\u3000\ufeff\ud800\ue000\U000e0001\u0378"


def _acted_on(char: str) -> bool:
    return not char.isprintable()


def test_every_category_of_non_printable_is_escaped() -> None:
    assert all(_acted_on(char) for char in NOT_PRINTABLE)  # the premise
    out = printable(NOT_PRINTABLE)
    assert out.isascii() and out.isprintable()
    assert len(out.splitlines()) == 1


@settings(max_examples=examples(300))
@given(st.text(alphabet=st.characters() | st.sampled_from(NOT_PRINTABLE)))
def test_nothing_a_terminal_acts_on_survives_and_the_rest_is_untouched(text: str) -> None:
    out = printable(text)
    assert out.isprintable() and len(out.splitlines()) <= 1
    if text.isprintable():
        assert out == text
    # Character by character: a printable one as it is, any other as the Python escape that reads back as it.
    assert out == "".join(printable(c) for c in text)
    for char in text:
        shown = printable(char)
        assert shown == char if char.isprintable() else (shown.isascii() and literal_eval(f'"{shown}"') == char)


def _hostile_sandbox(sandbox_id: str = SANDBOX_ID) -> dict[str, object]:
    return sandbox_json(sandbox_id, templateID=HOSTILE, alias=TITLE, metadata={f"k{CLEAR}": HOSTILE})


def _assert_inert(text: str) -> None:
    assert not any(c in text for c in RAW), repr(text)
    assert "fake line" not in text.splitlines()


@pytest.mark.parametrize("args", [["sandbox", "list"], ["sandbox", "info", SANDBOX_ID]])
def test_tables_escape_api_values(api: MockApi, run: Invoke, args: list[str]) -> None:
    api.on("GET", "/v2/sandboxes", httpx.Response(200, json=[_hostile_sandbox()]))
    api.on("GET", f"/sandboxes/{SANDBOX_ID}", httpx.Response(200, json=_hostile_sandbox()))
    result = run(*args)
    assert result.exit_code == 0, result.output
    _assert_inert(result.stdout)
    assert "base\\x1b[2J\\x1b]0;owned\\x07\\x9b2J\\u202e\\nfake line" in result.stdout


@pytest.mark.parametrize("args", [["sandbox", "list", "--json"], ["sandbox", "info", SANDBOX_ID, "--json"]])
def test_json_output_is_escaped_by_json_and_keeps_the_values(api: MockApi, run: Invoke, args: list[str]) -> None:
    api.on("GET", "/v2/sandboxes", httpx.Response(200, json=[_hostile_sandbox()]))
    api.on("GET", f"/sandboxes/{SANDBOX_ID}", httpx.Response(200, json=_hostile_sandbox()))
    result = run(*args)
    assert result.exit_code == 0, result.output
    _assert_inert(result.stdout)
    data = json.loads(result.stdout)
    record = data[0] if isinstance(data, list) else data
    assert record["template_id"] == HOSTILE  # a program gets the value itself
    assert record["metadata"] == {f"k{CLEAR}": HOSTILE}


def test_created_id_is_escaped(api: MockApi, run: Invoke) -> None:
    created = {"sandboxID": f"sbx{CLEAR}", "templateID": "base", "clientID": "c", "envdVersion": "0.2.0"}
    api.on("POST", "/sandboxes", httpx.Response(201, json=created))
    result = run("sandbox", "create")
    # No later call could name it: the answer is not the API's, and the id is shown escaped.
    assert result.exit_code == ExitStatus.FAILED, result.output
    _assert_inert(result.stderr)
    assert "sbx\\x1b[2J" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("as_json", [False, True])
def test_api_error_messages_are_escaped(api: MockApi, run: Invoke, as_json: bool) -> None:
    refusal = {"code": 503, "message": f"refused{TITLE}{RLO}\nfake line", "error_code": "sandbox_pause_refused"}
    api.on("POST", f"/sandboxes/{SANDBOX_ID}/pause", httpx.Response(503, json=refusal))
    api.on("GET", f"/sandboxes/{SANDBOX_ID}", error(400, f"bad{CLEAR}"))
    for args in (["sandbox", "pause", SANDBOX_ID], ["sandbox", "info", SANDBOX_ID]):
        result = run(*args, *(["--json"] if as_json else []))
        assert result.exit_code == ExitStatus.FAILED, result.output
        _assert_inert(result.stdout)
        _assert_inert(result.stderr)
        if as_json:
            invalid = f"the API refused the request as invalid: bad{CLEAR}"
            assert json.loads(result.stdout)["error"]["message"] in (refusal["message"], invalid)
        else:
            assert len(result.stderr.splitlines()) <= 2, result.stderr


def test_snapshot_values_are_escaped(api: MockApi, run: Invoke) -> None:
    hostile = {"snapshotID": f"snap{CLEAR}", "names": [HOSTILE, f"team/{TITLE}:default"]}
    api.on("GET", "/snapshots", httpx.Response(200, json=[hostile]))
    api.on("POST", f"/sandboxes/{SANDBOX_ID}/snapshots", httpx.Response(201, json=hostile))
    table = run("sandbox", "snapshot", "list")
    assert table.exit_code == 0, table.output
    _assert_inert(table.stdout)
    assert "snap\\x1b[2J" in table.stdout and "team/\\x1b]0;owned\\x07:default" in table.stdout
    created = run("sandbox", "snapshot", "create", SANDBOX_ID)
    assert created.stdout == "snap\\x1b[2J\n"
    as_json = run("sandbox", "snapshot", "list", "--json")
    _assert_inert(as_json.stdout)
    assert json.loads(as_json.stdout)[0]["names"] == hostile["names"]


def test_a_hostile_snapshot_id_given_back_is_escaped(api: MockApi, run: Invoke) -> None:
    api.on("DELETE", "/templates/x", httpx.Response(204))
    deleted = run("sandbox", "snapshot", "delete", "x")
    assert deleted.stdout == "Deleted snapshot x.\n"
    unknown = run("sandbox", "snapshot", "delete", f"x{CLEAR}")
    assert unknown.exit_code == ExitStatus.USAGE  # no snapshot id holds a control character
    _assert_inert(unknown.stderr)
    assert "x\\x1b[2J" in unknown.stderr
