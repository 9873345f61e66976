import e2b._http
import pytest

from . import fuzz_budget  # noqa: F401  (loads the hypothesis profile before any test module)


@pytest.fixture
def anyio_backend() -> str:
    # One event loop flavour keeps the async tests comparable with the sync ones.
    return "asyncio"


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Replace the SDK's retry sleeps, both flavours: nothing waits; returns what they were asked to wait."""
    waited: list[float] = []

    async def async_sleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(e2b._http, "retry_sleep", waited.append)
    monkeypatch.setattr(e2b._http, "async_retry_sleep", async_sleep)
    return waited
