"""The `v1_` signature and its check, without a server (tests/local_api/dataplane/test_files_http.py: over HTTP)."""

from __future__ import annotations

import base64
import hashlib
import time

from e2b_local_api.dataplane.signed_urls import expected_signature, signing_refusal


def test_signature_matches_the_released_sdk() -> None:
    # The SDK's get_signature for path "/a", "write", user None, token "t", no expiry (computed by e2b 2.63.0).
    assert (
        expected_signature("/a", "write", "", "t", None)
        == "v1_" + base64.b64encode(hashlib.sha256(b"/a:write::t").digest()).rstrip(b"=").decode()
    )


def test_each_refusal_is_envds_status_and_message() -> None:
    good = {"path": "/a", "signature": expected_signature("/a", "read", "", "t", None)}
    assert signing_refusal(None, {}, None, "read") is None  # an unsecured sandbox asks for nothing
    assert signing_refusal("t", {}, "t", "read") is None
    assert signing_refusal("x", good, "t", "read") == (401, "access token present in header but does not match")
    assert signing_refusal(None, {"path": "/a"}, "t", "read") == (401, "missing signature query parameter")
    assert signing_refusal(None, good, "t", "read") is None
    assert signing_refusal(None, good, "t", "write") == (401, "invalid signature")
    past = int(time.time()) - 10
    expired = {
        "path": "/a",
        "signature": expected_signature("/a", "read", "", "t", past),
        "signature_expiration": str(past),
    }
    assert signing_refusal(None, expired, "t", "read") == (401, "signature is already expired")
    status, message = signing_refusal(None, {**good, "signature_expiration": "soon"}, "t", "read") or (0, "")
    assert status == 400 and "'soon'" in message
