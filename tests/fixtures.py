"""The real-shape spec: its one path and the one marker that skips a test without it.

``../shared/fixtures/e2b-openapi.yml`` (beside the project, not in it) is the
runtime's spec as upstream writes it: no operationIds, a dozen tags, shared
``$ref`` responses. Tests that read it carry ``needs_real_spec``, so a
checkout without the shared fixtures skips them and says why;
benchmarks/bench_codegen.py takes the path from here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REAL_SPEC = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "e2b-openapi.yml"  # beside the repository

needs_real_spec = pytest.mark.skipif(
    not REAL_SPEC.is_file(), reason=f"{REAL_SPEC} is absent (shared fixtures not mounted)"
)
