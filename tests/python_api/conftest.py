"""The Python API tests read a scratch copy of this repository: the codegen tests' pristine project."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.codegen.conftest import (  # noqa: F401  (fixtures, shared with the codegen tests)
    _memoized_generation,
    generation_memo,
    pristine_project,
    pristine_upstream,
    project,
)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Remembered readings go to the test's own cache folder, never the user's."""
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(tmp_path / "cache"))
