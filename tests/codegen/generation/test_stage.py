"""The generate step's order of waiting: codegen's own work on the core the first generator frees."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.errors import CodegenError
from codegen.generation.generators import CLIENT, WIRE, Generators, private_scratch
from codegen.generation.stage import _settle


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    with private_scratch(tmp_path / "codegen-cache" / "scratch") as folder:
        yield folder


def test_a_failed_run_reports_both_generators_client_first_whichever_finished_first(scratch: Path) -> None:
    """The wire models' generator fails first; the client's, held on a FIFO, fails after it."""
    gate = scratch / "gate"
    os.mkfifo(gate)
    generators = Generators(scratch)
    generators.hand([(CLIENT, ["json.tool", str(gate)]), (WIRE, ["json.tool", "absent.json"])])

    def fail_the_client_once_the_wire_models_failed() -> None:
        generators._running[WIRE].waiter.join()
        with open(gate, "w") as fifo:  # the client reads it, then fails on what it holds
            fifo.write("not json")

    writer = threading.Thread(target=fail_the_client_once_the_wire_models_failed)
    writer.start()
    try:
        first = generators.first_done()
        assert first == WIRE
        with pytest.raises(CodegenError) as caught:
            _settle(generators, first, scratch / "client")
    finally:
        writer.join()
        generators.close()
    assert [p.message.split(" failed (exit ")[0] for p in caught.value.problems] == [CLIENT, WIRE]
