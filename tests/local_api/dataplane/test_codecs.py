"""`e2b_local_api.dataplane.codecs`: a body that is not valid gzip is the client's `invalid_argument`.

Over a real socket, on both envd services, as a unary call (`Content-Encoding`) and as a stream
(`Connect-Content-Encoding`, the envelope flagged compressed).
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator

import httpx
import pytest

from tests.local_api.sandboxes import Envd, read_envelopes, real_server

NOT_GZIP = b"abc"
TRUNCATED_GZIP = gzip.compress(b'{"path": "/tmp"}')[:-6]


@pytest.fixture(scope="module")
def envd() -> Iterator[Envd]:
    with real_server() as server:
        yield server.envd(server.create())


def _post(envd: Envd, path: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(f"{envd.url}{path}", content=body, headers=envd.headers(**headers), timeout=30)


@pytest.mark.parametrize("body", [NOT_GZIP, TRUNCATED_GZIP], ids=["not-gzip", "truncated"])
@pytest.mark.parametrize(
    ("path", "message"),
    [("/filesystem.Filesystem/Stat", '{"path": "/tmp"}'), ("/process.Process/List", "{}")],
)
def test_a_unary_body_that_is_not_gzip_is_invalid_argument(envd: Envd, path: str, message: str, body: bytes) -> None:
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    valid = _post(envd, path, gzip.compress(message.encode()), **headers)
    assert valid.status_code == 200, valid.text  # the same call, compressed properly
    response = _post(envd, path, body, **headers)
    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["code"] == "invalid_argument"
    assert answer["message"].startswith("decompress: not valid gzip: ")


@pytest.mark.parametrize("body", [NOT_GZIP, TRUNCATED_GZIP], ids=["not-gzip", "truncated"])
def test_a_stream_message_that_is_not_gzip_ends_the_stream_invalid_argument(envd: Envd, body: bytes) -> None:
    envelope = struct.pack(">BI", 1, len(body)) + body  # flag 1: the message is compressed
    headers = {"Content-Type": "application/connect+json", "Connect-Content-Encoding": "gzip"}
    response = _post(envd, "/filesystem.Filesystem/WatchDir", envelope, **headers)
    assert response.status_code == 200
    ((flags, end),) = list(read_envelopes(iter([response.content])))
    assert flags & 2  # the end message
    assert end["error"]["code"] == "invalid_argument"
    assert end["error"]["message"].startswith("decompress: not valid gzip: ")
