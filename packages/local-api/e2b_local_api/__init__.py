"""A local, in-memory E2B sandbox API for end-to-end tests and offline use."""

from e2b_local_api.app import create_app
from e2b_local_api.auth import DEV_API_KEY, AuthConfig
from e2b_local_api.store import SandboxStore

__all__ = ["DEV_API_KEY", "AuthConfig", "SandboxStore", "create_app"]
