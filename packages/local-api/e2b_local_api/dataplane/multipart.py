"""A streaming multipart/form-data reader: parts' headers, then their bytes, in bounded memory.

It holds at most one read chunk plus a boundary's length of a part's body, so
an upload of any size goes to disk as it arrives. Filenames are kept whole
(with their folders), as envd reads them: the SDK names the target path there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

MAX_HEADER_BYTES = 16 * 1024


class MultipartError(Exception):
    """The body is not the multipart/form-data its Content-Type says."""


@dataclass(frozen=True)
class PartStart:
    headers: dict[str, str]  # lower-case names

    def disposition(self) -> dict[str, str]:
        """The Content-Disposition parameters (`name`, `filename`), quoted strings unescaped."""
        return parse_params(self.headers.get("content-disposition", ""))[1]


@dataclass(frozen=True)
class PartData:
    data: bytes | memoryview  # a view of the chunk it came in, most of the time


@dataclass(frozen=True)
class PartEnd:
    pass


Event = PartStart | PartData | PartEnd


def parse_params(value: str) -> tuple[str, dict[str, str]]:
    """`type; a=b; c="d"` → ("type", {"a": "b", "c": "d"}), names lower-cased."""
    head, _, rest = value.partition(";")
    params: dict[str, str] = {}
    i, n = 0, len(rest)
    while i < n:
        while i < n and rest[i] in " \t;":
            i += 1
        eq = rest.find("=", i)
        if eq < 0:
            break
        name = rest[i:eq].strip().lower()
        i = eq + 1
        if i < n and rest[i] == '"':
            i += 1
            chars = []
            while i < n and rest[i] != '"':
                if rest[i] == "\\" and i + 1 < n:
                    i += 1
                chars.append(rest[i])
                i += 1
            i += 1
            params[name] = "".join(chars)
        else:
            end = rest.find(";", i)
            end = n if end < 0 else end
            params[name] = rest[i:end].strip()
            i = end
    return head.strip().lower(), params


async def read_parts(chunks: AsyncIterator[bytes], boundary: str) -> AsyncIterator[Event]:
    """The events of a multipart body: for each part a PartStart, its PartData, a PartEnd."""
    if not boundary or len(boundary) > 200:
        raise MultipartError("the multipart boundary is missing or longer than 200 characters")
    delimiter = b"\r\n--" + boundary.encode("latin-1")
    buf = b"\r\n"  # so the first boundary looks like every later one
    state = "preamble"
    source = chunks.__aiter__()
    exhausted = False

    async def more() -> bool:
        nonlocal buf, exhausted
        if exhausted:
            return False
        try:
            buf += await source.__anext__()
        except StopAsyncIteration:
            exhausted = True
            return False
        return True

    keep = len(delimiter) - 1  # a delimiter may begin in the last `keep` bytes read
    while True:
        if state == "preamble":
            at = buf.find(delimiter)
            if at < 0:
                if len(buf) > MAX_HEADER_BYTES:
                    buf = buf[-keep:]
                if not await more():
                    raise MultipartError("the multipart body ended before its closing boundary")
                continue
            buf = buf[at + len(delimiter) :]
            state = "after-boundary"
        if state == "body":
            # A part's bytes go out as views of the chunks they came in (a 100 MiB part is not
            # copied twice over): each chunk is searched on its own, and the seam it makes with
            # the last `keep` bytes before it separately.
            at = buf.find(delimiter)
            while at < 0:
                if len(buf) > keep:
                    yield PartData(memoryview(buf)[:-keep])
                    buf = buf[-keep:]
                try:
                    chunk = await source.__anext__()
                except StopAsyncIteration:
                    raise MultipartError("the multipart body ended before its closing boundary") from None
                if len(chunk) <= keep:  # too short to hold a seam: joined to the few bytes held
                    buf += chunk
                    at = buf.find(delimiter)
                    continue
                # At most `keep` bytes are held: a delimiter that begins there ends in the seam.
                at = (buf + chunk[:keep]).find(delimiter)
                if at >= 0:  # it begins in what came before: the part ends in the seam
                    buf += chunk
                    break
                if buf:
                    yield PartData(buf)
                buf = chunk
                at = buf.find(delimiter)
            if at:
                yield PartData(memoryview(buf)[:at])
            yield PartEnd()
            buf = buf[at + len(delimiter) :]
            state = "after-boundary"
        if state == "after-boundary":
            while len(buf) < 2:
                if not await more():
                    raise MultipartError("the multipart body ended inside a boundary")
            if buf.startswith(b"--"):
                return  # the closing boundary; what follows is an epilogue
            end = buf.find(b"\r\n")
            while end < 0:
                if len(buf) > 1024 or not await more():
                    raise MultipartError("a multipart boundary line does not end")
                end = buf.find(b"\r\n")
            if buf[:end].strip(b" \t"):
                raise MultipartError("text after a multipart boundary")
            buf = buf[end + 2 :]
            state = "headers"
        if state == "headers":
            end = buf.find(b"\r\n\r\n")
            while end < 0 and not buf.startswith(b"\r\n"):
                if len(buf) > MAX_HEADER_BYTES:
                    raise MultipartError(f"a part's headers are longer than {MAX_HEADER_BYTES} bytes")
                if not await more():
                    raise MultipartError("the multipart body ended inside a part's headers")
                end = buf.find(b"\r\n\r\n")
            if buf.startswith(b"\r\n"):
                raw, buf = b"", buf[2:]
            else:
                raw, buf = buf[:end], buf[end + 4 :]
            headers = {}
            for line in raw.decode("utf-8", "replace").split("\r\n"):
                name, colon, value = line.partition(":")
                if colon:
                    headers[name.strip().lower()] = value.strip()
            yield PartStart(headers)
            state = "body"
