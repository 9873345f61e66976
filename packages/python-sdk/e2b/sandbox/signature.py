"""Signatures for file URLs a secured sandbox's envd accepts without its access token (e2b 2.x's v1 scheme)."""

from __future__ import annotations

import base64
import hashlib
import time
from typing import Literal, TypedDict

from e2b._exceptions import InvalidArgumentException

__all__ = ["Operation", "Signature", "get_signature"]

Operation = Literal["read", "write"]


class Signature(TypedDict):
    signature: str
    """`v1_` and the unpadded base64 of the SHA-256 of what was signed."""
    expiration: int | None
    """The Unix time the signature stops being valid at; None when it does not expire."""


def get_signature(
    path: str,
    operation: Operation,
    user: str | None,
    envd_access_token: str | None,
    expiration_in_seconds: int | None = None,
) -> Signature:
    """The signature envd checks for `operation` on `path` as `user` (None: the sandbox's default user)."""
    if not envd_access_token:
        raise InvalidArgumentException("the sandbox has no envd access token, so its file URLs cannot be signed")
    expiration = None if expiration_in_seconds is None else int(time.time()) + expiration_in_seconds
    # envd signs the empty string for the default user, and appends the expiration only when there is one.
    fields = [path, operation, user or "", envd_access_token]
    if expiration is not None:
        fields.append(str(expiration))
    digest = hashlib.sha256(":".join(fields).encode("utf-8")).digest()
    return {"signature": "v1_" + base64.b64encode(digest).decode("ascii").rstrip("="), "expiration": expiration}
