"""Generator, formatter and syntax failures are one or two lines: the tool, what it said, where."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.errors import CodegenError
from codegen.generators import format_python, tool_failure

CLIENT_WARNING = """Generating /tmp/x/out
Warning(s) encountered while generating. Client was generated, but some pieces may be missing
WARNING parsing GET /sandboxes within sandboxes.

Cannot parse parameter <openapi_python_client.schema.untrusted_string.UntrustedString object at 0x7f4c> (bad)

{
  "name": "x"
}

If you believe this was a mistake or this tool is missing a feature you need, please open an issue at https://x
"""


def test_a_client_warning_names_the_operation_and_never_an_object_repr() -> None:
    problem = tool_failure("openapi-python-client", 1, CLIENT_WARNING)
    assert problem.where == "spec/openapi.yml (GET /sandboxes)"
    assert problem.message == "openapi-python-client failed (exit 1): Cannot parse parameter (bad)"


def test_a_traceback_is_its_last_line() -> None:
    output = "Traceback (most recent call last):\n  File \"m.py\", line 3, in f\n    g()\nKeyError: 'items'\n"
    assert tool_failure("datamodel-code-generator", 1, output).message.endswith("KeyError: 'items'")


@pytest.mark.parametrize("output", ["", "\n  \n", "{\n}\n"])
def test_silence_is_said_as_such(output: str) -> None:
    assert tool_failure("ruff", 2, output).message == "ruff failed (exit 2): exited 2 without saying why"


def test_generated_code_that_does_not_parse_is_named_with_its_line(tmp_path: Path) -> None:
    module = tmp_path / "packages" / "m.py"
    module.parent.mkdir()
    module.write_text('x = 1\ny = "a"""\nimport os"\n')
    with pytest.raises(CodegenError) as caught:
        format_python(tmp_path)
    (problem,) = caught.value.problems
    assert problem.where == "packages/m.py:3"
    assert problem.message.startswith("generated code does not parse: ")
    assert len(problem.render().splitlines()) == 2  # the problem, then the remedy


def test_ruff_formats_what_parses(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x=[1,\n2]\n")
    format_python(tmp_path)
    assert (tmp_path / "m.py").read_text() == "x = [1, 2]\n"
