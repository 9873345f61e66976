"""e2b._http: the HTTP stack under the generated client."""

from __future__ import annotations

import httpx
import pytest
from e2b import AuthenticationException, ConnectionConfig
from e2b._http import async_api_client, sync_api_client
from e2b._transport import AsyncRetryableTransport, RetryableTransport

pytestmark = pytest.mark.usefixtures("clean_env")


class Recording(httpx.MockTransport):
    closed = False

    def close(self) -> None:
        self.closed = True


def transport_of(client: httpx.Client | httpx.AsyncClient) -> object:
    return client._transport


def test_injected_transport_is_wrapped_in_retries_and_never_closed() -> None:
    inner = Recording(lambda request: httpx.Response(204))
    client = sync_api_client(ConnectionConfig(api_key="k", transport=inner))
    assert isinstance(transport_of(client.get_httpx_client()), RetryableTransport)
    with client:
        client.get_httpx_client().get("/ping")
    assert not inner.closed


@pytest.mark.anyio
async def test_async_injected_transport_is_wrapped_in_retries() -> None:
    client = async_api_client(
        ConnectionConfig(api_key="k", transport=httpx.MockTransport(lambda r: httpx.Response(204)))
    )
    assert isinstance(transport_of(client.get_async_httpx_client()), AsyncRetryableTransport)
    async with client:
        response = await client.get_async_httpx_client().get("/ping")
    assert response.status_code == 204


def test_default_stack_is_the_retrying_transport() -> None:
    client = sync_api_client(ConnectionConfig(api_key="k"))
    with client:
        assert isinstance(transport_of(client.get_httpx_client()), RetryableTransport)


def test_missing_api_key_is_an_authentication_error() -> None:
    with pytest.raises(AuthenticationException, match="E2B_API_KEY") as caught:
        sync_api_client(ConnectionConfig())
    assert caught.value.status_code is None


def test_debug_needs_no_key() -> None:
    client = sync_api_client(ConnectionConfig(debug=True, transport=httpx.MockTransport(lambda r: httpx.Response(204))))
    assert str(client.get_httpx_client().base_url) == "http://localhost:3000"


def test_wrong_flavour_transport_is_refused() -> None:
    class AsyncOnly(httpx.AsyncBaseTransport):
        pass

    with pytest.raises(TypeError, match="AsyncSandbox"):
        sync_api_client(ConnectionConfig(api_key="k", transport=AsyncOnly()))


def test_headers_and_timeout_reach_the_httpx_client() -> None:
    config = ConnectionConfig(
        api_key="k", headers={"X-Extra": "1"}, request_timeout=7, transport=Recording(lambda r: httpx.Response(204))
    )
    http = sync_api_client(config).get_httpx_client()
    assert (http.headers["X-Extra"], http.headers["X-API-Key"]) == ("1", "k")
    assert http.timeout == httpx.Timeout(7)
