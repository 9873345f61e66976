"""The streaming multipart reader: any chunking of any body gives back the parts it was made of."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from e2b_local_api.dataplane.multipart import MultipartError, PartData, PartEnd, PartStart, parse_params, read_parts
from hypothesis import given, settings
from hypothesis import strategies as st

from ...fuzz_budget import examples

BOUNDARY = "XyZ123"
# Bytes that look like pieces of a boundary, so a split can fall anywhere inside one.
TRICKY = st.lists(st.sampled_from([b"\r", b"\n", b"-", b"--", b"\r\n--", b"XyZ12", b"a", b"\x00"]), max_size=30).map(
    b"".join
)


def encode(parts: list[tuple[str, bytes]]) -> bytes:
    out = b"preamble\r\n"
    for name, data in parts:
        out += (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'.encode()
            + data
            + b"\r\n"
        )
    return out + f"--{BOUNDARY}--\r\nepilogue".encode()


async def _chunks(body: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    start = 0
    for cut in [*sorted(set(c % (len(body) + 1) for c in cuts)), len(body)]:
        if cut > start:
            yield body[start:cut]
            start = cut


def parse(body: bytes, cuts: list[int]) -> list[tuple[str, bytes]]:
    async def run() -> list[tuple[str, bytes]]:
        parts: list[tuple[str, bytes]] = []
        current = b""
        name = ""
        async for event in read_parts(_chunks(body, cuts), BOUNDARY):
            if isinstance(event, PartStart):
                name, current = event.disposition()["filename"], b""
            elif isinstance(event, PartData):
                current += event.data
            elif isinstance(event, PartEnd):
                parts.append((name, current))
        return parts

    return asyncio.run(run())


@settings(max_examples=examples(200))
@given(
    parts=st.lists(st.tuples(st.sampled_from(["a", "dir/b.txt", "/tmp/c"]), TRICKY), max_size=4),
    cuts=st.lists(st.integers(0, 10_000), max_size=12),
)
def test_any_chunking_gives_the_parts_back(parts: list[tuple[str, bytes]], cuts: list[int]) -> None:
    assert parse(encode(parts), cuts) == parts


def test_a_body_without_its_closing_boundary_is_refused() -> None:
    body = encode([("a", b"data")])
    with pytest.raises(MultipartError):
        parse(body[: body.index(b"--XyZ123--")], [])


def test_disposition_params_unquote() -> None:
    assert parse_params('form-data; name="file"; filename="a \\"q\\".txt"') == (
        "form-data",
        {"name": "file", "filename": 'a "q".txt'},
    )
    assert parse_params("multipart/form-data; boundary=abc") == ("multipart/form-data", {"boundary": "abc"})


@pytest.mark.parametrize("middle", [1, 2, 8, 9, 10])
def test_a_delimiter_split_over_three_chunks_ends_its_part(middle: int) -> None:
    # The part's bytes go out as views of their chunks, each searched on its own: a delimiter
    # spread over a chunk shorter than itself must still be seen whole, and none of it sent as data.
    body = encode([("a", b"x" * 100), ("b", b"y")])
    first = body.index(b"\r\n--" + BOUNDARY.encode(), body.index(b"x"))
    assert parse(body, [first + 1, first + 1 + middle]) == [("a", b"x" * 100), ("b", b"y")]
