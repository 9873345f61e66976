"""Table tests for the 503 peek's decisions in ``_peek``."""

from __future__ import annotations

import gzip
import zlib

import pytest
from e2b._transport import _peek
from e2b._transport._peek import PeekState, Stop
from e2b._transport._retry_rules import RetryPolicy


@pytest.mark.parametrize(
    ("delay", "now", "deadline", "expected"),
    [(0.1, 0.0, None, 1.0), (3.0, 0.0, None, 3.0), (3.0, 0.0, 2.0, 2.0), (0.1, 5.0, 5.5, 0.5), (1.0, 9.0, 8.0, 0.0)],
)
def test_peek_budget(delay: float, now: float, deadline: float | None, expected: float) -> None:
    assert _peek.peek_budget(RetryPolicy(), delay, now, deadline) == expected


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/json", True),
        ("Application/JSON; charset=utf-8", True),
        ("application/problem+json", True),
        ("application/vnd.e2b+JSON ;q=1", True),
        ("text/json", False),
        ("application/jsonp", False),
        ("text/html", False),
        (None, False),
        ("", False),
        ("application/json-seq", False),
        ("  application/json  ", True),
    ],
)
def test_is_json_media_type(content_type: str | None, expected: bool) -> None:
    assert _peek.is_json_media_type(content_type) is expected


@pytest.mark.parametrize(
    ("status", "content_type", "length", "expected"),
    [
        (503, "application/json", None, True),
        (503, "application/json", "8192", True),
        (503, "application/json", "8193", False),
        (503, "application/json", "12, 12", True),
        (503, "application/json", "1, 99999", True),
        (503, "application/json", "x", True),
        (503, "text/plain", None, False),
        (502, "application/json", None, False),
    ],
)
def test_should_peek(status: int, content_type: str, length: str | None, expected: bool) -> None:
    assert _peek.should_peek(status, content_type, length, 8192) is expected


def _deflate(data: bytes, wbits: int) -> bytes:
    c = zlib.compressobj(wbits=wbits)
    return c.compress(data) + c.flush()


# mtime=0: gzip stamps the time in its header, and these bytes are in the test ids, which must be the same
# in every pytest-xdist worker (and in every run, to rerun one by its id).
@pytest.mark.parametrize(
    ("raw", "encoding", "complete", "expected"),
    [
        (b"abc", None, True, b"abc"),
        (b"abc", "identity", True, b"abc"),
        (gzip.compress(b"abc", mtime=0), "gzip", True, b"abc"),
        (gzip.compress(b"abc", mtime=0), "X-GZIP", True, b"abc"),
        (_deflate(b"abc", 15), "deflate", True, b"abc"),
        (_deflate(b"abc", -15), "deflate", True, b"abc"),
        (gzip.compress(b"abc", mtime=0)[:-4], "gzip", True, None),
        (gzip.compress(b"abc" * 50, mtime=0)[:-4], "gzip", False, b"abc" * 50),
        (b"abc", "br", True, None),
        (b"abc", "gzip, gzip", True, None),
        (b"not gzip", "gzip", True, None),
        (gzip.compress(b" " * 100_000, mtime=0), "gzip", True, None),
        (b"x" * 70_000, None, True, None),
    ],
)
def test_decode_bounded(raw: bytes, encoding: str | None, complete: bool, expected: bytes | None) -> None:
    assert _peek.decode_bounded(raw, encoding, 64 * 1024, complete=complete) == expected


def test_rebuilt_headers_and_plain_extensions() -> None:
    items = [
        ("Content-Encoding", "gzip"),
        ("transfer-encoding", "chunked"),
        ("Content-Length", "9"),
        ("X-A", "1"),
        ("content-type", "application/json"),
    ]
    assert _peek.rebuilt_headers(items) == [("X-A", "1"), ("content-type", "application/json")]
    ext = {"http_version": b"HTTP/1.1", "reason_phrase": b"x", "network_stream": object(), "get_trailers": lambda: None}
    assert _peek.plain_extensions(ext) == {"http_version": b"HTTP/1.1", "reason_phrase": b"x"}


def test_peek_state_stops_at_cap_and_budget() -> None:
    state = PeekState(cap=4, budget_end=10.0)
    assert state.wants_more(0.0)
    state.add(b"abcd")
    assert state.wants_more(0.0)  # exactly at the cap: still looking for EOF
    state.add(b"")
    state.add(b"e")
    assert not state.wants_more(0.0)
    assert state.stop is Stop.CAP
    late = PeekState(cap=4, budget_end=10.0)
    late.add(b"a")
    assert not late.wants_more(10.0)
    assert late.stop is Stop.BUDGET
    assert late.raw == b"a"
