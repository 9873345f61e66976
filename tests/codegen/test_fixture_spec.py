"""The real-world spec in ../shared/fixtures (beside the project): the generators accept it, the contract does not."""

from __future__ import annotations

from pathlib import Path

from codegen.contract import check_contract
from codegen.generation.generators import CLIENT_CONFIG, Generators, generate, write_filtered_spec
from codegen.openapi.document import load_spec
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.conftest import ROOT
from tests.fixtures import REAL_SPEC, needs_real_spec

TAGS = ["sandboxes", "snapshots", "templates", "tags", "volumes", "secrets"]
PAUSE_POINTERS = [
    "/components/schemas/SandboxPauseRequest/properties/force",
    "/components/schemas/SandboxPauseResult/properties/forced",
    "/paths/~1sandboxes~1{sandboxID}~1pause/post/responses/200",
    "/paths/~1sandboxes~1{sandboxID}~1pause/post/responses/400",
    "/paths/~1sandboxes~1{sandboxID}~1pause/post/responses/503",
    "/components/schemas/Error/properties/error_code",
]

pytestmark = needs_real_spec


def test_generators_accept_the_filtered_real_world_spec(tmp_path: Path) -> None:
    document = load_spec(REAL_SPEC.read_bytes(), display_path="e2b-openapi.yml")
    filtered = filter_spec(document.data, tags=TAGS)
    assert filtered["paths"]
    spec_path = write_filtered_spec(filtered, tmp_path)
    generators = Generators(tmp_path)
    try:
        client, wire = generate(spec_path, generators, None, ROOT / "codegen" / CLIENT_CONFIG)
    finally:
        generators.close()
    assert (client / "__init__.py").is_file() and list((client / "api").iterdir())
    assert "class " in wire.read_text()


def test_contract_rejects_it_naming_each_missing_pause_element() -> None:
    document = load_spec(REAL_SPEC.read_bytes(), display_path="e2b-openapi.yml")
    result = check_contract(document, ROOT / "spec" / "contract.yml")
    misses = result.errors + result.warnings
    rendered = "\n".join(problem.render() for problem in misses)
    for pointer in PAUSE_POINTERS:
        assert pointer in rendered, pointer
    assert all(problem.where and problem.where.startswith("e2b-openapi.yml:") for problem in misses)
