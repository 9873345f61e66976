"""Unit tests for the sync and async transports (``_sync`` and ``_async``).

Every case runs through both flavours with a fake clock and fake sleep; the
inner transport is ``httpx.MockTransport`` serving scripted streams.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from e2b._transport import AsyncRetryableTransport, RetryableTransport, RetryPolicy

from ._fakes import BUSY, JSON, NO_CODE, REFUSAL, STALL, AsyncScripted, Harness, Reply

pytestmark = pytest.mark.anyio

OK = Reply(status=200, body=(b"ok",), headers={"content-type": "text/plain"})


@pytest.fixture(params=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "async")


def harness(is_async: bool, *replies: Reply, **policy: object) -> Harness:
    policy.setdefault("retries", 3)
    return Harness(is_async, list(replies), RetryPolicy(**policy))  # type: ignore[arg-type]


def chunked(body: bytes, size: int) -> list[object]:
    return [body[i : i + size] for i in range(0, len(body), size)]


async def test_refusal_answered_after_one_request_with_body_intact(is_async: bool) -> None:
    h = harness(is_async, Reply(body=chunked(REFUSAL, 7)), OK)
    response, body = await h.send()
    assert response.status_code == 503
    assert body == REFUSAL
    assert json.loads(body)["error_code"] == "sandbox_pause_refused"
    assert len(h.requests) == 1
    assert h.time.sleeps == []
    assert h.closes() == [1]
    assert response.request is h.requests[0]  # the refusal answers the request that was sent


async def test_refusal_rebuilt_without_wire_headers(is_async: bool) -> None:
    headers = {**JSON, "content-encoding": "gzip", "x-trace": "t1"}
    h = harness(is_async, Reply(body=(gzip.compress(REFUSAL),), headers=headers))
    response, body = await h.send()
    assert body == REFUSAL  # decoded once, by the peek
    assert "content-encoding" not in response.headers
    assert "content-length" not in response.headers
    assert response.headers["x-trace"] == "t1"
    assert len(h.requests) == 1


async def test_busy_503_with_other_code_is_retried(is_async: bool) -> None:
    h = harness(is_async, Reply(body=(BUSY,)), Reply(body=(BUSY,)), OK)
    response, body = await h.send()
    assert (response.status_code, body) == (200, b"ok")
    assert len(h.requests) == 3
    assert h.time.sleeps == [0.5, 1.0]
    assert h.closes() == [1, 1, 1]


async def test_each_retry_is_announced_once_with_its_data(is_async: bool, caplog: pytest.LogCaptureFixture) -> None:
    h = harness(is_async, Reply(body=(BUSY,)), Reply(status=429, body=(b"slow down",)), OK)
    with caplog.at_level(logging.INFO, logger="e2b.retries"):
        await h.send()
    records = [r for r in caplog.records if r.name == "e2b.retries"]
    assert [r.getMessage() for r in records] == [
        "busy (503), retrying in 0.5 s (1/3)",
        "rate limited (429), retrying in 1.0 s (2/3)",
    ]
    data = [(r.status_code, r.retry_in, r.attempt, r.retries, r.method) for r in records]  # type: ignore[attr-defined]
    assert data == [(503, 0.5, 1, 3, "POST"), (429, 1.0, 2, 3, "POST")]
    assert all(r.levelno == logging.INFO for r in records)


async def test_refusal_and_last_answer_are_not_announced(is_async: bool, caplog: pytest.LogCaptureFixture) -> None:
    h = harness(is_async, Reply(body=(REFUSAL,)), retries=0)
    with caplog.at_level(logging.INFO, logger="e2b.retries"):
        await h.send()
    h = harness(is_async, Reply(body=(BUSY,)), retries=0)
    with caplog.at_level(logging.INFO, logger="e2b.retries"):
        await h.send()
    assert [r for r in caplog.records if r.name == "e2b.retries"] == []


async def test_503_without_code_retried_then_returned_whole(is_async: bool) -> None:
    h = harness(is_async, Reply(body=chunked(NO_CODE, 5)))
    response, body = await h.send()
    assert response.status_code == 503
    assert body == NO_CODE
    assert len(h.requests) == 4
    assert h.time.sleeps == [0.5, 1.0, 2.0]
    assert h.closes() == [1, 1, 1, 1]


@pytest.mark.parametrize(
    "script",
    [
        pytest.param([b'{"a":', 2.0, b"1", 9.0, b"}"], id="stalled"),
        pytest.param([b'{"a":'] + [0.3, b" "] * 20 + [b"}"], id="trickling"),
    ],
)
async def test_slow_body_retried_after_the_delay_with_reader_closed(is_async: bool, script: list[object]) -> None:
    h = harness(is_async, Reply(body=script), OK, backoff_base=2.0)
    start = h.time.now
    response, _ = await h.send()
    assert response.status_code == 200
    assert len(h.requests) == 2
    first = h.streams[0]
    assert first.closes == 1
    assert first.yielded < len([i for i in script if isinstance(i, bytes)])
    # The peek's time is part of the 2 s backoff, never added to it.
    assert h.time.sleeps[0] < 2.0
    assert h.time.now - start >= 2.0


async def test_refusal_arriving_inside_budget_short_circuits(is_async: bool) -> None:
    head, tail = REFUSAL[:20], REFUSAL[20:]
    h = harness(is_async, Reply(body=[head, 0.9, tail[:5], 5.0, tail[5:]]), OK)
    _response, body = await h.send()
    # The last chunk's wait began inside the 1 s budget, so it still counts.
    assert body == REFUSAL
    assert len(h.requests) == 1


@pytest.mark.parametrize("declared", [True, False])
async def test_oversized_body_is_a_plain_503_handed_on_whole(is_async: bool, declared: bool) -> None:
    big = json.dumps({"error_code": "sandbox_pause_refused", "pad": "x" * 20_000}).encode()
    headers = {**JSON, "content-length": str(len(big))} if declared else dict(JSON)
    h = harness(is_async, Reply(body=chunked(big, 4096), headers=headers), retries=1)
    response, body = await h.send()
    assert response.status_code == 503
    assert body == big
    assert len(h.requests) == 2
    assert h.closes() == [1, 1]
    if not declared:
        assert h.streams[0].yielded == 3  # stopped just past the 8 KiB cap


async def test_cut_off_complete_refusal_is_returned(is_async: bool) -> None:
    h = harness(is_async, Reply(body=[REFUSAL, 2.0, b" ", 30.0, b"\n"]), OK)
    _response, body = await h.send()
    assert body == REFUSAL + b" "
    assert len(h.requests) == 1
    assert h.closes() == [1]


async def test_cut_off_complete_other_error_follows_normal_path(is_async: bool) -> None:
    h = harness(is_async, Reply(body=[BUSY, 2.0, b" ", 3.0, b"\n"]), retries=1)
    _response, body = await h.send()
    assert body == BUSY + b" \n"
    assert len(h.requests) == 2


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b'[{"error_code": "sandbox_pause_refused"}]', id="list"),
        pytest.param(b'"sandbox_pause_refused"', id="scalar"),
        pytest.param(b'{"error_code": 1}', id="int-code"),
        pytest.param(b'{"error_code": ["sandbox_pause_refused"]}', id="list-code"),
        pytest.param(b'{"error_code": "sandbox_pause_refused"', id="truncated"),
        pytest.param(b"[" * 4000 + b"]" * 4000, id="deep-list"),
        pytest.param(b'{"a":' * 1500 + b"1" + b"}" * 1500, id="deep-object"),
        pytest.param(b"\xff\xfe{", id="garbage"),
    ],
)
async def test_not_a_refusal(is_async: bool, payload: bytes) -> None:
    h = harness(is_async, Reply(body=chunked(payload, 1000)), retries=2)
    _response, body = await h.send()
    assert body == payload
    assert len(h.requests) == 3


async def test_failed_read_retried_then_reraised(is_async: bool) -> None:
    h = harness(is_async, Reply(body=[b'{"a"', httpx.ReadError("reset")]), retries=1)
    with pytest.raises(httpx.ReadError, match="reset"):
        await h.send()
    assert len(h.requests) == 2
    assert h.closes() == [1, 1]


async def test_gzip_bomb_not_decoded_past_bound(is_async: bool) -> None:
    bomb = gzip.compress(b"{" + b" " * 8_000_000 + b"}", 9)
    assert len(bomb) <= 8192
    headers = {**JSON, "content-encoding": "gzip"}
    h = harness(is_async, Reply(body=(bomb,), headers=headers), retries=1)
    response, body = await h.send()
    assert body == bomb  # raw bytes, as the server sent them
    assert response.headers["content-encoding"] == "gzip"
    assert len(h.requests) == 2


async def test_retry_after_honoured(is_async: bool) -> None:
    busy = Reply(body=(BUSY,), headers={**JSON, "retry-after": "3"})
    h = harness(is_async, busy, OK)
    response, _ = await h.send()
    assert response.status_code == 200
    assert h.time.sleeps == [3.0]


async def test_retry_after_beyond_limit_ends_retries(is_async: bool) -> None:
    busy = Reply(body=(BUSY,), headers={**JSON, "retry-after": "3600"})
    h = harness(is_async, busy, OK)
    response, body = await h.send()
    assert (response.status_code, body) == (503, BUSY)
    assert len(h.requests) == 1


async def test_should_retry_false_returns_busy_at_once(is_async: bool) -> None:
    h = harness(is_async, Reply(body=(BUSY,), headers={**JSON, "should-retry": "false"}), OK)
    response, body = await h.send()
    assert (response.status_code, body, len(h.requests)) == (503, BUSY, 1)


async def test_should_retry_true_retries_other_status(is_async: bool) -> None:
    h = harness(is_async, Reply(status=500, body=(b"x",), headers={"should-retry": "true"}), OK)
    response, _ = await h.send()
    assert response.status_code == 200
    assert len(h.requests) == 2


@pytest.mark.parametrize("status", [429, 502, 504])
async def test_other_busy_statuses_retried_without_peek(is_async: bool, status: int) -> None:
    h = harness(is_async, Reply(status=status, body=(REFUSAL,)), OK)
    response, _ = await h.send()
    assert response.status_code == 200
    assert h.streams[0].yielded == 0  # only a 503 body is ever read
    assert h.closes() == [1, 1]


async def test_non_json_503_not_peeked(is_async: bool) -> None:
    h = harness(is_async, Reply(body=(REFUSAL,), headers={"content-type": "text/html"}), retries=0)
    _response, body = await h.send()
    assert body == REFUSAL
    assert h.streams[0].closes == 1


async def test_non_replayable_body_not_retried(is_async: bool) -> None:
    h = harness(is_async, Reply(body=(BUSY,)), OK)
    if is_async:

        async def agen() -> AsyncIterator[bytes]:
            yield b"pay"
            yield b"load"

        response, body = await h.send(content=agen())
    else:

        def gen() -> Iterator[bytes]:
            yield b"pay"
            yield b"load"

        response, body = await h.send(content=gen())
    assert (response.status_code, body) == (503, BUSY)
    assert len(h.requests) == 1
    assert h.requests[0].content == b"payload"


async def test_retry_must_fit_in_the_deadline(is_async: bool) -> None:
    h = harness(is_async, Reply(body=(BUSY,)), OK, backoff_base=5.0)
    response, _ = await h.send(timeout=httpx.Timeout(2.0))
    assert response.status_code == 503  # 5 s backoff > 4 s deadline
    assert len(h.requests) == 1


async def test_handed_on_stream_bounded_by_deadline(is_async: bool) -> None:
    script = [b'{"a":', 1.5, b"1", 1.0, b"2", 1.0, b"}"]
    h = harness(is_async, Reply(body=script), retries=0)
    with pytest.raises(httpx.ReadTimeout):
        await h.send(timeout=httpx.Timeout(1.0))
    assert h.closes() == [1]


async def test_mid_peek_interruption_closes_inner(is_async: bool) -> None:
    if not is_async:
        h = harness(is_async, Reply(body=[b'{"code":', KeyboardInterrupt()]))
        with pytest.raises(KeyboardInterrupt):
            await h.send()
        assert h.closes() == [1]
        return
    h = harness(is_async, Reply(body=[b'{"code":', STALL]))
    task = asyncio.ensure_future(h.send())
    while not h.streams or h.streams[0].yielded == 0:
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert h.closes() == [1]


class _SlowClose(AsyncScripted):
    async def aclose(self) -> None:
        await asyncio.sleep(0.05)
        self.closes += 1


async def test_second_cancellation_while_closing_still_closes() -> None:
    h = harness(True, Reply(body=[b'{"code":', STALL]))
    slow = _SlowClose([b'{"code":', STALL], h.time)

    async def handler(request: httpx.Request) -> httpx.Response:
        h.streams.append(slow)
        return httpx.Response(503, headers=JSON, stream=slow)

    transport = AsyncRetryableTransport(httpx.MockTransport(handler), h.policy)
    request = httpx.Request("GET", "http://api.test/")
    task = asyncio.ensure_future(transport.handle_async_request(request))
    while slow.yielded == 0:
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(0.01)  # now inside the shielded close
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.1)
    assert slow.closes == 1


def test_sync_transport_close_closes_inner() -> None:
    closed: list[bool] = []

    class Inner(httpx.MockTransport):
        def close(self) -> None:
            closed.append(True)

    RetryableTransport(Inner(lambda r: httpx.Response(200))).close()
    assert closed == [True]
