"""envd's signed file URLs: the SDK's `download_url`/`upload_url` of a secure sandbox, and their check.

A request to `/files` shows the sandbox's access token in `X-Access-Token`, or a `v1_` signature of
(path, operation, user, token[, expiry]) in its query: base64 of its sha256, unpadded, as the SDK
computes it. envd's validateSigning is the model: its statuses and messages.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping


def expected_signature(path: str, operation: str, username: str, token: str, expiration: int | None) -> str:
    """The `v1_` signature of a file URL, as the SDK computes it."""
    parts = [path, operation, username, token] + ([str(expiration)] if expiration is not None else [])
    digest = hashlib.sha256(":".join(parts).encode("utf-8")).digest()
    return "v1_" + base64.b64encode(digest).rstrip(b"=").decode("ascii")


def signing_refusal(
    header: str | None, query: Mapping[str, str], token: str | None, operation: str
) -> tuple[int, str] | None:
    """None when the request may go on; else the status and message envd answers it with.

    `header`: the request's `X-Access-Token`; `token`: the sandbox's (None: an unsecured sandbox).
    """
    if not token:
        return None
    if header:
        if not hmac.compare_digest(header.encode(), token.encode()):
            return 401, "access token present in header but does not match"
        return None
    if query.get("signature") is None:
        return 401, "missing signature query parameter"
    raw_expiration = query.get("signature_expiration")
    expiration = None
    if raw_expiration is not None:
        try:
            expiration = int(raw_expiration)
        except ValueError:
            return 400, f"signature_expiration must be a Unix time in seconds, not {raw_expiration!r}"
    if not signature_matches(query, token, operation):
        return 401, "invalid signature"
    if expiration is not None and expiration < time.time():
        return 401, "signature is already expired"
    return None


def signature_matches(query: Mapping[str, str], token: str, operation: str) -> bool:
    """Whether the query's `signature` is the one `token` makes for its path, user and expiry."""
    raw_expiration = query.get("signature_expiration")
    expiration = int(raw_expiration) if raw_expiration is not None and raw_expiration.isdigit() else None
    expected = expected_signature(query.get("path", ""), operation, query.get("username", ""), token, expiration)
    return hmac.compare_digest(expected.encode(), query.get("signature", "").encode())
