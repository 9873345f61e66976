"""Fixtures for every test: the event loop flavour, the SDK's retry sleeps, the signal dispositions, gc."""

from collections.abc import Iterator

import e2b._http
import pytest

from . import fuzz_budget  # noqa: F401  (loads the hypothesis profile before any test module)
from .gc_window import no_collection
from .signal_dispositions import default_dispositions


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The longest first, the rest in their order: the suite ends on short tests, every worker busy to the end.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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


@pytest.fixture
def default_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP at their defaults for the test, in process and in the subprocesses it starts.

    For every test that sends or expects a signal: the suite may run with
    SIGINT ignored (a background job) and must pass all the same.
    """
    with default_dispositions():
        yield


@pytest.fixture
def no_gc() -> Iterator[None]:
    """No automatic garbage collection during the test: a Ctrl-C it sends its own main thread lands in its code.

    For every test that signals its own main thread from another thread (tests/gc_window.py says why).
    """
    with no_collection():
        yield
