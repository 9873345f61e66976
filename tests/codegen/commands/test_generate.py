"""`generate` on a warm machine: the generators start from the spec prepared before, the fetch has the last word."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.errors import Problem
from codegen.generation.cache import PREPARED_FORMAT
from codegen.openapi import document
from codegen.tree.read import read_or_none
from tests.codegen.conftest import Result, tree_digest, unchanged

MODEL = "packages/python-sdk/e2b/api/client/models/new_sandbox.py"
OVERLAY_TEMPLATE = "templates/overlays/error_codes.py.jinja"
PREPARED = "as prepared on this machine before"
ANEW = "preparing it anew"


def prepared_entries(cache: Path) -> list[Path]:
    return sorted((cache / "prepared").glob("*.json"))


def steps(result: Result) -> list[str]:
    """The names of the steps the run printed, in order."""
    return [line.split()[1] for line in result.err.splitlines() if line.startswith("codegen: ") and " s (" in line]


def warm_run(result: Result) -> bool:
    return PREPARED in result.err and "contract" not in steps(result) and "filter" not in steps(result)


@pytest.fixture
def warm(project: Path, run: Callable[..., Result], cache: Path) -> Path:
    """The project after a cold generation: the filtered spec it generated from is kept."""
    result = run(project, "generate")
    assert result.code == 0, result.text
    assert not warm_run(result) and {"contract", "filter"} <= set(steps(result))
    assert len(prepared_entries(cache)) == 1
    return project


def test_a_warm_run_starts_from_the_prepared_spec_and_writes_what_a_cold_run_writes(
    warm: Path, run: Callable[..., Result]
) -> None:
    clean = tree_digest(warm)
    (warm / MODEL).write_text("edited\n")
    result = run(warm, "generate")
    assert result.code == 0, result.text
    assert warm_run(result)
    assert f"  {MODEL}" in result.out
    assert tree_digest(warm) == clean
    # What it says: the fetch, then the spec as prepared, then the validator's verdict taken from before.
    said = steps(result)
    assert said.index("fetch") < said.index("spec") < said.index("validate") < said.index("stamp")


def test_no_cache_prepares_and_validates_the_spec_afresh(warm: Path, run: Callable[..., Result]) -> None:
    result = run(warm, "generate", "--no-cache")
    assert result.code == 0, result.text
    assert not warm_run(result) and {"contract", "filter"} <= set(steps(result))
    (validate,) = [line for line in result.err.splitlines() if line.startswith("codegen: validate ")]
    assert "alongside contract to format" in validate


def test_a_changed_contract_is_checked_again(warm: Path, run: Callable[..., Result]) -> None:
    contract = warm / "spec/contract.yml"
    contract.write_text(contract.read_text().replace("why:", "why: (reworded)", 1))
    result = run(warm, "generate")
    assert result.code == 0, result.text
    assert not warm_run(result) and "contract" in steps(result)


def test_a_template_edited_since_is_rendered_on_the_warm_path(warm: Path, run: Callable[..., Result]) -> None:
    template = warm / OVERLAY_TEMPLATE
    template.write_text(template.read_text() + "\n# {{ 'edited since' }}\n")
    result = run(warm, "generate")
    assert result.code == 0, result.text
    assert warm_run(result)
    assert b"# edited since" in (read_or_none(warm / "packages/python-sdk/e2b/api/error_codes.py") or b"")


def _forge(entry_path: Path, **fields: object) -> None:
    entry = json.loads(entry_path.read_bytes())
    assert entry["format"] == PREPARED_FORMAT
    entry_path.write_text(json.dumps({**entry, **fields}))


def test_an_entry_for_other_bytes_is_set_aside_and_the_run_starts_over(
    warm: Path, run: Callable[..., Result], cache: Path
) -> None:
    """The generators read what the entry said; the fetch says the spec is another: its spec is generated."""
    clean = tree_digest(warm)
    (entry_path,) = prepared_entries(cache)
    entry = json.loads(entry_path.read_bytes())
    _forge(entry_path, spec="0" * 64, filtered={**entry["filtered"], "paths": {}})
    result = run(warm, "generate")
    assert result.code == 0, result.text
    assert ANEW in result.err
    assert {"contract", "filter"} <= set(steps(result))
    assert tree_digest(warm) == clean
    assert json.loads(entry_path.read_bytes())["spec"] == entry["spec"]  # the fetched spec's, recorded again


CORRUPTIONS: dict[str, Callable[[bytes], bytes]] = {
    "garbage": lambda raw: b"\x00\xffnot json",
    "truncated": lambda raw: raw[: len(raw) // 2],
    "foreign version": lambda raw: json.dumps({**json.loads(raw), "format": "e2b-codegen-prepared/0"}).encode(),
    "another key": lambda raw: json.dumps({**json.loads(raw), "key": "0" * 64}).encode(),
    "no digest": lambda raw: json.dumps({**json.loads(raw), "spec": "not-a-sha256"}).encode(),
    "filtered not a mapping": lambda raw: json.dumps({**json.loads(raw), "filtered": []}).encode(),
    "warnings not text": lambda raw: json.dumps({**json.loads(raw), "warnings": [1]}).encode(),
    "not a mapping": lambda raw: b"[]",
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupt_entry_is_ignored(warm: Path, run: Callable[..., Result], cache: Path, corruption: str) -> None:
    (entry_path,) = prepared_entries(cache)
    entry_path.write_bytes(CORRUPTIONS[corruption](entry_path.read_bytes()))
    with unchanged(warm):
        result = run(warm, "generate")
    assert result.code == 0, result.text
    assert not warm_run(result) and ANEW not in result.err


def test_a_fetch_that_fails_after_the_generators_started_is_the_runs_failure(
    warm: Path, run: Callable[..., Result], tmp_path: Path
) -> None:
    (warm / MODEL).write_text("edited\n")
    with unchanged(warm):
        result = run(warm, "generate", E2B_RUNTIME_REPO=str(tmp_path / "nowhere"))
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    assert len(errors) == 1 and "cannot be reached" in errors[0], result.err
    assert PREPARED not in result.err and "stamp" not in steps(result)


def test_a_validator_changed_since_gives_its_verdict_on_the_warm_path(
    warm: Path, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for verdict in (cache / "validations").glob("*.json"):
        verdict.unlink()
    monkeypatch.setattr(document, "validation_problems", lambda spec: [Problem("refused by the new validator")])
    (warm / MODEL).write_text("edited\n")
    with unchanged(warm):
        refused = run(warm, "generate")
    assert refused.code == 2, refused.text
    assert "codegen: error: refused by the new validator" in refused.err
    monkeypatch.undo()
    passed = run(warm, "generate")
    assert passed.code == 0 and warm_run(passed), passed.text
    (validate,) = [line for line in passed.err.splitlines() if line.startswith("codegen: validate ")]
    assert "after the fetch" in validate
