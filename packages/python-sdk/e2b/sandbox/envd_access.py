"""The data plane's part of a sandbox object that does not wait on anything: its envd endpoint and URLs.

`EnvdAccess` is a mixin for the control plane's `Sandbox`/`AsyncSandbox`: it
reads the attributes they hold (`sandbox_id`, `sandbox_domain`,
`envd_version`, `envd_access_token`, `traffic_access_token`,
`connection_config`) and computes from them, so that `connect()` updating
them is seen by the next data-plane call.
"""

from __future__ import annotations

from e2b._config import ConnectionConfig
from e2b.sandbox import arguments
from e2b.sandbox.envd_endpoint import SandboxEndpoint, direct_url

__all__ = ["EnvdAccess"]

# The port e2b 2.x's MCP gateway listens on in the sandbox.
MCP_PORT = 50005


class EnvdAccess:
    """`get_host`, `download_url` and `upload_url`, and the endpoint the data plane's calls go to."""

    sandbox_id: str
    sandbox_domain: str | None
    envd_version: str | None
    envd_access_token: str | None
    traffic_access_token: str | None
    connection_config: ConnectionConfig

    def _envd_endpoint(self) -> SandboxEndpoint:
        key = (
            self.sandbox_id,
            self.sandbox_domain,
            self.envd_version,
            self.envd_access_token,
            self.traffic_access_token,
            id(self.connection_config),
        )
        cached = self.__dict__.get("_envd_endpoint_cache")
        if cached is not None and cached[0] == key:
            endpoint: SandboxEndpoint = cached[1]
            return endpoint
        endpoint = SandboxEndpoint.of(
            self.sandbox_id,
            sandbox_domain=self.sandbox_domain,
            envd_version=self.envd_version,
            envd_access_token=self.envd_access_token,
            traffic_access_token=self.traffic_access_token,
            config=self.connection_config,
        )
        self.__dict__["_envd_endpoint_cache"] = (key, endpoint)
        return endpoint

    @property
    def envd_api_url(self) -> str:
        """The URL the SDK's own requests to envd go to."""
        return self._envd_endpoint().envd_url

    @property
    def envd_direct_url(self) -> str:
        """The sandbox's own envd URL (`https://49983-<id>.<domain>`), as file URLs use it."""
        endpoint = self._envd_endpoint()
        return direct_url(endpoint.config, endpoint.sandbox_id, endpoint.sandbox_domain)

    def get_mcp_url(self) -> str:
        """The URL of the sandbox's MCP gateway (port 50005), for sandboxes started with one."""
        return f"https://{self.get_host(MCP_PORT)}/mcp"

    def get_host(self, port: int) -> str:
        """The host (`<port>-<id>.<domain>`) that reaches `port` in the sandbox from outside, by HTTP or WebSocket."""
        return self._envd_endpoint().host(arguments.port(port))

    def download_url(self, path: str, user: str | None = None, use_signature_expiration: int | None = None) -> str:
        """A URL that downloads the file at `path`; signed when the sandbox is secured.

        `use_signature_expiration`: seconds the signed URL stays valid (secured sandboxes only).
        """
        return self._envd_endpoint().file_url(
            arguments.path("path", path),
            "read",
            arguments.optional_text("user", user),
            arguments.expiration(use_signature_expiration),
        )

    def upload_url(self, path: str, user: str | None = None, use_signature_expiration: int | None = None) -> str:
        """A URL to POST a file to `path` as multipart/form-data; signed when the sandbox is secured."""
        return self._envd_endpoint().file_url(
            arguments.path("path", path),
            "write",
            arguments.optional_text("user", user),
            arguments.expiration(use_signature_expiration),
        )
