"""`sbx.files`: read, write, list, stat, move and remove files in the sandbox.

File contents go over envd's HTTP API (`/files`), streamed both ways: a
download as `format="stream"` and an upload from a file object or an
iterable are never held whole. Everything else is a Connect call. A missing
path raises `FileNotFoundException`. `watch_dir` differs by flavour:
it comes from the hand-written `watch_handle` of e2b/sandbox/_flavour_*/.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable, AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import IO, Any, Literal, overload

import httpx
from connectrpc.code import Code

from e2b._exceptions import FileNotFoundException, InvalidArgumentException, TemplateException
from e2b.envd.filesystem import filesystem_pb
from e2b.sandbox import arguments, envd_errors, versions
from e2b.sandbox._flavour_async import steps as _flavour
from e2b.sandbox._flavour_async.watch_handle import AsyncWatching
from e2b.sandbox.envd_endpoint import FILES_ROUTE
from e2b.sandbox.filesystem.filesystem import (
    EntryInfo,
    WriteEntry,
    WriteInfo,
    entry_info,
    file_chunks,
    file_type,
    is_file_like,
    metadata_headers,
    unsupported,
    whole_body,
    write_infos,
)
from e2b.sandbox_async.envd_client import EnvdClient

__all__ = ["AsyncFileStreamReader", "Filesystem"]

AsyncWriteData = str | bytes | IO[Any] | AsyncIterable[bytes]


class AsyncFileStreamReader:
    """A file's content as it downloads, in chunks of bytes; close it (or use `async with`) when done early."""

    def __init__(
        self,
        response: httpx.Response,
        idle_timeout: float | None = None,
        envd: EnvdClient | None = None,
    ) -> None:
        """`envd`: says which SDK exception a download cut short is (the sandbox paused or killed, say)."""
        self._response = response
        self._chunks = response.aiter_bytes()
        self._idle_timeout = idle_timeout
        self._envd = envd

    def __aiter__(self) -> AsyncFileStreamReader:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await _flavour.bounded(self._chunks.__anext__, self._idle_timeout, "the file's download stalled")
        except httpx.TransportError as error:
            await self.aclose()
            if self._envd is None:
                raise
            raise await self._envd.http_failure(error) from None
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        await self._response.aclose()

    async def __aenter__(self) -> AsyncFileStreamReader:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()


async def _whole_content(response: httpx.Response) -> bytearray:
    """The whole (decoded) body, each chunk copied once into the bytearray `read` returns.

    `response.aread()` joins the chunks into bytes, which `bytearray()` then copies again:
    for a 100 MiB file that is a second 100 MiB copy, and as many fresh pages to fault in.
    """
    content = bytearray()
    async for chunk in response.aiter_bytes():
        content += chunk
    return content


async def _upload_chunks(data: object, gzip: bool, refused: list[Exception]) -> AsyncIterator[bytes]:
    """A streamed upload's body: a file object's chunks or an iterable's, gzip-compressed as they go if asked.

    A chunk that is not bytes ends the upload, and so does the producer's own exception (a generator
    that raises, a file whose read fails); the transport reports either as a failed request (one that
    blames the sandbox), so the exception is kept in `refused` for the caller to raise instead.
    """
    compressor = zlib.compressobj(wbits=31) if gzip else None
    async for chunk in _source_chunks(data, refused):
        out = compressor.compress(chunk) if compressor is not None else chunk
        if out:
            yield out
    if compressor is not None:
        yield compressor.flush()


async def _source_chunks(data: object, refused: list[Exception]) -> AsyncIterator[bytes]:
    try:
        if is_file_like(data):
            for chunk in file_chunks(data):  # type: ignore[arg-type]
                yield chunk
        elif isinstance(data, AsyncIterable):
            async for chunk in data:
                if not isinstance(chunk, bytes | bytearray | memoryview):
                    raise InvalidArgumentException(f"data must yield bytes chunks (got a {type(chunk).__name__})")
                yield bytes(chunk)
    except Exception as error:
        refused.append(error)
        raise


class Filesystem(AsyncWatching):
    """The sandbox's files and folders, as the user a call names (default: the sandbox's)."""

    def __init__(self, envd: EnvdClient) -> None:
        self._envd = envd

    def _files_params(self, path: str | None, user: str | None) -> dict[str, str]:
        params = {} if path is None else {"path": path}
        username = self._envd.endpoint.user(user)
        if username:
            params["username"] = username
        return params

    async def _failed(self, response: httpx.Response) -> BaseException:
        await response.aread()
        return envd_errors.http_exception(response.status_code, response.content, not_found=FileNotFoundException)

    @overload
    async def read(
        self,
        path: str,
        format: Literal["text"] = "text",
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        stream_idle_timeout: float | None = None,
    ) -> str: ...

    @overload
    async def read(
        self,
        path: str,
        format: Literal["bytes"],
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        stream_idle_timeout: float | None = None,
    ) -> bytearray: ...

    @overload
    async def read(
        self,
        path: str,
        format: Literal["stream"],
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        stream_idle_timeout: float | None = None,
    ) -> AsyncFileStreamReader: ...

    async def read(
        self,
        path: str,
        format: Literal["text", "bytes", "stream"] = "text",
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        stream_idle_timeout: float | None = None,
    ) -> str | bytearray | AsyncFileStreamReader:
        """The file at `path`: as text (UTF-8, undecodable bytes replaced), bytes, or a stream of chunks.

        Args:
            gzip: ask envd to compress the transfer (the SDK decompresses it).
            request_timeout: for text and bytes, the whole transfer; for a stream, the whole
                transfer when given, else no limit.
            stream_idle_timeout: for a stream, the longest wait for its next chunk (None or 0: no limit).
        """
        path = arguments.path("path", path)
        if format not in ("text", "bytes", "stream"):
            raise InvalidArgumentException(f"format must be 'text', 'bytes' or 'stream' (got {format!r})")
        user = arguments.optional_text("user", user)
        timeout = self._envd.request_timeout(request_timeout)
        idle = arguments.stream_timeout("stream_idle_timeout", stream_idle_timeout)
        headers = {"Accept-Encoding": "gzip"} if gzip else {"Accept-Encoding": "identity"}
        client = self._envd.http
        request = client.build_request(
            "GET",
            FILES_ROUTE,
            params=self._files_params(path, user),
            headers=headers,
            timeout=None if format == "stream" and request_timeout is None else timeout,
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as error:
            raise await self._envd.http_failure(error) from None
        if response.status_code != 200:
            raise await self._failed(response)
        if format == "stream":
            return AsyncFileStreamReader(response, idle, self._envd)
        try:
            content = await _whole_content(response)
        except httpx.TransportError as error:
            raise await self._envd.http_failure(error) from None
        finally:
            await response.aclose()
        if format == "bytes":
            return content
        return content.decode("utf-8", "replace")

    async def write(
        self,
        path: str,
        data: AsyncWriteData,
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        use_octet_stream: bool | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> WriteInfo:
        """Write `data` to `path`, creating its folders; replaces a file that is there.

        `data` is a str (UTF-8), bytes, a file object or an iterable of bytes (an async
        one in the async flavour); the last two stream. `metadata` is stored with the file (envd 0.6.2+).
        """
        written = await self.write_files(
            [WriteEntry(path=path, data=data)], user, request_timeout, gzip, use_octet_stream, metadata
        )
        return written[0]

    async def write_files(
        self,
        files: Sequence[WriteEntry],
        user: str | None = None,
        request_timeout: float | None = None,
        gzip: bool = False,
        use_octet_stream: bool | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[WriteInfo]:
        """Write several files, one request each (as octet-stream), or one multipart request for an old envd."""
        if isinstance(files, str | bytes) or not isinstance(files, Sequence):
            raise InvalidArgumentException("files must be a list of WriteEntry(path=..., data=...)")
        entries = []
        for index, entry in enumerate(files):
            if not isinstance(entry, Mapping) or "path" not in entry or "data" not in entry:
                raise InvalidArgumentException(f"files[{index}] must be a WriteEntry(path=..., data=...)")
            entries.append((arguments.path(f"files[{index}].path", entry["path"]), entry["data"]))
        user = arguments.optional_text("user", user)
        extra = metadata_headers(metadata)
        version = self._envd.endpoint.version
        if extra and version < versions.ENVD_FILE_METADATA:
            raise TemplateException(
                f"file metadata needs envd {versions.shown(versions.ENVD_FILE_METADATA)} or later: rebuild the template"
            )
        if gzip and use_octet_stream is False:
            raise InvalidArgumentException("gzip=True sends the file as octet-stream: not with use_octet_stream=False")
        octet = use_octet_stream is not False and version >= versions.ENVD_OCTET_STREAM_UPLOAD
        results: list[WriteInfo] = []
        if octet:
            for path, data in entries:
                results.extend(await self._upload(path, data, user, request_timeout, gzip, extra))
        elif entries:
            results.extend(await self._multipart(entries, user, request_timeout, extra))
        return results

    async def _upload(
        self,
        path: str,
        data: object,
        user: str | None,
        request_timeout: float | None,
        gzip: bool,
        extra: dict[str, str],
    ) -> list[WriteInfo]:
        body = whole_body(data, gzip)
        streamed = body is None
        if streamed and not is_file_like(data) and not isinstance(data, AsyncIterable):
            raise unsupported(data, path)
        headers = {"Content-Type": "application/octet-stream", **extra}
        if gzip:
            headers["Content-Encoding"] = "gzip"
        refused: list[Exception] = []
        content: Any = _upload_chunks(data, gzip, refused) if streamed else body
        try:
            return await self._post(
                content=content,
                params=self._files_params(path, user),
                headers=headers,
                # A streamed upload takes as long as its producer: no deadline but the server's.
                timeout=None if streamed else self._envd.request_timeout(request_timeout),
            )
        except Exception:
            if refused:
                raise refused[0] from None
            raise

    async def _multipart(
        self, entries: list[tuple[str, object]], user: str | None, request_timeout: float | None, extra: dict[str, str]
    ) -> list[WriteInfo]:
        parts = []
        for path, data in entries:
            body = whole_body(data, False)
            if body is None and is_file_like(data):
                body = b"".join(file_chunks(data))  # type: ignore[arg-type]
            if body is None:
                raise TemplateException(
                    f"streaming {path!r} from an iterable needs envd "
                    f"{versions.shown(versions.ENVD_OCTET_STREAM_UPLOAD)} or later (octet-stream uploads)"
                )
            parts.append(("file", (path, body)))
        params = self._files_params(entries[0][0] if len(entries) == 1 else None, user)
        return await self._post(
            files=parts, params=params, headers=extra, timeout=self._envd.request_timeout(request_timeout)
        )

    async def _post(
        self, *, params: dict[str, str], headers: dict[str, str], timeout: float | None, **body: Any
    ) -> list[WriteInfo]:
        client = self._envd.http
        try:
            response = await client.post(FILES_ROUTE, params=params, headers=headers, timeout=timeout, **body)
        except httpx.TransportError as error:
            raise await self._envd.http_failure(error) from None
        if response.status_code != 200:
            raise await self._failed(response)
        try:
            payload = response.json()
        except ValueError:
            payload = None
        return write_infos(payload)

    async def list(
        self, path: str, depth: int | None = 1, user: str | None = None, request_timeout: float | None = None
    ) -> list[EntryInfo]:
        """The entries in the folder `path`, down to `depth` levels (1: its own entries)."""
        request = filesystem_pb.ListDirRequest(path=arguments.path("path", path), depth=arguments.depth(depth))
        response = await self._envd.unary(
            self._envd.filesystem.list_dir,
            request,
            headers=self._envd.headers(arguments.optional_text("user", user), user_given=True),
            request_timeout=request_timeout,
            idempotent=True,
            not_found=FileNotFoundException,
        )
        return [entry_info(entry) for entry in response.entries if file_type(entry.type) is not None]

    async def exists(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        """Whether a file or folder is at `path`."""
        answer: object = await self._envd.unary(
            self._envd.filesystem.stat,
            filesystem_pb.StatRequest(path=arguments.path("path", path)),
            headers=self._envd.headers(arguments.optional_text("user", user), user_given=True),
            request_timeout=request_timeout,
            idempotent=True,
            answers={Code.NOT_FOUND: False},
        )
        return answer is not False

    async def get_info(self, path: str, user: str | None = None, request_timeout: float | None = None) -> EntryInfo:
        """What is at `path`; `FileNotFoundException` when nothing is."""
        response = await self._envd.unary(
            self._envd.filesystem.stat,
            filesystem_pb.StatRequest(path=arguments.path("path", path)),
            headers=self._envd.headers(arguments.optional_text("user", user), user_given=True),
            request_timeout=request_timeout,
            idempotent=True,
            not_found=FileNotFoundException,
        )
        return entry_info(response.entry)

    async def remove(self, path: str, user: str | None = None, request_timeout: float | None = None) -> None:
        """Remove the file or folder (with its content) at `path`."""
        await self._envd.unary(
            self._envd.filesystem.remove,
            filesystem_pb.RemoveRequest(path=arguments.path("path", path)),
            headers=self._envd.headers(arguments.optional_text("user", user), user_given=True),
            request_timeout=request_timeout,
            idempotent=False,
            not_found=FileNotFoundException,
        )

    async def rename(
        self, old_path: str, new_path: str, user: str | None = None, request_timeout: float | None = None
    ) -> EntryInfo:
        """Move `old_path` to `new_path`; the entry as it is afterwards."""
        request = filesystem_pb.MoveRequest(
            source=arguments.path("old_path", old_path), destination=arguments.path("new_path", new_path)
        )
        response = await self._envd.unary(
            self._envd.filesystem.move,
            request,
            headers=self._envd.headers(arguments.optional_text("user", user), user_given=True),
            request_timeout=request_timeout,
            idempotent=False,
            not_found=FileNotFoundException,
        )
        return entry_info(response.entry)

    async def make_dir(self, path: str, user: str | None = None, request_timeout: float | None = None) -> bool:
        """Create the folder `path` and its parents; False when it was already there."""
        answer: object = await self._envd.unary(
            self._envd.filesystem.make_dir,
            filesystem_pb.MakeDirRequest(path=arguments.path("path", path)),
            headers=self._envd.headers(arguments.optional_text("user", user), user_given=True),
            request_timeout=request_timeout,
            idempotent=False,
            not_found=FileNotFoundException,
            answers={Code.ALREADY_EXISTS: False},
        )
        return answer is not False
