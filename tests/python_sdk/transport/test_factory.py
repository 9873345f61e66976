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
        pass  # closing the client closes the owned pyqwest transport
