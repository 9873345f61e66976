"""load_yaml: plain data with a line for every node, and every refusal before anything is built."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codegen.openapi.plain_yaml as plain_yaml
from codegen.openapi.plain_yaml import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_MAPPINGS,
    MAX_PROBLEMS,
    MAX_SCALARS,
    MAX_SEQUENCE_ITEMS,
    MAX_YAML_BYTES,
    load_yaml,
)
from tests.fixtures import REAL_SPEC, needs_real_spec
from tests.fuzz_budget import examples
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]


def read(text: str | bytes) -> Any:
    return load_yaml(text.encode() if isinstance(text, str) else text, display_path="spec/openapi.yml").data


def problems_of(data: bytes) -> list[str]:
    with pytest.raises(ToolError) as caught:
        load_yaml(data, display_path="spec/openapi.yml")
    return [problem.render() for problem in caught.value.problems]


# --- what plain data comes out --------------------------------------------------


@pytest.mark.parametrize(
    ("scalar", "value"),
    [
        ("true", True),
        ("FALSE", False),
        ("null", None),
        ("~", None),
        ("", None),
        ("12", 12),
        ("-3", -3),
        ("0o17", 15),
        ("0x1f", 31),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        ("-.inf", -math.inf),
        ("3.0", 3.0),
        # Text in the YAML 1.2 core schema, whatever YAML 1.1 made of them.
        ("yes", "yes"),
        ("off", "off"),
        ("0755x", "0755x"),
        ("1_000", "1_000"),
        ("2024-01-02", "2024-01-02"),
        ("2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"),
        ("'12'", "12"),
        ('"true"', "true"),
        ("! 12", "12"),
        ("!!str 12", "12"),
        ("!!float 2", 2.0),
    ],
)
def test_scalars_resolve_by_the_yaml_1_2_core_schema(scalar: str, value: Any) -> None:
    found = read(f"k: {scalar}\n")["k"]
    assert found == value and type(found) is type(value)


def test_nan_is_a_float() -> None:
    assert math.isnan(read("k: .nan\n")["k"])


# json.dumps escapes every non-ASCII character as \\uXXXX, a YAML escape too,
# except past U+FFFF: JSON writes a surrogate pair, which YAML does not have
# (it writes \\UXXXXXXXX). So the text is the BMP; raw non-BMP text is below.
BMP = st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"])
BMP_TEXT = st.text(BMP)
BMP_KEY = st.text(BMP, max_size=100)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | BMP_TEXT,
    # YAML caps an implicit key at 1,024 characters of source: a key of 100
    # characters escaped as \\uXXXX stays under it.
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(BMP_KEY, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(300), deadline=None)
@given(JSON, st.sampled_from([None, 2]))
def test_json_reads_as_the_same_data(value: Any, indent: int | None) -> None:
    """JSON is YAML 1.2: JSON text, flow or indented, reads back as the value it encodes."""
    text = json.dumps({"k": value}, indent=indent)
    assert read(text) == {"k": value}


def test_text_beyond_the_bmp_reads_as_written() -> None:
    assert read("k: 😀 \\U0001F600\n") == {"k": "😀 \\U0001F600"}
    assert read('k: "😀 \\U0001F600"\n') == {"k": "😀 😀"}


def test_keys_are_text_and_bare_status_codes_become_text() -> None:
    assert read("200: a\n'404': b\nx: c\n") == {"200": "a", "404": "b", "x": "c"}


def test_lines_point_at_keys_for_values_and_at_items_for_sequence_entries() -> None:
    tree = load_yaml(b"a:\n  b:\n    - x\n    - y: 1\n      z: 2\nc: [1, 2]\n", display_path="f.yml")
    assert tree.data == {"a": {"b": ["x", {"y": 1, "z": 2}]}, "c": [1, 2]}
    assert tree.lines == {
        (): 1,
        ("a",): 1,
        ("a", "b"): 2,
        ("a", "b", "0"): 3,
        ("a", "b", "1"): 4,
        ("a", "b", "1", "y"): 4,
        ("a", "b", "1", "z"): 5,
        ("c",): 6,
        ("c", "0"): 6,
        ("c", "1"): 6,
    }
    assert tree.where("/a/b/1/nope") == "f.yml:4 (/a/b/1/nope)"


def test_an_empty_file_is_null_at_line_one() -> None:
    tree = load_yaml(b"", display_path="f.yml")
    assert tree.data is None and tree.line_of("") == 1


def test_a_byte_order_mark_is_not_content() -> None:
    assert read(b"\xef\xbb\xbfk: v\n") == {"k": "v"}


@needs_real_spec
def test_the_real_spec_reads_the_same_as_the_reference_parser() -> None:
    """PyYAML's own loader agrees wherever YAML 1.1 and 1.2 do: on everything in this spec."""
    import yaml

    data = REAL_SPEC.read_bytes()
    expected = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    tree = load_yaml(data, display_path="x")
    assert tree.data == expected
    # Every node has a line, and each is the line its key or item starts on.
    assert tree.line_of("/paths/~1sandboxes~1{sandboxID}~1pause/post") == _line_of(
        data, "    post:", after="  /sandboxes/{sandboxID}/pause:"
    )


def _line_of(data: bytes, text: str, *, after: str) -> int:
    lines = data.decode().splitlines()
    start = lines.index(after)
    return start + lines[start:].index(text) + 1


# --- refusals before parsing ------------------------------------------------------


def test_over_the_size_cap_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parsing(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed an oversized file")

    monkeypatch.setattr(plain_yaml, "_decode", no_parsing)
    [message] = problems_of(b"#" * (MAX_YAML_BYTES + 1))
    assert f"{MAX_YAML_BYTES + 1:,} bytes" in message
    assert f"{MAX_YAML_BYTES:,}-byte cap" in message


def test_exactly_the_size_cap_is_not_refused_for_size() -> None:
    # A small cap keeps the test fast; the comparison is the same code.
    data = b"info:\n  title: Tiny\n"
    assert load_yaml(data, display_path="x", max_bytes=len(data)).data["info"]["title"] == "Tiny"
    with pytest.raises(ToolError, match="over the"):
        load_yaml(data, display_path="x", max_bytes=len(data) - 1)


def test_non_utf8_is_refused_with_its_line() -> None:
    [message] = problems_of(b"openapi: 3.0.3\ninfo:\n  title: caf\xe9\n")
    assert message.startswith("spec/openapi.yml:3: is not UTF-8")


def test_a_control_character_is_refused_with_its_line() -> None:
    [message] = problems_of(b"openapi: 3.0.3\ninfo:\n  title: a\x07b\n")
    assert message.startswith("spec/openapi.yml:3: is not valid YAML")


# --- refusals while parsing -------------------------------------------------------


def test_malformed_yaml_is_refused_with_its_line() -> None:
    [message] = problems_of(b"openapi: 3.0.3\ninfo: {title: x\npaths: }\n")
    assert message.startswith("spec/openapi.yml:3: is not valid YAML")


def test_duplicate_keys_are_refused_with_the_line_of_each() -> None:
    [message] = problems_of(b"openapi: 3.0.3\ninfo: {}\npaths: {}\ninfo: {}\n")
    assert message == "spec/openapi.yml:4: duplicate key 'info' (first on line 2)"


def test_keys_that_collide_once_read_as_text_are_refused() -> None:
    [message] = problems_of(b'responses:\n  200: {}\n  "200": {}\n')
    assert message == "spec/openapi.yml:3: duplicate key '200' (first on line 2)"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (b"true: x\n", "mapping key True is not a string"),
        (b"1.5: x\n", "mapping key 1.5 is not a string"),
        (b"? [a, b]\n: x\n", "mapping key a sequence is not a string"),
        (b"? {a: b}\n: x\n", "mapping key a mapping is not a string"),
    ],
)
def test_keys_that_are_not_text_are_refused(source: bytes, found: str) -> None:
    [message] = problems_of(source)
    assert message == f"spec/openapi.yml:1: {found}"


def test_a_refused_key_drops_its_value_and_reading_goes_on() -> None:
    messages = problems_of(b"? [a]\n: {deep: {er: 1}}\nok: 1\nok: 2\n")
    assert messages == [
        "spec/openapi.yml:1: mapping key a sequence is not a string",
        "spec/openapi.yml:4: duplicate key 'ok' (first on line 3)",
    ]


def test_a_key_of_any_text_is_kept() -> None:
    assert read('"\\0refused": 1\n"": 2\n') == {"\0refused": 1, "": 2}


def test_anchor_and_alias_are_refused() -> None:
    messages = problems_of(b"openapi: 3.0.3\nx: &shared {type: string}\ny: *shared\n")
    assert messages == [
        "spec/openapi.yml:2: defines the YAML anchor &shared; anchors are refused",
        "spec/openapi.yml:3: uses the YAML alias *shared; aliases are refused",
    ]


def test_self_referencing_alias_is_refused() -> None:
    messages = problems_of(b"&a [*a]\n")
    assert any("anchor &a" in message for message in messages)
    assert any("alias *a" in message for message in messages)


def test_billion_laughs_is_refused_cheaply() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        previous = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([previous] * 9)}]")
    bomb = ("\n".join(lines) + "\n").encode()

    started = time.monotonic()
    messages = problems_of(bomb)
    # Expanded, this is 9^10 strings; refused, it is the cost of its 70 events.
    assert time.monotonic() - started < 2
    assert messages[0] == "spec/openapi.yml:1: defines the YAML anchor &a0; anchors are refused"
    assert len(messages) == MAX_PROBLEMS


def test_ten_thousand_levels_of_nesting_are_refused_without_recursion_error() -> None:
    # libyaml's scanner reads ahead through flow brackets and has its own cap
    # (1,000 levels), so either limit may be the one that speaks.
    [message] = problems_of(b"[" * 10_000 + b"]" * 10_000)
    assert message.startswith("spec/openapi.yml:1: ") and "nest" in message


def test_deep_flow_nesting_is_refused_at_our_limit() -> None:
    [message] = problems_of(b"[" * 200 + b"]" * 200)
    assert message == f"spec/openapi.yml:1: nests deeper than {MAX_DEPTH} levels"


def test_deep_block_nesting_is_refused_with_the_line_it_goes_too_deep() -> None:
    text = "".join("  " * level + f"k{level}:\n" for level in range(MAX_DEPTH + 5))
    [message] = problems_of(text.encode())
    assert message == f"spec/openapi.yml:{MAX_DEPTH + 1}: nests deeper than {MAX_DEPTH} levels"


def test_nesting_at_the_limit_is_fine() -> None:
    data = load_yaml(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, display_path="x").data
    for _ in range(MAX_DEPTH - 1):
        data = data[0]
    assert data == []


@pytest.mark.parametrize(
    ("source", "tag"),
    [
        (b"openapi: 3.0.3\nx: !!python/object:os.system {}\n", "tag:yaml.org,2002:python/object:os.system"),
        (b"x: !!binary aGk=\n", "tag:yaml.org,2002:binary"),
        (b"x: !!set {a: null}\n", "tag:yaml.org,2002:set"),
        (b"x: !custom 1\n", "!custom"),
        (b"x: !!map [1]\n", "tag:yaml.org,2002:map"),
    ],
)
def test_non_json_tags_are_refused(source: bytes, tag: str) -> None:
    [message] = problems_of(source)
    assert message.endswith(f": uses the YAML tag {tag}; only plain JSON types are allowed")


def test_a_tag_the_scalar_does_not_match_is_refused() -> None:
    [message] = problems_of(b"x: !!int twelve\n")
    assert message == "spec/openapi.yml:1: tags 'twelve' as tag:yaml.org,2002:int, which it is not"


def test_more_than_one_document_is_refused() -> None:
    [message] = problems_of(b"openapi: 3.0.3\n---\nopenapi: 3.1.0\n")
    assert message == "spec/openapi.yml:2: holds more than one YAML document"


# --- bounds on what a small file can ask for (issue 31, points 7 and 10) -------------------------------


@pytest.mark.parametrize("spelled", ["7" * 5_000, "-" + "7" * 5_000, "0x" + "f" * 5_000, "0o" + "7" * 5_000])
def test_a_huge_integer_is_one_problem_with_its_line(spelled: str) -> None:
    """Not Python's own refusal, which names no place and suggests sys.set_int_max_str_digits()."""
    [message] = problems_of(f"a: 1\nb: {spelled}\n".encode())
    assert message == f"spec/openapi.yml:2: holds an integer of {len(spelled):,} digits, more than the 1,000 allowed"


def test_a_huge_integer_key_or_tagged_integer_is_refused_the_same_way() -> None:
    assert problems_of(("7" * 5_000 + ": x\n").encode())[0].startswith("spec/openapi.yml:1: holds an integer of")
    assert problems_of(("a: !!int " + "7" * 5_000 + "\n").encode())[0].startswith("spec/openapi.yml:1: holds an")


def test_integers_up_to_the_bound_and_long_text_are_read() -> None:
    data = load_yaml(f"a: {'7' * MAX_INT_DIGITS}\nb: '{'7' * 5_000}'\n".encode(), display_path="x").data
    assert data == {"a": int("7" * MAX_INT_DIGITS), "b": "7" * 5_000}


def test_more_objects_than_the_bound_is_one_problem_at_the_first_one_past_it() -> None:
    text = "".join(f"k{i}:\n  type: string\n" for i in range(MAX_MAPPINGS + 500))
    [message] = problems_of(text.encode())
    # The root is a mapping too: the one past the bound is the value of k{MAX_MAPPINGS - 1}, on its second line.
    assert message == (
        f"spec/openapi.yml:{2 * MAX_MAPPINGS}: holds more than {MAX_MAPPINGS:,} objects (mappings): "
        "a file this large is not one we expect, and validating it would take minutes"
    )


def test_the_bound_on_objects_is_far_above_the_real_spec() -> None:
    """The runtime's spec has 1,722 objects; the bound leaves room for it to grow fivefold."""
    text = "".join(f"k{i}: {{}}\n" for i in range(MAX_MAPPINGS - 1))
    assert len(load_yaml(text.encode(), display_path="x").data) == MAX_MAPPINGS - 1


@pytest.mark.parametrize("key", ["enum", "required", "parameters", "tags", "x-error-codes"])
def test_a_list_longer_than_the_bound_is_one_problem_at_the_first_item_past_it(key: str) -> None:
    """Issue 40: a 200,000-value enum held datamodel-code-generator for minutes; the reader stops at item 2,001."""
    items = "".join(f"      - v{i}\n" for i in range(MAX_SEQUENCE_ITEMS + 5_000))
    started = time.monotonic()
    [message] = problems_of(f"openapi: 3.0.3\ncomponents:\n  X:\n    {key}:\n{items}".encode())
    assert time.monotonic() - started < 10
    assert message == (
        f"spec/openapi.yml:{5 + MAX_SEQUENCE_ITEMS}: holds a list (/components/X/{key}) of more than "
        f"{MAX_SEQUENCE_ITEMS:,} items: no spec needs one this long, and generating from it would take minutes"
    )
    # Up to the bound, read: the runtime's longest list has 16 items, the bound over a hundred times that.
    within = "".join(f"  - {i}\n" for i in range(MAX_SEQUENCE_ITEMS))
    assert load_yaml(f"{key}:\n{within}".encode(), display_path="x").data == {key: list(range(MAX_SEQUENCE_ITEMS))}


def test_the_bound_counts_every_kind_of_item_and_names_a_list_in_a_list() -> None:
    inner = "".join(f"  - {{a: {i}}}\n" if i % 2 else f"  - [{i}]\n" for i in range(MAX_SEQUENCE_ITEMS + 1))
    [message] = problems_of(f"- x\n- \n{inner}".encode())
    assert message.startswith(f"spec/openapi.yml:{3 + MAX_SEQUENCE_ITEMS}: holds a list (/1) of more than ")


def test_a_long_key_is_shortened_in_the_problem() -> None:
    key = "k" * 500
    items = "".join(f"  - {i}\n" for i in range(MAX_SEQUENCE_ITEMS + 1))
    [message] = problems_of(f"{key}:\n{items}".encode())
    assert f"holds a list (/{'k' * 76}...) of more than" in message


def test_more_values_than_the_bound_is_one_problem_at_the_first_one_past_it() -> None:
    """Lists of lists keep every list short and make no mapping: the scalars are counted too."""
    row = "[" + ", ".join("1" for _ in range(1_000)) + "]"
    rows = MAX_SCALARS // 1_000 + 2
    [message] = problems_of("".join(f"- {row}\n" for _ in range(rows)).encode())
    assert message == (
        f"spec/openapi.yml:{MAX_SCALARS // 1_000 + 1}: holds more than {MAX_SCALARS:,} values (scalars, keys "
        "included): a file this large is not one we expect, and generating from it would take minutes"
    )
    # Up to the bound, read: the runtime's spec has 6,010 scalars (keys included), the bound over fifteen times that.
    within = "".join(f"k{i}: v\n" for i in range(MAX_SCALARS // 2))
    assert len(load_yaml(within.encode(), display_path="x").data) == MAX_SCALARS // 2
