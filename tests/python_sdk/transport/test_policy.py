"""Table tests for the pure retry rules in ``_policy``."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
from e2b._transport import _policy as p
from e2b._transport._policy import RetryPolicy, Stop, Verdict

REFUSAL = json.dumps({"code": 503, "error_code": "sandbox_pause_refused"}).encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("0", 0.0),
        ("-1", None),
        ("nan", None),
        ("inf", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("", None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert p.parse_retry_after(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("true", True), ("TRUE ", True), ("false", False), ("False", False), ("yes", None), ("", None)],
)
def test_parse_should_retry(value: str | None, expected: bool | None) -> None:
    assert p.parse_should_retry(value) is expected


@pytest.mark.parametrize(
    ("status", "should_retry", "expected"),
    [
        (503, None, True),
        (429, None, True),
        (502, None, True),
        (504, None, True),
        (500, None, False),
        (200, None, False),
        (503, False, False),
        (500, True, True),
        (200, True, False),
        (404, True, True),
    ],
)
def test_is_retryable(status: int, should_retry: bool | None, expected: bool) -> None:
    assert p.is_retryable(status, should_retry) is expected


@pytest.mark.parametrize(
    ("attempt", "draw", "expected"),
    [
        (0, 0.0, 0.5),
        (1, 0.0, 1.0),
        (2, 0.0, 2.0),
        (4, 0.0, 8.0),
        (10, 0.0, 8.0),
        (0, 0.999999, 0.25),
        (3, 0.5, 3.0),
        (10_000, 0.0, 8.0),
    ],
)
def test_backoff_delay(attempt: int, draw: float, expected: float) -> None:
    assert p.backoff_delay(RetryPolicy(), attempt, draw) == pytest.approx(expected, rel=1e-5)


def test_retry_after_replaces_backoff() -> None:
    assert p.retry_delay(RetryPolicy(), 3, 0.25, 0.0) == 0.25
    assert p.retry_delay(RetryPolicy(), 0, None, 0.0) == 0.5


@pytest.mark.parametrize(
    ("extensions", "expected"),
    [
        ({}, None),
        ({"timeout": {"connect": 5, "read": 5, "write": 5, "pool": 5}}, 5.0),
        ({"timeout": {"connect": 2, "read": 0.3, "write": 2, "pool": 2}}, 2.0),
        ({"timeout": {"connect": 9, "read": 1, "write": 1, "pool": None}}, 9.0),
        ({"timeout": {"read": None, "write": 5}}, None),
        ({"timeout": {"read": "soon", "write": 5}}, None),
        ({"timeout": {"read": 2}}, 2.0),
        ({"timeout": {"connect": 1}}, None),
        ({"timeout": {"read": -1, "write": 3}}, 3.0),
        ({"timeout": "bogus"}, None),
    ],
)
def test_overall_timeout(extensions: dict[str, object], expected: float | None) -> None:
    assert p.overall_timeout(extensions) == expected


def test_operation_timeout_puts_the_total_where_pyqwest_sums() -> None:
    timeout = {"connect": 2.0, "read": 0.3, "write": 2.0, "pool": 2.0}
    converted = p.operation_timeout({"timeout": timeout})
    assert converted == {"connect": 2.0, "read": 2.0, "write": 0.0, "pool": 2.0}
    assert p.operation_timeout({"timeout": {"read": None, "write": 1.0}}) == {"read": None, "write": 0.0}
    assert p.operation_timeout({}) is None


def test_clamp_timeout_cuts_each_phase_to_the_time_left() -> None:
    timeout = {"connect": 2.0, "read": 0.3, "write": 2.0, "pool": None}
    assert p.clamp_timeout(timeout, 1.0) == {"connect": 1.0, "read": 0.3, "write": 1.0, "pool": None}
    assert p.clamp_timeout(timeout, -1.0) == {"connect": 0.001, "read": 0.001, "write": 0.001, "pool": None}
    assert p.clamp_timeout("bogus", 1.0) is None


@pytest.mark.parametrize(
    ("read", "now", "deadline", "expected"),
    [
        (None, 0.0, None, None),
        (5.0, 0.0, None, 5.0),
        (None, 1.0, 3.0, 2.0),
        (5.0, 1.0, 3.0, 2.0),
        (1.0, 0.0, 3.0, 1.0),
        (5.0, 4.0, 3.0, 0.0),
    ],
)
def test_read_bound(read: float | None, now: float, deadline: float | None, expected: float | None) -> None:
    assert p.read_bound(read, now, deadline) == expected


@pytest.mark.parametrize(
    ("delay", "now", "deadline", "expected"),
    [(0.1, 0.0, None, 1.0), (3.0, 0.0, None, 3.0), (3.0, 0.0, 2.0, 2.0), (0.1, 5.0, 5.5, 0.5), (1.0, 9.0, 8.0, 0.0)],
)
def test_peek_budget(delay: float, now: float, deadline: float | None, expected: float) -> None:
    assert p.peek_budget(RetryPolicy(), delay, now, deadline) == expected


@pytest.mark.parametrize(
    ("now", "delay", "deadline", "expected"),
    [(0.0, 1.0, None, True), (0.0, 1.0, 2.0, True), (0.0, 2.0, 2.0, False), (3.0, 0.0, 2.0, False)],
)
def test_retry_fits(now: float, delay: float, deadline: float | None, expected: bool) -> None:
    assert p.retry_fits(now, delay, deadline) is expected


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
    assert p.is_json_media_type(content_type) is expected


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
    assert p.should_peek(status, content_type, length, 8192) is expected


def _deflate(data: bytes, wbits: int) -> bytes:
    c = zlib.compressobj(wbits=wbits)
    return c.compress(data) + c.flush()


@pytest.mark.parametrize(
    ("raw", "encoding", "complete", "expected"),
    [
        (b"abc", None, True, b"abc"),
        (b"abc", "identity", True, b"abc"),
        (gzip.compress(b"abc"), "gzip", True, b"abc"),
        (gzip.compress(b"abc"), "X-GZIP", True, b"abc"),
        (_deflate(b"abc", 15), "deflate", True, b"abc"),
        (_deflate(b"abc", -15), "deflate", True, b"abc"),
        (gzip.compress(b"abc")[:-4], "gzip", True, None),
        (gzip.compress(b"abc" * 50)[:-4], "gzip", False, b"abc" * 50),
        (b"abc", "br", True, None),
        (b"abc", "gzip, gzip", True, None),
        (b"not gzip", "gzip", True, None),
        (gzip.compress(b" " * 100_000), "gzip", True, None),
        (b"x" * 70_000, None, True, None),
    ],
)
def test_decode_bounded(raw: bytes, encoding: str | None, complete: bool, expected: bytes | None) -> None:
    assert p.decode_bounded(raw, encoding, 64 * 1024, complete=complete) == expected


@pytest.mark.parametrize(
    ("stop", "raw", "encoding", "expected"),
    [
        (Stop.EOF, REFUSAL, None, Verdict.REFUSAL),
        (Stop.EOF, gzip.compress(REFUSAL), "gzip", Verdict.REFUSAL),
        (Stop.EOF, b'{"error_code": "busy"}', None, Verdict.COMPLETE),
        (Stop.EOF, b'[{"error_code": "sandbox_pause_refused"}]', None, Verdict.COMPLETE),
        (Stop.EOF, b'{"error_code": 7}', None, Verdict.COMPLETE),
        (Stop.EOF, b"[" * 5000, None, Verdict.COMPLETE),
        (Stop.EOF, b"[" * 4000 + b"]" * 4000, None, Verdict.COMPLETE),
        (Stop.EOF, b"\xff", None, Verdict.COMPLETE),
        (Stop.BUDGET, REFUSAL + b" \n", None, Verdict.REFUSAL),
        (Stop.BUDGET, b"  " + REFUSAL, None, Verdict.REFUSAL),
        (Stop.BUDGET, REFUSAL + b"{", None, Verdict.PARTIAL),
        (Stop.BUDGET, REFUSAL[:-1], None, Verdict.PARTIAL),
        (Stop.BUDGET, b'{"a":' * 2000, None, Verdict.PARTIAL),
        (Stop.BUDGET, b'{"error_code": "busy"}', None, Verdict.PARTIAL),
        (Stop.CAP, REFUSAL, None, Verdict.PARTIAL),
        (Stop.ERROR, REFUSAL, None, Verdict.FAILED),
    ],
)
def test_judge(stop: Stop, raw: bytes, encoding: str | None, expected: Verdict) -> None:
    verdict, decoded = p.judge(stop, raw, encoding, 64 * 1024)
    assert verdict is expected
    assert (decoded is not None) == (expected is Verdict.REFUSAL)


def test_rebuilt_headers_and_plain_extensions() -> None:
    items = [
        ("Content-Encoding", "gzip"),
        ("transfer-encoding", "chunked"),
        ("Content-Length", "9"),
        ("X-A", "1"),
        ("content-type", "application/json"),
    ]
    assert p.rebuilt_headers(items) == [("X-A", "1"), ("content-type", "application/json")]
    ext = {"http_version": b"HTTP/1.1", "reason_phrase": b"x", "network_stream": object(), "get_trailers": lambda: None}
    assert p.plain_extensions(ext) == {"http_version": b"HTTP/1.1", "reason_phrase": b"x"}


@pytest.mark.parametrize("kwargs", [{"retries": -1}, {"jitter": 1.5}, {"backoff_base": -1.0}, {"peek_cap": -1}])
def test_policy_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]
