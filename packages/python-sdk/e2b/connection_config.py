"""e2b 2.x's `e2b.connection_config`: `ConnectionConfig` and `ApiParams`, the same objects as `e2b`'s.

Code written for 2.x imports them from here. They are defined in `e2b._config`;
2.x's `ProxyTypes`, `HttpVersion` and `Username` are not carried, as the
settings they type (`proxy=`, `http_version=`) are not taken (docs/users/sdk.md).
"""

from e2b._config import ApiParams, ConnectionConfig

__all__ = ["ApiParams", "ConnectionConfig"]
