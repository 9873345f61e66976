import pytest

from . import fuzz_budget  # noqa: F401  (loads the hypothesis profile before any test module)


@pytest.fixture
def anyio_backend() -> str:
    # One event loop flavour keeps the async tests comparable with the sync ones.
    return "asyncio"
