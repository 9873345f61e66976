"""The generate step's order of waiting: codegen's own work on the core the first generator frees.

Which generator finishes first varies from run to run; what a failed run reports must not.  The
generators here run stand-in jobs (`json.tool` on a FIFO the test writes when it chooses), so the
order of events is the test's, not the machine's.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from codegen.config import load_source
from codegen.generation import stage
from codegen.generation.generators import CLIENT, WIRE, Generators, private_scratch
from codegen.generation.inputs import GenerationInputs, read_inputs
from codegen.messages import Messages
from codegen.openapi.document import read_spec
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.conftest import ROOT
from toolkit.errors import ToolError
from toolkit.paths import Project


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    with private_scratch(tmp_path / "codegen-cache" / "scratch") as folder:
        yield folder


def _generate_tree(
    scratch: Path, monkeypatch: pytest.MonkeyPatch, *, wire_job: list[str], inputs: GenerationInputs | None = None
) -> Callable[[], list[str]]:
    """generate_tree with the client held on a FIFO until the wire models' job has ended, then failing.

    Returns a function running it, which gives the problems' messages.
    """
    gate = scratch / "gate"
    os.mkfifo(gate)
    generators = Generators(scratch)
    handed = threading.Event()

    def start(
        spec_path: Path,
        generators: Generators,
        templates: Path | None,
        config: Path,
        protos: Mapping[str, bytes] | None = None,
        envd_http: Path | None = None,
    ) -> tuple[Path, Path]:
        try:
            generators.start_jobs([(CLIENT, ["json.tool", str(gate)]), (WIRE, wire_job)])
        finally:
            handed.set()  # a failure to start is the test's failure, not a wait without end
        return scratch / "client", scratch / "wire_models.py"

    def fail_the_client_once_the_wire_models_are_done() -> None:
        handed.wait()
        generators._running[WIRE].waiter.join()
        with open(gate, "w") as fifo:  # the client reads it, then fails on what it holds
            fifo.write("not json")

    monkeypatch.setattr(stage, "start_generating", start)
    project = Project(ROOT)
    document = read_spec(project.spec.read_bytes())
    source = load_source(project)
    filtered = filter_spec(document.data, tags=source.sdk_tags, operations=load_operation_map(project.operations))

    def run() -> list[str]:
        writer = threading.Thread(target=fail_the_client_once_the_wire_models_are_done)
        writer.start()
        try:
            with pytest.raises(ToolError) as caught:
                stage.generate_tree(
                    generators, inputs or read_inputs(project), source, filtered, Messages(err=lambda _: None)
                )
        finally:
            writer.join()
            generators.close()
        return [problem.render() for problem in caught.value.problems]

    return run


def test_both_generators_failing_are_reported_client_first_though_the_wire_models_failed_first(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _generate_tree(scratch, monkeypatch, wire_job=["json.tool", "absent.json"])
    assert [message.split(" failed (exit ")[0] for message in run()] == [CLIENT, WIRE]


def test_an_overlay_that_fails_is_reported_after_the_generators_verdicts(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The overlays render once the wire models are done; their failure waits for the client's verdict."""
    inputs = read_inputs(Project(ROOT))
    broken = {**inputs.templates, "overlays/api_init.py.jinja": b"{{ no_such_name.attribute }}\n"}
    (scratch / "small.json").write_text("{}")
    run = _generate_tree(
        scratch, monkeypatch, wire_job=["json.tool", "small.json"], inputs=dataclasses.replace(inputs, templates=broken)
    )
    messages = run()
    assert len(messages) == 2, messages
    assert messages[0].startswith(f"{CLIENT} failed (exit ")
    assert "api_init.py.jinja" in messages[1] and "cannot render" in messages[1]
