"""The 503 peek: whether a busy response's body is read, and what it says.

A 503 that refuses a sandbox pause must reach the caller at once, so a small
JSON 503 body is read (within a byte cap and a time budget) before deciding
to retry. This module holds what is decided about those bytes, free of I/O:
whether to peek, how long, when to stop reading, whether what was read is a
refusal, and the response rebuilt from it for the caller.
"""

from __future__ import annotations

import enum
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from e2b._exceptions import is_json_media_type as is_json_media_type  # one definition; the peek asks it too
from e2b._transport._retry_rules import RetryPolicy
from e2b.api.error_codes import SANDBOX_PAUSE_REFUSED_ERROR_CODE

PEEK_STATUS = 503

# Headers that describe the wire encoding of a body; they are wrong for a
# body rebuilt from decoded bytes.
_WIRE_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})
_PLAIN_EXTENSION_TYPES = (bytes, str, int, float, bool, type(None))


class BudgetSpent(Exception):
    """A peek's read outlasted the peek's budget; the read stays pending, the peek stops."""


def peek_budget(policy: RetryPolicy, delay: float, now: float, deadline: float | None) -> float:
    """Wall-clock seconds the peek may spend: min(max(delay, floor), time left)."""
    budget = max(delay, policy.min_peek_budget)
    if deadline is not None:
        budget = min(budget, deadline - now)
    return max(budget, 0.0)


def declared_length(content_length: str | None) -> int | None:
    if content_length is None:
        return None
    try:
        # Duplicate Content-Length headers arrive comma-joined.
        values = {int(v.strip()) for v in content_length.split(",")}
    except ValueError:
        return None
    if len(values) != 1:
        return None
    (value,) = values
    return value if value >= 0 else None


def should_peek(
    status: int,
    content_type: str | None,
    content_length: str | None,
    cap: int,
) -> bool:
    """Only a small JSON 503 can be a refusal, so only it is read."""
    if status != PEEK_STATUS or not is_json_media_type(content_type):
        return False
    declared = declared_length(content_length)
    return declared is None or declared <= cap


def decode_bounded(raw: bytes, content_encoding: str | None, limit: int, *, complete: bool) -> bytes | None:
    """Undo a gzip/deflate body without producing more than ``limit`` bytes.

    None means "cannot tell": an unsupported or stacked encoding, corrupt
    data, output over the limit, or (for a complete body) a truncated stream.
    """
    codings = [
        c.strip().lower() for c in (content_encoding or "").split(",") if c.strip() and c.strip().lower() != "identity"
    ]
    if not codings:
        return raw if len(raw) <= limit else None
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        return None
    wbits_options = [zlib.MAX_WBITS | 16] if codings[0] != "deflate" else [zlib.MAX_WBITS, -zlib.MAX_WBITS]
    for wbits in wbits_options:
        decoder = zlib.decompressobj(wbits)
        try:
            out = decoder.decompress(raw, limit + 1)
        except zlib.error:
            continue
        if len(out) > limit:
            return None
        if complete and not decoder.eof:
            return None
        return out
    return None


def is_refusal_object(value: object) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("error_code"), str)
        and value["error_code"] == SANDBOX_PAUSE_REFUSED_ERROR_CODE
    )


def parse_json(body: bytes) -> object:
    """Parse a whole body; anything unparseable (deep nesting too) is None."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def parse_leading_object(body: bytes) -> object:
    """A complete JSON object at the start of a cut-off body, else None.

    Only whitespace may follow it: anything else means the server was still
    sending the value when the budget ran out.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(stripped)
    except (ValueError, RecursionError):
        return None
    if stripped[end:].strip():
        return None
    return value


class Stop(enum.Enum):
    """Why a peek stopped reading."""

    EOF = "eof"
    CAP = "cap"
    BUDGET = "budget"
    ERROR = "error"


def refusal_body(stop: Stop, raw: bytes, content_encoding: str | None, decoded_cap: int) -> bytes | None:
    """The decoded body when what a peek read is a pause refusal, else None.

    A body cut off by the cap is never one (a refusal is small); one cut off
    by the budget is when a whole refusal object leads it.
    """
    if stop is Stop.ERROR or stop is Stop.CAP:
        return None
    complete = stop is Stop.EOF
    decoded = decode_bounded(raw, content_encoding, decoded_cap, complete=complete)
    if decoded is None:
        return None
    value = parse_json(decoded) if complete else parse_leading_object(decoded)
    return decoded if is_refusal_object(value) else None


@dataclass
class PeekState:
    """The bytes a peek has read and why it stopped; I/O loops feed it."""

    cap: int
    budget_end: float
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    stop: Stop | None = None
    error: Exception | None = None

    def wants_more(self, now: float) -> bool:
        # Checked before each wait; the wait itself ends with the budget
        # (`peek_read_bound`), so a chunk that arrives inside it is kept.
        if self.stop is not None:
            return False
        if self.size > self.cap:
            self.stop = Stop.CAP
        elif now >= self.budget_end:
            self.stop = Stop.BUDGET
        return self.stop is None

    def add(self, chunk: bytes) -> None:
        if chunk:
            self.chunks.append(chunk)
            self.size += len(chunk)

    def eof(self) -> None:
        self.stop = Stop.EOF

    def out_of_budget(self) -> None:
        self.stop = Stop.BUDGET

    def fail(self, error: Exception) -> None:
        self.stop = Stop.ERROR
        self.error = error

    @property
    def raw(self) -> bytes:
        return b"".join(self.chunks)


def rebuilt_headers(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in items if k.lower() not in _WIRE_HEADERS]


def plain_extensions(extensions: Mapping[str, object]) -> dict[str, object]:
    """Extensions safe to outlive the inner response (no streams, callbacks)."""
    return {k: v for k, v in extensions.items() if isinstance(v, _PLAIN_EXTENSION_TYPES)}


def refusal_response(response: httpx.Response, request: httpx.Request, decoded: bytes) -> httpx.Response:
    """The refusal as plain bytes; the stream must stay unread for the caller."""
    return httpx.Response(
        status_code=response.status_code,
        headers=rebuilt_headers(response.headers.multi_items()),
        stream=httpx.ByteStream(decoded),
        extensions=plain_extensions(response.extensions),
        request=request,
    )


def replayed_response(
    response: httpx.Response,
    request: httpx.Request,
    stream: httpx.SyncByteStream | httpx.AsyncByteStream,
) -> httpx.Response:
    """The same response with a stream that replays what the peek consumed."""
    return httpx.Response(
        status_code=response.status_code,
        headers=response.headers,
        stream=stream,
        extensions=dict(response.extensions),
        request=request,
    )
