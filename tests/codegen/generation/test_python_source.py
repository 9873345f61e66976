"""Spec text can only become a Python literal: the escaping filter, the refusals, every template."""

from __future__ import annotations

import ast
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.generation.overlays import render_overlays
from codegen.generation.python_source import UnescapedText, identifier_filter, py_literal, python_source_environment
from codegen.openapi.document import load_spec
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.conftest import ROOT, Result, Upstream, replace_once, unchanged
from tests.fuzz_budget import examples
from toolkit.errors import ToolError

OVERLAYS = ROOT / "templates" / "overlays"
PAYLOAD = '"""\\{{ 7*7 }}\n'
ISSUE_PAYLOAD = 'Too many."""\nimport os; os.system("touch {marker}")\n"""'


@settings(max_examples=examples(300), deadline=None)
@given(st.text(), st.booleans())
def test_py_literal_is_a_literal_of_exactly_the_text(text: str, docstring: bool) -> None:
    source = f"x = {py_literal(text, docstring=docstring)}\n"
    module = ast.parse(source)
    assert len(module.body) == 1 and isinstance(module.body[0], ast.Assign)
    assert ast.literal_eval(module.body[0].value) == text


@pytest.mark.parametrize(
    "value",
    [None, True, 3, -2.5, "a\\b", ['"', 1], {"k\n": [None, "'''"]}, "\u2028\x00\r\t\U0001f600"],
)
def test_py_literal_of_plain_data(value: object) -> None:
    assert ast.literal_eval(py_literal(value)) == value


def test_py_literal_refuses_what_has_no_literal() -> None:
    with pytest.raises(UnescapedText):
        py_literal(float("nan"))
    with pytest.raises(UnescapedText):
        py_literal(object())


def _render(tmp_path: Path, template: str, **context: Any) -> str:
    (tmp_path / "t.jinja").write_text(template)
    env = python_source_environment(tmp_path, {"name": identifier_filter(lambda s: s)})
    return env.get_template("t.jinja").render(context)


@pytest.mark.parametrize(
    "template",
    [
        "{{ text }}",
        "{{ text | upper }}",
        "{{ 'x' ~ text }}",
        "{{ '%s' % text }}",
        "{{ text | tojson }}",
        "{{ text | safe }}",
        "{{ text | replace('a', 'b') }}",
        "{% set block %}{{ text | py }}{% endset %}{{ block | trim }}",
        "{% for part in [text] %}{{ part }}{% endfor %}",
        "{{ none }}",
        "{{ 1.5 }}",
    ],
)
def test_anything_not_escaped_is_refused(tmp_path: Path, template: str) -> None:
    with pytest.raises(UnescapedText, match=re.escape("pass spec text through `| py`")):
        _render(tmp_path, template, text="abc")


def test_the_templates_own_text_and_escaped_spec_text_render(tmp_path: Path) -> None:
    out = _render(
        tmp_path,
        '{% set S = "Async" if flag else "Sync" %}{% set block %}doc "here"\n{% endset %}'
        "class {{ S }}: {{ 'x' }} {{ 3 }}\n{{ block }}{{ text | py }} {{ text | name }}",
        flag=True,
        text="abc",
    )
    assert out == 'class Async: x 3\ndoc "here"\n"abc" abc'


@pytest.mark.parametrize("text", ["1x = os.system('id')", "if", "", "a-b"])
def test_a_name_filter_refuses_what_is_not_a_name(tmp_path: Path, text: str) -> None:
    with pytest.raises(UnescapedText, match="does not make a Python name"):
        _render(tmp_path, "{{ text | name }}", text=text)


# --- every template -------------------------------------------------------------


def _sdk_spec() -> dict[str, Any]:
    document = load_spec((ROOT / "spec" / "openapi.yml").read_bytes())
    # As the pipeline filters it: the SDK's tags, its operations named by the operation map.
    operations = load_operation_map(ROOT / "spec" / "operations.yml")
    return filter_spec(document.data, tags=("sandboxes", "snapshots", "templates"), operations=operations)


def _hostile(value: Any, key: str | None = None) -> Any:
    """Every string value gains the payload; operationIds stay (templates name operations by id),
    and so do `$ref`s (structure, not text: validation refuses one that resolves nowhere) and an
    operation's tags (its folder in the generated client: a tag that is not a plain word is refused,
    test_overlays.py)."""
    if key == "tags" and isinstance(value, list) and all(isinstance(tag, str) for tag in value):
        return value
    if isinstance(value, dict):
        return {k: _hostile(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_hostile(v) for v in value]
    if isinstance(value, str) and key not in ("operationId", "$ref"):
        return value + PAYLOAD
    return value


def _shape(source: str) -> str:
    """The module's syntax tree with every string's content blanked out."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def _strings(source: str) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_every_template_is_listed_in_the_overlay_index() -> None:
    listed = {entry["template"] for entry in tomllib.loads((OVERLAYS / "overlays.toml").read_text())["overlay"]}
    assert listed == {p.name for p in OVERLAYS.glob("*.jinja")}


def test_hostile_spec_text_changes_nothing_but_string_contents_in_any_template() -> None:
    spec = _sdk_spec()
    benign = render_overlays(OVERLAYS, spec)
    hostile = render_overlays(OVERLAYS, _hostile(spec))
    assert benign.keys() == hostile.keys() and len(benign) == 4
    for path, data in hostile.items():
        text = data.decode()
        assert _shape(text) == _shape(benign[path].decode()), path
        assert "49" not in text, path
    descriptions = _strings(hostile["packages/python-sdk/e2b/api/error_codes.py"].decode())
    assert "Too many requests from this team; back off and retry." + PAYLOAD.strip() in descriptions


def _with_error_code(code: str) -> dict[str, Any]:
    spec = _sdk_spec()
    spec["components"]["schemas"]["Error"]["properties"]["error_code"]["x-error-codes"][code] = "hostile"
    return spec


@pytest.mark.parametrize("code", ["1rate", "9"])
def test_an_error_code_that_makes_no_constant_name_is_refused_with_the_template_line(code: str) -> None:
    with pytest.raises(ToolError) as caught:
        render_overlays(OVERLAYS, _with_error_code(code))
    assert "templates/overlays/error_codes.py.jinja:" in str(caught.value)
    assert "does not make a Python name" in str(caught.value)


@pytest.mark.parametrize("code", ["rate limited\nimport os", 'x"""; import os; """'])
def test_an_error_code_with_code_in_it_is_only_ever_a_string(code: str) -> None:
    source = render_overlays(OVERLAYS, _with_error_code(code))["packages/python-sdk/e2b/api/error_codes.py"]
    tree = ast.parse(source)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import)]
    assert code in _strings(source.decode())


def test_the_issue_payload_generates_a_docstring_and_runs_nothing(
    project: Path, upstream: Upstream, run: Callable[..., Result], tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    payload = ISSUE_PAYLOAD.format(marker=marker)
    upstream.commit_edit(
        lambda text: replace_once(
            text,
            "rate_limited: Too many requests from this team; back off and retry.",
            f"rate_limited: {json.dumps(payload)}",
        )
    )
    result = run(project, "generate", E2B_RUNTIME_REF=upstream.head())
    assert result.code == 0, result.text
    source = (project / "packages/python-sdk/e2b/api/error_codes.py").read_text()
    tree = ast.parse(source)
    assert [type(n).__name__ for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)] == ["ImportFrom"]
    assert payload in _strings(source)
    exec(compile(tree, "error_codes.py", "exec"), {})
    assert not marker.exists()


# --- templates run no code of their own (issue 31, point 2) ---------------------------------------------

SANDBOX_ESCAPES = [
    '{{ cycler.__init__.__globals__.os.system("touch MARKER") }}',
    '{{ joiner.__init__.__globals__.os.popen("touch MARKER").read() }}',
    '{{ lipsum.__globals__["os"].system("touch MARKER") }}',
    '{{ namespace.__init__.__globals__["os"].system("touch MARKER") }}',
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ helper.__globals__ }}",
    '{{ (helper | attr("__globals__")) }}',
    "{% set ops = ['a'] %}{{ ops.append('b') }}",
    "{{ data.update({'a': 1}) }}",
    '{{ "{0.__class__}".format(1) }}',
]


@pytest.mark.parametrize("payload", SANDBOX_ESCAPES)
def test_a_template_cannot_reach_past_what_it_is_given(tmp_path: Path, payload: str) -> None:
    """jinja's immutable sandbox: no `_` attribute, no mutation, whatever the template writes."""
    from jinja2.exceptions import SecurityError

    marker = tmp_path / "pwned"
    with pytest.raises(SecurityError):
        _render(tmp_path, payload.replace("MARKER", str(marker)), helper=lambda: None, data={"a": 0})
    assert not marker.exists()


def test_the_sandboxes_refusal_names_the_template_line(tmp_path: Path) -> None:
    folder = tmp_path / "overlays"
    folder.mkdir()
    (folder / "t.py.jinja").write_text('X = 1\n{{ cycler.__init__.__globals__.os.system("true") }}\n')
    (folder / "overlays.toml").write_text(
        '[[overlay]]\ntemplate = "t.py.jinja"\noutput = "packages/python-sdk/e2b/api/t.py"\n'
    )
    with pytest.raises(ToolError) as caught:
        render_overlays(folder, {"openapi": "3.0.3", "paths": {}})
    [problem] = caught.value.problems
    assert problem.where == "templates/overlays/t.py.jinja:2"
    assert problem.message == "cannot render: access to attribute '__init__' of 'type' object is unsafe."


@pytest.mark.parametrize("verb", [("generate",), ("check", "--no-cache")])
def test_the_issue_template_payload_is_a_clear_error_and_runs_nothing(
    project: Path, run: Callable[..., Result], tmp_path: Path, verb: tuple[str, ...]
) -> None:
    marker = tmp_path / "x"
    template = project / "templates" / "overlays" / "error_codes.py.jinja"
    text = template.read_text()
    template.write_text(text + f'{{{{ cycler.__init__.__globals__.os.system("id > {marker}") }}}}\n')
    line = text.count("\n") + 1
    with unchanged(project):
        result = run(project, *verb)
    assert result.code == 2, result.text
    assert (
        f"codegen: error: templates/overlays/error_codes.py.jinja:{line}: cannot render: "
        "access to attribute '__init__' of 'type' object is unsafe." in result.err
    ), result.text
    assert not marker.exists()
