"""Where a sandbox's envd answers and what every request to it carries.

envd listens on port 49983 of the sandbox. It is reached at
`https://49983-<id>.<domain>`; on E2B's own domains through the shared
`https://sandbox.<domain>`, which routes by the `E2b-Sandbox-Id` and
`E2b-Sandbox-Port` headers (sent always, as e2b 2.x sends them);
`E2B_SANDBOX_URL` overrides both. In debug mode it is `http://localhost:49983`.
Against an API on a loopback address (the local API server, `e2b local`)
envd is served by that same server, routed by the same headers.
"""

from __future__ import annotations

import base64
import ipaddress
import os
import urllib.parse
from dataclasses import dataclass

from e2b._config import ConnectionConfig
from e2b._exceptions import InvalidArgumentException
from e2b.sandbox import versions
from e2b.sandbox.signature import Operation, get_signature

__all__ = ["ENVD_PORT", "SandboxEndpoint"]

ENVD_PORT = 49983
FILES_ROUTE = "/files"
HEALTH_ROUTE = "/health"
# The user envd runs as when an old envd (< 0.4.0) is not told one.
DEFAULT_USERNAME = "user"
# Domains whose proxy serves every sandbox at `sandbox.<domain>`, routing by header.
SHARED_SANDBOX_DOMAINS = frozenset(
    {"e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev", "e2b-tango.dev", "e2b-juliett.dev", "foxtrot-2.e2b.dev"}
)
KEEPALIVE_PING_HEADER = "Keepalive-Ping-Interval"
# Seconds between the keep-alive events envd sends on an idle stream, so that proxies keep it open.
KEEPALIVE_PING_INTERVAL = 50


def _is_loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class SandboxEndpoint:
    """One sandbox's envd: its URL, version, token and the headers every request carries."""

    sandbox_id: str
    sandbox_domain: str
    envd_url: str
    version: versions.EnvdVersion
    access_token: str | None
    traffic_access_token: str | None
    config: ConnectionConfig

    @classmethod
    def of(
        cls,
        sandbox_id: str,
        *,
        sandbox_domain: str | None,
        envd_version: str | None,
        envd_access_token: str | None,
        traffic_access_token: str | None,
        config: ConnectionConfig,
    ) -> SandboxEndpoint:
        domain = sandbox_domain or config.domain
        return cls(
            sandbox_id=sandbox_id,
            sandbox_domain=domain,
            envd_url=envd_url(config, sandbox_id, domain),
            version=versions.envd_version(envd_version),
            access_token=envd_access_token or None,
            traffic_access_token=traffic_access_token or None,
            config=config,
        )

    def headers(self) -> dict[str, str]:
        """What every request to envd carries: the routing headers, the token, the user's extra headers."""
        headers = {**self.config.headers, "E2b-Sandbox-Id": self.sandbox_id, "E2b-Sandbox-Port": str(ENVD_PORT)}
        if self.access_token:
            headers["X-Access-Token"] = self.access_token
        return headers

    def user(self, user: str | None) -> str | None:
        """The user to name in a request: an old envd needs one, a newer one applies its default."""
        if user is None and self.version < versions.ENVD_DEFAULT_USER:
            return DEFAULT_USERNAME
        return user

    def user_headers(self, user: str | None) -> dict[str, str]:
        """envd's RPCs take the user as HTTP Basic credentials with an empty password."""
        name = self.user(user)
        if not name:
            return {}
        return {"Authorization": "Basic " + base64.b64encode(f"{name}:".encode()).decode("ascii")}

    def host(self, port: int) -> str:
        """The host a client outside the sandbox reaches `port` of the sandbox at."""
        if self.config.debug:
            return f"localhost:{port}"
        return f"{port}-{self.sandbox_id}.{self.sandbox_domain}"

    def file_url(self, path: str, operation: Operation, user: str | None, expiration: int | None) -> str:
        """A URL to download (`read`) or upload (`write`) `path`, signed when the sandbox is secured."""
        if expiration is not None and not self.access_token:
            raise InvalidArgumentException(
                "use_signature_expiration needs a secured sandbox (one with an envd access token)"
            )
        username = self.user(user)
        query: dict[str, str] = {"path": path} if path else {}
        if username:
            query["username"] = username
        if self.access_token:
            signed = get_signature(path, operation, username, self.access_token, expiration)
            query["signature"] = signed["signature"]
            if signed["expiration"] is not None:
                query["signature_expiration"] = str(signed["expiration"])
        base = direct_url(self.config, self.sandbox_id, self.sandbox_domain)
        return f"{base}{FILES_ROUTE}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"


def envd_url(config: ConnectionConfig, sandbox_id: str, domain: str) -> str:
    """The base URL of the sandbox's envd for the SDK's own requests."""
    override = os.environ.get("E2B_SANDBOX_URL")
    if override:
        return override.rstrip("/")
    if config.debug:
        return f"http://localhost:{ENVD_PORT}"
    if _is_loopback(config.api_url):
        return config.api_url.rstrip("/")
    if domain in SHARED_SANDBOX_DOMAINS:
        return f"https://sandbox.{domain}"
    return f"https://{ENVD_PORT}-{sandbox_id}.{domain}"


def direct_url(config: ConnectionConfig, sandbox_id: str, domain: str) -> str:
    """The sandbox's own envd URL, for URLs handed to other clients (they send no routing header)."""
    override = os.environ.get("E2B_SANDBOX_URL")
    if override:
        return override.rstrip("/")
    if config.debug:
        return f"http://localhost:{ENVD_PORT}"
    return f"https://{ENVD_PORT}-{sandbox_id}.{domain}"
