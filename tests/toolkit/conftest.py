"""The toolkit's tests that run codegen's verbs (the cache folder's refusals) use the codegen tests' fixtures."""

from __future__ import annotations

from tests.codegen.conftest import (  # noqa: F401  (fixtures, shared with the codegen tests)
    _memoized_generation,
    cache,
    env,
    generation_memo,
    pristine_project,
    pristine_upstream,
    project,
    run,
    upstream,
)
