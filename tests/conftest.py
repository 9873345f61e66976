import pytest


@pytest.fixture
def anyio_backend() -> str:
    # One event loop flavour keeps the async tests comparable with the sync ones.
    return "asyncio"
