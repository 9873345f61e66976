"""The no-change check: a hit answers "clean" without generating; every drift still takes the full run."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.config import load_source
from codegen.generation.cache import generated_from, generation_records
from codegen.generation.inputs import CLIENT_TEMPLATES, CODE_FOLDERS, CODE_ROOT, read_inputs
from tests.codegen.conftest import OFFLINE, Result, add_optional_property, configure_unreachable_upstream, unchanged
from toolkit.errors import ToolError
from toolkit.paths import SPEC, TEMPLATES, Project
from toolkit.records import Records
from toolkit.transaction import JOURNAL

MODEL = "packages/python-sdk/e2b/api/client/models/new_sandbox.py"
CLIENT = "packages/python-sdk/e2b/api/client"
HIT = "codegen: cache "


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "generations").glob("*.json"))


@pytest.fixture
def warm(project: Path, run: Callable[..., Result], cache: Path) -> Path:
    """The project after a real generation on this machine: one recorded entry."""
    result = run(project, "generate")
    assert result.code == 0, result.text
    assert len(entries(cache)) == 1
    return project


def hit(result: Result) -> bool:
    line = [x for x in result.err.splitlines() if x.startswith(HIT)]
    assert len(line) == 1, result.err
    return "hit:" in line[0]


def full_run(result: Result) -> bool:
    return any(line.startswith("codegen: stamp ") for line in result.err.splitlines())


def test_a_check_after_a_generation_is_clean_without_generating(warm: Path, run: Callable[..., Result]) -> None:
    with unchanged(warm):
        result = run(warm, "check")
    assert result.code == 0, result.text
    assert hit(result) and not full_run(result)
    assert result.out.startswith("codegen: clean: ")


def test_no_cache_forces_the_full_run(warm: Path, run: Callable[..., Result]) -> None:
    result = run(warm, "check", "--no-cache")
    assert result.code == 0, result.text
    assert full_run(result) and HIT not in result.err


def test_without_an_entry_the_check_runs_in_full_and_records_one(
    project: Path, run: Callable[..., Result], cache: Path
) -> None:
    first = run(project, "check")
    assert first.code == 0 and full_run(first) and not hit(first)
    assert len(entries(cache)) == 1
    assert hit(run(project, "check"))


def test_a_failed_generation_records_nothing(project: Path, run: Callable[..., Result], cache: Path) -> None:
    contract = project / "spec/contract.yml"
    contract.write_text(contract.read_text() + "\n- pointer: /components/schemas/Nope\n  exists: true\n  why: test\n")
    assert run(project, "check").code == 2
    assert entries(cache) == []


def _interrupted_write(project: Path) -> None:
    api = project / "packages/python-sdk/e2b/api"
    shutil.copytree(api, api.with_name(".api.codegen-old-0123abcd"))
    (api / "error_codes.py").write_text("half-new\n")
    journal = {
        "state": "swapping",
        "tag": "0123abcd",
        "written": "2026-11-30 12:00:00Z",
        "swaps": [{"target": "packages/python-sdk/e2b/api", "existed": True}],
    }
    (project / JOURNAL).write_text(json.dumps(journal))


def _stale(project: Path) -> None:
    (project / f"{CLIENT}/models/old_thing.py").write_text("class OldThing: ...\n")
    manifest = project / "spec/generated-files.json"
    data = json.loads(manifest.read_text())
    data["files"][f"{CLIENT}/models/old_thing.py"] = "0" * 64
    manifest.write_text(json.dumps(data, indent=2) + "\n")


def _symlink(project: Path) -> None:
    (project / "spec/openapi.lock.json").unlink()
    (project / "spec/openapi.lock.json").symlink_to(project / "README.md")


DRIFTS: dict[str, Callable[[Path], object]] = {
    "changed": lambda p: (p / MODEL).write_text("edited\n"),
    "missing": lambda p: (p / MODEL).unlink(),
    "unexpected": lambda p: (p / f"{CLIENT}/extra.py").write_text("x = 1\n"),
    "stale": _stale,
    "symlink": _symlink,
    "leftover": lambda p: (p / "spec/.openapi.lock.json.codegen-new-89abcdef").write_text("{}\n"),
    "interrupted write": _interrupted_write,
    "hand-edited spec": lambda p: (p / "spec/openapi.yml").write_text(
        add_optional_property((p / "spec/openapi.yml").read_text())
    ),
}


@pytest.mark.parametrize("kind", list(DRIFTS))
def test_every_drift_kind_is_caught_with_a_warm_cache(warm: Path, run: Callable[..., Result], kind: str) -> None:
    DRIFTS[kind](warm)
    cached = run(warm, "check")
    assert cached.code == 1, cached.text
    assert f"  {kind:16} " in cached.out
    assert "hit:" not in cached.err
    if kind != "interrupted write":  # the first check settled it: a second sees another tree
        uncached = run(warm, "check", "--no-cache")
        assert (uncached.code, uncached.out) == (cached.code, cached.out)


def test_a_hand_edited_spec_offline_is_drift_with_a_warm_cache(project: Path, run: Callable[..., Result]) -> None:
    configure_unreachable_upstream(project)
    assert run(project, "generate", **OFFLINE).code == 0
    assert hit(run(project, "check", **OFFLINE))
    DRIFTS["hand-edited spec"](project)
    result = run(project, "check", **OFFLINE)
    assert result.code == 1, result.text  # against the blob the base's lock names, which git holds
    assert "  hand-edited spec spec/openapi.yml" in result.out and "hit:" not in result.err
    assert "clean" not in result.text


def test_a_change_to_the_pin_offline_is_refused_even_when_its_generation_was_recorded(
    project: Path, run: Callable[..., Result]
) -> None:
    """The --base trust rule holds on a hit: a forged lock's own generation never vouches for it."""
    from tests.codegen.upstream.test_base_revision import forge_on_a_branch

    configure_unreachable_upstream(project)
    forge_on_a_branch(project, run)  # generates offline: the forged inputs are recorded
    result = run(project, "check", "--base", "main", **OFFLINE)
    assert result.code == 2, result.text
    assert "this change moves or touches the pin" in result.err and HIT not in result.err


# --- what the key covers -----------------------------------------------------------


def _key(project: Path, code_root: Path | None = None) -> str:
    """Where the generation of `project` as it stands would be remembered (its code read from `code_root`)."""
    p = Project(project)
    spec = p.spec.read_bytes()
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("E2B_RUNTIME_REF", raising=False)
        source = load_source(p)
    inputs = read_inputs(p) if code_root is None else read_inputs(p, code_root=code_root)
    return generation_records(p, inputs).key(generated_from(source, spec))


CLIENT_TEMPLATE_FOLDER = f"{TEMPLATES}/{CLIENT_TEMPLATES}"

EDITS: dict[str, Callable[[Path], object]] = {
    "template": lambda p: (p / "templates/overlays/error_codes.py.jinja").write_text(
        (p / "templates/overlays/error_codes.py.jinja").read_text() + "\n"
    ),
    "overlay index": lambda p: (p / "templates/overlays/overlays.toml").write_text(
        (p / "templates/overlays/overlays.toml").read_text() + "\n"
    ),
    "contract line": lambda p: (p / "spec/contract.yml").write_text(
        (p / "spec/contract.yml").read_text().replace("why:", "why: (reworded)", 1)
    ),
    "operation map": lambda p: (p / "spec/operations.yml").write_text((p / "spec/operations.yml").read_text() + "\n"),
    "lock pin": lambda p: (p / "requirements/codegen.txt").write_text(
        (p / "requirements/codegen.txt").read_text().replace("==", "===", 1)
    ),
    "tool.codegen": lambda p: (p / "pyproject.toml").write_text(
        (p / "pyproject.toml")
        .read_text()
        .replace(
            'sdk-tags = ["sandboxes", "snapshots", "templates"]',
            'sdk-tags = ["sandboxes", "snapshots", "templates", "x"]',
        )
    ),
    "spec": lambda p: (p / "spec/openapi.yml").write_text((p / "spec/openapi.yml").read_text() + "\n"),
}


@pytest.mark.parametrize("what", list(EDITS))
def test_a_changed_input_changes_the_key(project: Path, what: str) -> None:
    before = _key(project)
    EDITS[what](project)
    assert _key(project) != before


def _code_copy(tmp_path: Path) -> Path:
    """codegen/, toolkit/ and the client templates as the running process reads them, under `tmp_path`."""
    for folder in (*CODE_FOLDERS, CLIENT_TEMPLATE_FOLDER):
        shutil.copytree(CODE_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.mark.parametrize("edited", ["codegen/commands/check.py", "toolkit/paths.py"])
def test_a_changed_code_file_changes_the_key(project: Path, tmp_path: Path, edited: str) -> None:
    copy = _code_copy(tmp_path / "code")
    before = _key(project, copy)
    assert before == _key(project)  # the copy is the running source
    (copy / edited).write_text((copy / edited).read_text() + "\n# changed\n")
    assert _key(project, copy) != before


def test_the_client_templates_in_the_key_are_the_running_checkout_s(project: Path, tmp_path: Path) -> None:
    """The run renders the checkout's templates/client/, never the tree's (`--root`): the key says the same."""
    copy = _code_copy(tmp_path / "code")
    before = _key(project, copy)
    tree_template = project / CLIENT_TEMPLATE_FOLDER / "endpoint_macros.py.jinja"
    tree_template.write_text(tree_template.read_text() + "{# the tree's #}\n")
    assert _key(project, copy) == before
    own = copy / CLIENT_TEMPLATE_FOLDER / "endpoint_macros.py.jinja"
    own.write_text(own.read_text() + "{# the checkout's #}\n")
    assert _key(project, copy) != before


def test_a_changed_lock_pin_misses_the_cache_and_runs_in_full(warm: Path, run: Callable[..., Result]) -> None:
    EDITS["lock pin"](warm)
    result = run(warm, "check")
    assert result.code == 0 and full_run(result) and not hit(result), result.text


# --- entries it ignores ---------------------------------------------------------------


def _with(entry: dict[str, Any], **value: object) -> bytes:
    return json.dumps({**entry, "value": {**entry["value"], **value}}).encode()


CORRUPTIONS: dict[str, Callable[[dict[str, Any], bytes], bytes]] = {
    "garbage": lambda entry, raw: b"\x00\xffnot json",
    "truncated": lambda entry, raw: raw[: len(raw) // 2],
    "another key": lambda entry, raw: json.dumps({**entry, "key": "0" * 64}).encode(),
    "bad digest": lambda entry, raw: _with(entry, files=dict.fromkeys(entry["value"]["files"], "not-a-sha256")),
    "no spec": lambda entry, raw: _with(entry, files={k: v for k, v in entry["value"]["files"].items() if k != SPEC}),
    "warnings not text": lambda entry, raw: _with(entry, warnings=[1]),
    "not a mapping": lambda entry, raw: b"[]",
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupt_entry_is_ignored_and_the_full_run_happens(
    warm: Path, run: Callable[..., Result], cache: Path, corruption: str
) -> None:
    (path,) = entries(cache)
    raw = path.read_bytes()
    entry = json.loads(raw)
    assert SPEC in entry["value"]["files"]
    path.write_bytes(CORRUPTIONS[corruption](entry, raw))
    result = run(warm, "check")
    assert result.code == 0, result.text
    assert full_run(result) and not hit(result)
    assert "(no generation of these inputs on this machine: the full run follows)" in result.err


# --- the key is the bytes the run used (issue 20, item 5) ----------------------------------------------


def test_an_edit_saved_while_codegen_runs_is_not_vouched_for(
    project: Path, env: dict[str, str | None], monkeypatch: pytest.MonkeyPatch, run: Callable[..., Result]
) -> None:
    """The seam is the step line: right after `overlays`, the template gains a line, as an editor would save it."""
    from codegen.commands.generate import run_generate
    from codegen.messages import Messages

    for key, value in env.items():
        monkeypatch.setenv(key, value or "")
    template = project / "templates/overlays/error_codes.py.jinja"
    said: list[str] = []

    def edit_after_overlays(line: str) -> None:
        said.append(line)
        if line.startswith("codegen: overlays "):
            template.write_text(template.read_text() + "MARKER = 1\n")

    assert run_generate(Project(project), Messages(err=edit_after_overlays)) == 0
    assert any(line.startswith("codegen: overlays ") for line in said)
    assert "MARKER" not in (project / "packages/python-sdk/e2b/api/error_codes.py").read_text()
    cached = run(project, "check")
    assert not hit(cached) and full_run(cached)
    assert cached.code == 1, cached.text
    assert "packages/python-sdk/e2b/api/error_codes.py" in cached.out
    uncached = run(project, "check", "--no-cache")
    assert (uncached.code, uncached.out) == (cached.code, cached.out)


def test_the_templates_are_read_once_and_rendered_from_those_bytes(project: Path) -> None:
    inputs = read_inputs(Project(project))
    template = project / "templates/overlays/error_codes.py.jinja"
    template.write_text("edited after the read\n")
    written = inputs.write_templates(project.parent / "scratch-templates")
    assert (written / "overlays/error_codes.py.jinja").read_bytes() == inputs.templates["overlays/error_codes.py.jinja"]
    assert b"edited after the read" not in inputs.templates["overlays/error_codes.py.jinja"]


def test_codegen_source_changed_after_import_is_not_recorded(
    project: Path, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python read codegen's modules at import: one modified since may not be the code that ran."""
    import codegen

    monkeypatch.setattr(codegen, "LOADED_NS", 0)  # every source file is newer than that
    result = run(project, "generate")
    assert result.code == 0, result.text
    assert "codegen: not recorded for the check's cache: codegen/" in result.err
    assert entries(cache) == []


def test_read_inputs_names_the_codegen_files_modified_since_import(tmp_path: Path, project: Path) -> None:
    import time

    copy = _code_copy(tmp_path / "code")
    imported = time.time_ns()
    for path in copy.rglob("*.py"):
        os.utime(path, ns=(imported - 10**9, imported - 10**9))
    for edited in ("codegen/generation/stage.py", "toolkit/read.py"):
        os.utime(copy / edited, ns=(imported + 10**9, imported + 10**9))
    inputs = read_inputs(Project(project), code_root=copy, imported_ns=imported)
    assert inputs.code_changed_since_import == ("codegen/generation/stage.py", "toolkit/read.py")


# --- the cache folder is never inside the project -----------------------------------------------------


@pytest.mark.parametrize("verb", [("generate",), ("check",), ("check", "--no-cache")])
@pytest.mark.parametrize("where", [".codegen-cache", "spec/cache", "."])
def test_a_cache_folder_inside_the_project_is_refused(
    project: Path, run: Callable[..., Result], verb: tuple[str, ...], where: str
) -> None:
    inside = project / where
    with unchanged(project):
        result = run(project, *verb, E2B_CODEGEN_CACHE=str(inside))
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    assert errors == [
        f"codegen: error: the codegen cache {inside.resolve()} is inside the project, where a commit could fill "
        "it: point E2B_CODEGEN_CACHE at a folder outside the repository, or unset it"
    ]
    assert not full_run(result) and HIT not in result.err


def test_a_relative_cache_folder_that_resolves_inside_the_project_is_refused(
    project: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project / "spec")
    result = run(project, "check", E2B_CODEGEN_CACHE="../.cache")
    assert result.code == 2 and "is inside the project" in result.err, result.text


@pytest.mark.parametrize("verb", [("generate",), ("check", "--no-cache")])
def test_a_cache_folder_whose_path_holds_a_path_separator_is_refused(
    project: Path, run: Callable[..., Result], verb: tuple[str, ...], tmp_path: Path
) -> None:
    """The generators' PATH starts inside it: `a:b` would put `a` on it, where anything may be called ruff."""
    split = tmp_path / "shared:cache"
    with unchanged(project):
        result = run(project, *verb, E2B_CODEGEN_CACHE=str(split))
    assert result.code == 2, result.text
    assert f"the codegen cache {split} has ':' in its path" in result.err and "E2B_CODEGEN_CACHE" in result.err
    assert not (tmp_path / "shared").exists()


# --- the validator's verdict ---------------------------------------------------------------------------

VALIDATED = "alongside contract to format"
PASSED_BEFORE = "this spec passed it before on this machine"


def _validate_line(result: Result) -> str:
    (line,) = [x for x in result.err.splitlines() if x.startswith("codegen: validate ")]
    return line


def test_a_spec_the_validator_passed_is_not_validated_again(
    project: Path, run: Callable[..., Result], cache: Path
) -> None:
    first = run(project, "generate")
    assert first.code == 0 and VALIDATED in _validate_line(first), first.text
    assert len(list((cache / "validations").glob("*.json"))) == 1
    second = run(project, "generate")
    assert second.code == 0 and PASSED_BEFORE in _validate_line(second), second.text


def test_no_cache_and_a_fresh_machine_validate(project: Path, run: Callable[..., Result], tmp_path: Path) -> None:
    assert run(project, "generate").code == 0
    uncached = run(project, "check", "--no-cache")
    assert uncached.code == 0 and VALIDATED in _validate_line(uncached), uncached.text
    fresh = run(project, "check", E2B_CODEGEN_CACHE=str(tmp_path / "fresh"))
    assert fresh.code == 0 and VALIDATED in _validate_line(fresh), fresh.text


def test_a_verdict_is_never_trusted_across_a_validator_version(
    project: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    from codegen.generation import cache as generation_cache

    assert run(project, "generate").code == 0
    real = generation_cache._installed
    monkeypatch.setattr(
        generation_cache, "_installed", lambda name: "0.0.1" if name == "openapi-spec-validator" else real(name)
    )
    other = run(project, "generate")
    assert other.code == 0 and VALIDATED in _validate_line(other), other.text


FORGED_VERDICTS: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "another key": lambda entry: json.dumps({**entry, "key": "0" * 64}).encode(),
    "not a pass": lambda entry: json.dumps({**entry, "value": "true"}).encode(),
    "garbage": lambda entry: b"garbage",
    "not a mapping": lambda entry: b"[]",
}


@pytest.mark.parametrize("forged", list(FORGED_VERDICTS))
def test_a_foreign_or_corrupt_verdict_is_ignored(
    project: Path, run: Callable[..., Result], cache: Path, forged: str
) -> None:
    assert run(project, "generate").code == 0
    (entry,) = (cache / "validations").glob("*.json")
    entry.write_bytes(FORGED_VERDICTS[forged](json.loads(entry.read_bytes())))
    result = run(project, "generate")
    assert result.code == 0 and VALIDATED in _validate_line(result), result.text


def test_codegen_source_changed_while_the_run_ran_is_not_recorded(
    project: Path, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some of codegen is imported after the inputs are read (the spec's steps): an edit then is caught too."""
    from codegen import pipeline
    from codegen.generation import inputs
    from codegen.upstream import fetch

    edited: list[str] = []
    real_fetch = fetch.fetch_spec

    def fetch_then_edit(*args: Any, **kwargs: Any) -> fetch.FetchedSpec:
        fetched = real_fetch(*args, **kwargs)
        edited.append("codegen/openapi/sdk_filter.py")  # saved now, after the inputs were read
        return fetched

    monkeypatch.setattr(pipeline, "fetch_spec", fetch_then_edit)
    real_modified = inputs._modified_ns
    monkeypatch.setattr(
        inputs,
        "_modified_ns",
        lambda path: 2**62 if path.as_posix().endswith(tuple(edited) or "\0") else real_modified(path),
    )
    result = run(project, "generate")
    assert result.code == 0, result.text
    assert "not recorded for the check's cache: codegen/openapi/sdk_filter.py changed while this run ran" in result.err
    assert entries(cache) == []


@pytest.mark.usefixtures("warm_cache")  # its bump type-checks the hand-written packages
def test_after_a_bump_generate_takes_the_validators_verdict_from_the_bump(
    project: Path, upstream: Any, run: Callable[..., Result]
) -> None:
    """bump validates the spec itself (load_spec) and hands it in: its pass is recorded as the pipeline's is."""
    commit = upstream.commit_edit(lambda text: text + "# a comment: no API change\n")
    bumped = run(project, "bump", commit)
    assert bumped.code == 0, bumped.text
    result = run(project, "generate")
    assert result.code == 0 and PASSED_BEFORE in _validate_line(result), result.text


# --- remembered answers (Records) -------------------------------------------------------


@pytest.fixture
def records_of(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Records]:
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(cache))
    return lambda kind="demo", **depends_on: Records(Project(project), kind, depends_on)


def test_an_answer_is_recalled_for_the_same_input_and_nothing_else(records_of: Callable[..., Records]) -> None:
    records = records_of(code=b"v1")
    assert records.recall(b"input") is None
    records.remember(b"input", {"names": ["A", "B"]})
    assert records.recall(b"input") == {"names": ["A", "B"]}
    assert records.recall(b"other input") is None
    assert records_of(code=b"v2").recall(b"input") is None  # what every answer depends on changed
    assert records_of("another kind", code=b"v1").recall(b"input") is None


def test_a_corrupt_or_foreign_answer_is_none(records_of: Callable[..., Records], cache: Path) -> None:
    records = records_of(code=b"v1")
    records.remember(b"input", [1, 2])
    [entry] = (cache / "demo").glob("*.json")
    entry.write_text("{not json")
    assert records.recall(b"input") is None
    entry.write_text(json.dumps({"key": "0" * 64, "value": [1, 2]}))  # written for another key
    assert records.recall(b"input") is None
    entry.write_text("[" * 100_000 + "]" * 100_000)  # deeper than the JSON parser goes
    assert records.recall(b"input") is None


def test_an_answer_others_may_write_is_refused(records_of: Callable[..., Records], cache: Path) -> None:
    records = records_of(code=b"v1")
    records.remember(b"input", [1, 2])
    [entry] = (cache / "demo").glob("*.json")
    entry.chmod(0o666)
    with pytest.raises(ToolError) as caught:
        records.recall(b"input")
    assert "is writable by others (mode 0666)" in caught.value.problems[0].render()


def test_an_answer_is_kept_under_its_input_and_what_its_kind_depends_on(records_of: Callable[..., Records]) -> None:
    """The generation records and the validator's verdicts are looked up by this key, as bump's answers are."""
    key = records_of(code=b"v1").key(b"input")
    assert records_of(code=b"v1").key(b"input") == key
    assert len(key) == 64 and set(key) <= set("0123456789abcdef")
    others = {
        records_of(code=b"v1").key(b"other input"),
        records_of(code=b"v2").key(b"input"),
        records_of(code=b"v1", extra=b"").key(b"input"),
        records_of("another kind", code=b"v1").key(b"input"),
    }
    assert key not in others and len(others) == 4
