"""Where envd is reached, what every request carries, and the signed file URLs."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from e2b import AsyncSandbox, ConnectionConfig, InvalidArgumentException
from e2b.sandbox.envd_endpoint import SandboxEndpoint, direct_url, envd_url
from e2b.sandbox.signature import get_signature
from e2b.sandbox.versions import UNKNOWN_VERSION, envd_version


@pytest.fixture(autouse=True)
def _no_sandbox_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_SANDBOX_URL", raising=False)
    monkeypatch.delenv("E2B_DEBUG", raising=False)


def config(**kwargs: object) -> ConnectionConfig:
    return ConnectionConfig(api_key="k", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("domain", "url"),
    [
        ("e2b.app", "https://sandbox.e2b.app"),  # a shared domain: routed by E2b-Sandbox-Id
        ("e2b.dev", "https://sandbox.e2b.dev"),
        ("example.com", "https://49983-abc.example.com"),
    ],
)
def test_the_envd_url_by_domain(domain: str, url: str) -> None:
    assert envd_url(config(), "abc", domain) == url
    assert direct_url(config(), "abc", domain) == f"https://49983-abc.{domain}"


def test_debug_the_environment_and_a_loopback_api(monkeypatch: pytest.MonkeyPatch) -> None:
    assert envd_url(config(debug=True), "abc", "e2b.app") == "http://localhost:49983"
    assert envd_url(config(api_url="http://127.0.0.1:3000/"), "abc", "e2b.app") == "http://127.0.0.1:3000"
    assert envd_url(config(api_url="http://localhost:8/"), "abc", "e2b.app") == "http://localhost:8"
    monkeypatch.setenv("E2B_SANDBOX_URL", "http://envd.test:1/")
    assert envd_url(config(), "abc", "e2b.app") == "http://envd.test:1"


def test_the_headers_and_the_default_user_of_an_old_envd() -> None:
    endpoint = SandboxEndpoint.of(
        "abc",
        sandbox_domain=None,
        envd_version="0.3.9",
        envd_access_token="tok",
        traffic_access_token=None,
        config=config(headers={"X-Extra": "1"}),
    )
    assert endpoint.sandbox_domain == "e2b.app"
    assert endpoint.headers() == {
        "X-Extra": "1",
        "E2b-Sandbox-Id": "abc",
        "E2b-Sandbox-Port": "49983",
        "X-Access-Token": "tok",
    }
    assert endpoint.user(None) == "user" and endpoint.user_headers(None) == {"Authorization": "Basic dXNlcjo="}
    current = SandboxEndpoint.of(
        "abc",
        sandbox_domain="e2b.app",
        envd_version="0.4.0",
        envd_access_token=None,
        traffic_access_token=None,
        config=config(),
    )
    assert current.user(None) is None and current.user_headers(None) == {}
    assert "X-Access-Token" not in current.headers()


def test_versions_read_as_e2b_2_reads_them() -> None:
    assert envd_version("0.5.7") == (0, 5, 7)
    assert envd_version("v0.1") == (0, 1, 0)
    assert envd_version("0.6.2-rc.1") == (0, 6, 2)
    assert envd_version(None) == UNKNOWN_VERSION
    assert envd_version("garbage") == UNKNOWN_VERSION


def test_get_host_and_file_urls() -> None:
    sbx = AsyncSandbox("abc", envd_version="0.6.4", sandbox_domain="example.com", connection_config=config())
    assert sbx.get_host(3000) == "3000-abc.example.com"
    assert (
        sbx.download_url("/home/user/a b.txt") == "https://49983-abc.example.com/files?path=%2Fhome%2Fuser%2Fa%20b.txt"
    )
    with pytest.raises(InvalidArgumentException, match="secured"):
        sbx.upload_url("/x", use_signature_expiration=60)
    with pytest.raises(InvalidArgumentException, match="port"):
        sbx.get_host(0)
    assert sbx.envd_api_url == sbx.envd_direct_url == "https://49983-abc.example.com"
    assert sbx.get_mcp_url() == "https://50005-abc.example.com/mcp"
    debug = AsyncSandbox("abc", connection_config=config(debug=True))
    assert debug.get_host(3000) == "localhost:3000"


def test_a_secured_sandbox_signs_its_urls() -> None:
    sbx = AsyncSandbox(
        "abc", envd_version="0.6.4", envd_access_token="tok", sandbox_domain="e2b.app", connection_config=config()
    )
    query = parse_qs(urlsplit(sbx.upload_url("/f", user="root")).query)
    assert query["signature"] == [get_signature("/f", "write", "root", "tok")["signature"]]
    assert query["username"] == ["root"]
    before = int(time.time())
    query = parse_qs(urlsplit(sbx.download_url("/f", use_signature_expiration=60)).query)
    expiration = int(query["signature_expiration"][0])
    assert before + 60 <= expiration <= int(time.time()) + 60
    signed = get_signature("/f", "read", None, "tok", 60)
    assert signed["signature"].startswith("v1_") and "=" not in signed["signature"]


def test_a_known_signature() -> None:
    # sha256("/tmp/a b:read:user:tok"), base64 without padding: what e2b 2.63.0 computes for it.
    assert get_signature("/tmp/a b", "read", "user", "tok") == {
        "signature": "v1_wC4iZo/+fiMt0lHnmabxZajacjKl2UXaxoUUqgXEqwI",
        "expiration": None,
    }
