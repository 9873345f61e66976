"""Property tests: the peek's decision on arbitrary bytes, chunkings and media types.

Whatever the server sends, the transport raises nothing but the documented
errors, and the caller reads what the server sent (after content decoding).
"""

from __future__ import annotations

import asyncio
import gzip
import json

import httpx
from e2b._transport import _peek
from e2b._transport._retry_rules import RetryPolicy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ...fuzz_budget import examples
from ._fakes import Harness, Reply

REFUSAL_OBJ = {"code": 503, "message": "m", "error_code": "sandbox_pause_refused"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
bodies = st.one_of(
    st.binary(max_size=300),
    st.just(json.dumps(REFUSAL_OBJ).encode()),
    st.builds(lambda v: json.dumps({"error_code": v}).encode(), json_values),
    st.builds(lambda v: json.dumps(v).encode(), json_values),
    st.builds(lambda n: b"[" * n + b"]" * n, st.integers(0, 4000)),
    st.builds(lambda n: b"x" * n, st.sampled_from([8191, 8192, 8193, 20_000])),
    st.builds(lambda extra: json.dumps(REFUSAL_OBJ).encode() + extra, st.binary(max_size=20)),
)
media_types = st.sampled_from(
    [
        "application/json",
        "APPLICATION/JSON; charset=utf-8",
        "application/problem+json",
        "text/plain",
        "application/jsonl",
        "",
    ]
)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[bytes, bool, list[object], dict[str, str], int]:
    body = draw(bodies)
    gzipped = draw(st.booleans())
    wire = gzip.compress(body) if gzipped else body
    cuts = sorted(draw(st.sets(st.integers(1, max(len(wire) - 1, 1)), max_size=6)))
    pieces = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]
    script: list[object] = []
    for piece in pieces:
        script.append(draw(st.sampled_from([0.0, 0.2, 0.7, 3.0])))
        script.append(piece)
    headers = {"content-type": draw(media_types)}
    if gzipped:
        headers["content-encoding"] = "gzip"
    if draw(st.booleans()):
        headers["content-length"] = str(len(wire))
    return body, gzipped, script, headers, draw(st.integers(0, 2))


def _check(is_async: bool, scenario: tuple[bytes, bool, list[object], dict[str, str], int]) -> None:
    body, _, script, headers, retries = scenario
    h = Harness(is_async, [Reply(body=script, headers=headers)], RetryPolicy(retries=retries))
    transport = h.transport()

    async def run_async() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, timeout=None) as client:  # type: ignore[arg-type]
            return await client.get("http://api.test/")

    def run_sync() -> httpx.Response:
        with httpx.Client(transport=transport, timeout=None) as client:  # type: ignore[arg-type]
            return client.get("http://api.test/")

    response = asyncio.run(run_async()) if is_async else run_sync()
    assert all(s.closes == 1 for s in h.streams)
    # Stalls may cut the first peeks short before the object is complete, so a
    # refusal can be recognised on a later attempt as well as on the first.
    refused = "content-encoding" not in response.headers and _peek.is_refusal_object(_peek.parse_json(response.content))
    if refused and response.content != body:
        # Rebuilt from a budget-cut read: the complete refusal object that had
        # arrived; what had not arrived yet is not waited for.
        assert body.startswith(response.content)
    else:
        assert response.content == body
    fast = all(item == 0.0 for item in script if isinstance(item, float))
    json_refusal = _peek.is_refusal_object(_peek.parse_json(body)) and _peek.is_json_media_type(headers["content-type"])
    if fast:
        # Read in time: a small JSON refusal is never retried, anything else is, every time.
        assert len(h.requests) == (1 if json_refusal else retries + 1)
        assert refused or not json_refusal  # a refusal comes back rebuilt from its decoded body
    elif len(h.requests) != retries + 1:
        # Stalls cut the peek short: only a refusal (read whole in time, or a
        # complete refusal object when the budget ran out) may end the retries early.
        assert refused


PROFILE = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROFILE
@given(scenarios())
def test_sync_peek_decision(scenario: tuple[bytes, bool, list[object], dict[str, str], int]) -> None:
    _check(False, scenario)


@PROFILE
@given(scenarios())
def test_async_peek_decision(scenario: tuple[bytes, bool, list[object], dict[str, str], int]) -> None:
    _check(True, scenario)


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=10_000), st.sampled_from([None, "gzip", "deflate", "br"]), st.sampled_from(list(_peek.Stop)))
def test_refusal_body_never_raises(raw: bytes, encoding: str | None, stop: _peek.Stop) -> None:
    decoded = _peek.refusal_body(stop, raw, encoding, 64 * 1024)
    if decoded is not None:
        value = _peek.parse_json(decoded) if stop is _peek.Stop.EOF else _peek.parse_leading_object(decoded)
        assert _peek.is_refusal_object(value)
