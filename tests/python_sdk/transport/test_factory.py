"""Tests for the default transports built over pyqwest (``_factory``)."""

from __future__ import annotations

import httpx
import pytest
from e2b._transport import (
    AsyncRetryableTransport,
    RetryableTransport,
    RetryPolicy,
    default_async_transport,
    default_transport,
)
from pyqwest.httpx import AsyncPyqwestTransport, PyqwestTransport


def test_default_transport_wraps_pyqwest() -> None:
    transport = default_transport(retries=5, policy=RetryPolicy(backoff_base=0.1))
    assert isinstance(transport, RetryableTransport)
    assert isinstance(transport.inner, PyqwestTransport)
    assert transport.policy.retries == 5
    assert transport.policy.backoff_base == 0.1
    transport.close()


def test_default_transport_keeps_policy_retries_when_not_overridden() -> None:
    transport = default_transport(policy=RetryPolicy(retries=1))
    assert transport.policy.retries == 1
    assert default_transport().policy == RetryPolicy()
    transport.close()


@pytest.mark.anyio
async def test_default_async_transport_wraps_pyqwest() -> None:
    transport = default_async_transport(retries=0)
    assert isinstance(transport, AsyncRetryableTransport)
    assert isinstance(transport.inner, AsyncPyqwestTransport)
    assert transport.policy.retries == 0
    async with httpx.AsyncClient(transport=transport):
        pass
    # Closing the client closed the pyqwest transport the factory made.
    with pytest.raises(RuntimeError, match="closed transport"):
        await transport.handle_async_request(httpx.Request("GET", "http://127.0.0.1:9/"))


def test_closing_the_client_closes_the_owned_pyqwest_transport() -> None:
    transport = default_transport(retries=0)
    with httpx.Client(transport=transport):
        pass
    with pytest.raises(RuntimeError, match="closed transport"):
        transport.handle_request(httpx.Request("GET", "http://127.0.0.1:9/"))
