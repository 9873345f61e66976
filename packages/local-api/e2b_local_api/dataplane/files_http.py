"""envd's plain HTTP endpoints: `/files` (download, upload), `/health`, `/envs`, `/metrics`.

`files_http_app(lookup)` is an ASGI app; `lookup(headers)` finds the sandbox.
The router checks `X-Access-Token` for `/envs` and `/metrics`, but must let
`GET /files`, `POST /files` and `GET /health` through without it, as envd
does: `/files` checks the token here, or the `v1_` signature of a signed
URL. Bodies stream between the socket and the file, in both directions;
statuses and `{"code", "message"}` bodies are envd's, which the SDK maps.
"""

from __future__ import annotations

import asyncio
import errno
import mimetypes
import os
import stat
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from ..http.asgi import send_json
from ..http.zero_copy import ZERO_COPY_SEND, AnswerAborted
from ..runtime.accounts import Account, Accounts, UnknownUser
from ..runtime.paths import PathError, SandboxRoot, absolute
from .entries import METADATA_PREFIX, read_metadata
from .multipart import MultipartError, PartData, PartEnd, PartStart, parse_params, read_parts
from .resource_usage import metrics_of
from .sandbox_view import ACCESS_TOKEN_HEADER, SANDBOX_ID_HEADER, Lookup, SandboxGone, SandboxView
from .signed_urls import signature_matches, signing_refusal

CHUNK = 1 << 20
# A download goes to the kernel in parts of this size, its sandbox's state looked at before each: a pause
# or a kill drops the connection within a part (envd's own streams end then too).
SEND_PART = 16 << 20
# An upload goes to disk in batches of this size, each a thread hand-over: 1 MiB ones held a 100 MiB
# upload at 0.64x of a local copy's speed, 4 MiB ones at 0.76x.
WRITE_BATCH = 4 << 20
MAX_METADATA_KEY = 255 - len(METADATA_PREFIX)
MAX_METADATA_TOTAL = 4096
_PATH_STATUS = {"invalid_argument": 400, "not_found": 404, "failed_precondition": 400, "unavailable": 502}

Scope = dict[str, Any]


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Request:
    def __init__(self, scope: Scope, receive: Any) -> None:
        self.scope = scope
        self._receive = receive
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        self.query = {k: v[0] for k, v in query.items()}

    async def body(self) -> AsyncIterator[bytes]:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                raise HttpError(400, "the client went away during the upload")
            chunk = message.get("body", b"")
            if chunk:
                yield chunk
            if not message.get("more_body", False):
                return


async def _send_error(send: Any, status: int, message: str) -> None:
    # envd's jsonError: {"code": status, "message": ...}, which the SDK reads as the exception's text.
    extra = [(b"x-content-type-options", b"nosniff")]
    await send_json(send, status, {"code": status, "message": message}, extra)


def check_signing(request: _Request, sandbox: SandboxView, operation: str) -> None:
    refusal = signing_refusal(request.headers.get(ACCESS_TOKEN_HEADER), request.query, sandbox.access_token, operation)
    if refusal is not None:
        raise HttpError(*refusal)


def _user(request: _Request, accounts: Accounts) -> Account:
    name = request.query.get("username") or None
    try:
        return accounts.user(name)
    except UnknownUser as error:
        raise HttpError(401, f"error looking up user '{name}': {error}") from None


def _resolved_path(raw: str, user: Account) -> str:
    try:
        return absolute(raw, user.home)
    except PathError as error:
        raise HttpError(400, f"error resolving path '{raw}': {error}") from None


def _path_error(error: PathError) -> HttpError:
    return HttpError(_PATH_STATUS.get(error.kind, 500), str(error))


# -- Accept-Encoding / Content-Encoding (envd's rules, RFC 7231) -----------------------------


def _codings(header: str) -> list[tuple[str, float]]:
    out = []
    for item in header.split(","):
        name, params = parse_params(item)
        try:
            q = float(params.get("q", "1"))
        except ValueError:
            q = 1.0
        if name:
            out.append((name, q))
    return out


def identity_rejected(accept: str) -> bool:
    """Whether an Accept-Encoding header refuses identity (`identity;q=0`, or `*;q=0` without identity)."""
    codings = _codings(accept)
    if any(n == "identity" and q == 0 for n, q in codings):
        return True
    return any(n == "*" and q == 0 for n, q in codings) and not any(n == "identity" and q > 0 for n, q in codings)


def choose_encoding(accept: str) -> str:
    """`gzip` or `identity` for an Accept-Encoding header; HttpError(406) when neither is acceptable."""
    if not accept.strip():
        return "identity"
    codings = _codings(accept)
    rejected = identity_rejected(accept)
    for name, q in sorted(codings, key=lambda c: -c[1]):
        if q == 0:
            continue
        if name == "identity":
            return "identity"
        if name == "*":
            return "gzip" if rejected else "identity"
        if name == "gzip":
            return "gzip"
    if not rejected:
        return "identity"
    raise HttpError(406, "error parsing Accept-Encoding: no acceptable encoding found, supported: [gzip]")


def _decoded(chunks: AsyncIterator[bytes], encoding: str) -> AsyncIterator[bytes]:
    return chunks if encoding == "identity" else _gunzipped(chunks)


async def _gunzipped(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    inflater = zlib.decompressobj(wbits=31)
    async for chunk in chunks:
        while chunk:
            # Bounded output per step: a small gzip bomb never becomes one big buffer.
            try:
                out = inflater.decompress(chunk, CHUNK)
            except zlib.error as error:
                raise HttpError(400, f"error decompressing request body: not a valid gzip stream ({error})") from None
            if out:
                yield out
            chunk = inflater.unconsumed_tail
            if inflater.eof:
                break
    tail = inflater.flush()
    if tail:
        yield tail
    if not inflater.eof:
        raise HttpError(400, "error decompressing request body: the gzip stream is truncated")


def _content_encoding(request: _Request) -> str:
    header = request.headers.get("content-encoding", "").strip()
    if not header:
        return "identity"
    name = parse_params(header)[0]
    if name in ("identity", "gzip"):
        return name
    raise HttpError(400, f"error decompressing request body: unsupported Content-Encoding: {header}, supported: [gzip]")


def _metadata(request: _Request) -> dict[str, str]:
    metadata: dict[str, str] = {}
    for name, value in request.headers.items():
        if name.startswith("x-metadata-") and len(name) > len("x-metadata-"):
            metadata[name[len("x-metadata-") :]] = value
    total = 0
    for key, value in metadata.items():
        if len(key) > MAX_METADATA_KEY:
            raise HttpError(400, f"invalid metadata: metadata key {key!r} exceeds {MAX_METADATA_KEY} bytes")
        for label, text in (("key", key), (f"value for key {key!r}", value)):
            bad = next((c for c in text if not 0x20 <= ord(c) <= 0x7E), None)
            if bad is not None:
                raise HttpError(
                    400, f"invalid metadata: metadata {label} contains a non-printable-ASCII character {bad!r}"
                )
        total += len(METADATA_PREFIX) + len(key) + len(value)
    if total > MAX_METADATA_TOTAL:
        raise HttpError(400, f"invalid metadata: total metadata size {total} exceeds {MAX_METADATA_TOTAL} bytes")
    return metadata


# -- the handlers ---------------------------------------------------------------------------


class FilesApp:
    """ASGI app for envd's HTTP endpoints over the sandboxes `lookup` finds.

    `signed_candidates`, when given, lists the running sandboxes: a signed
    `/files` URL carries no `E2b-Sandbox-Id` header (a browser or curl fetches
    it as it is), so its sandbox is the one whose token makes the signature.
    """

    def __init__(self, lookup: Lookup, signed_candidates: Callable[[], Iterable[SandboxView]] | None = None) -> None:
        self._lookup = lookup
        self._signed_candidates = signed_candidates
        self._cpu_samples: dict[str, tuple[float, float]] = {}

    def _find(self, request: _Request) -> SandboxView:
        if SANDBOX_ID_HEADER not in request.headers and self._signed_candidates is not None:
            operation = {"GET": "read", "POST": "write"}.get(request.scope["method"])
            if request.scope["path"] == "/files" and operation and "signature" in request.query:
                for candidate in self._signed_candidates():
                    if candidate.access_token and signature_matches(request.query, candidate.access_token, operation):
                        return candidate
                raise HttpError(401, "invalid signature")
        try:
            return self._lookup(request.headers)
        except SandboxGone as gone:
            raise HttpError(502, str(gone)) from None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = _Request(scope, receive)
        route = (scope["method"], scope["path"])
        try:
            sandbox = self._find(request)
            if route == ("GET", "/health"):
                await send({"type": "http.response.start", "status": 204, "headers": [(b"cache-control", b"no-store")]})
                await send({"type": "http.response.body", "body": b""})
            elif route == ("GET", "/envs"):
                await send_json(send, 200, dict(sandbox.env_vars), [(b"cache-control", b"no-store")])
            elif route == ("GET", "/metrics"):
                metrics = await asyncio.to_thread(metrics_of, sandbox, self._cpu_samples)
                await send_json(send, 200, metrics, [(b"cache-control", b"no-store")])
            elif route == ("GET", "/files"):
                await self._download(request, sandbox, send)
            elif route == ("POST", "/files"):
                entries = await self._upload(request, sandbox)
                await send_json(send, 200, entries)
            elif scope["path"] in ("/health", "/envs", "/metrics", "/files"):
                await _send_error(send, 405, f"method {scope['method']} not allowed on {scope['path']}")
            else:
                await _send_error(send, 404, f"no envd endpoint at {scope['path']}")
        except HttpError as error:
            await _send_error(send, error.status, str(error))

    # GET /files
    async def _download(self, request: _Request, sandbox: SandboxView, send: Any) -> None:
        check_signing(request, sandbox, "read")
        root = SandboxRoot(sandbox.root)
        user = _user(request, Accounts(root, sandbox.id_offset))
        raw = request.query.get("path", "")
        path = _resolved_path(raw, user)
        fd, size, mtime = await asyncio.to_thread(_open_for_reading, root, path)
        try:
            encoding = choose_encoding(request.headers.get("accept-encoding", ""))
            name = path.rsplit("/", 1)[-1]
            content_type = mimetypes.guess_type(name)[0]
            if content_type is None:
                head = os.pread(fd, 512, 0)
                content_type = _sniff(head)
            headers = [
                (b"content-type", content_type.encode()),
                (b"content-disposition", _disposition(name)),
                (b"vary", b"Accept-Encoding"),
                (b"last-modified", time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(mtime)).encode()),
            ]
            deflater = None
            if encoding == "gzip":
                identity_ok = not identity_rejected(request.headers.get("accept-encoding", ""))
                deflater = await asyncio.to_thread(_gzip_if_it_pays, fd, identity_ok)
            if deflater is not None:
                headers.append((b"content-encoding", b"gzip"))
            else:
                headers.append((b"content-length", str(size).encode()))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            if deflater is None and ZERO_COPY_SEND in request.scope.get("extensions", {}):
                # The server's own protocol: the kernel sends the file from the page cache.
                with open(fd, "rb", buffering=0, closefd=False) as file:
                    for offset in range(0, size, SEND_PART):
                        _still_running(sandbox)
                        part = {"file": file, "offset": offset, "count": min(SEND_PART, size - offset)}
                        await send({"type": ZERO_COPY_SEND, **part, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                return
            # One chunk read (and compressed) ahead while the previous one is sent.
            offset = 0
            ahead = asyncio.ensure_future(asyncio.to_thread(_next_chunk, fd, offset, deflater))
            try:
                while True:
                    raw_length, chunk = await ahead
                    if not raw_length:
                        break
                    _still_running(sandbox)
                    offset += raw_length
                    ahead = asyncio.ensure_future(asyncio.to_thread(_next_chunk, fd, offset, deflater))
                    if chunk:
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
            finally:
                ahead.cancel()
                await asyncio.gather(ahead, return_exceptions=True)  # the worker must be done with fd
            tail = deflater.flush() if deflater is not None else b""
            await send({"type": "http.response.body", "body": tail})
        finally:
            os.close(fd)

    # POST /files
    async def _upload(self, request: _Request, sandbox: SandboxView) -> list[dict[str, Any]]:
        check_signing(request, sandbox, "write")
        root = SandboxRoot(sandbox.root)
        accounts = Accounts(root, sandbox.id_offset)
        user = _user(request, accounts)
        owner = accounts.host_owner(user)
        body = _decoded(request.body(), _content_encoding(request))
        metadata = _metadata(request)
        content_type = request.headers.get("content-type", "")
        media, params = parse_params(content_type)
        if media == "application/octet-stream":
            raw = request.query.get("path")
            if raw is None:
                raise HttpError(400, "path query parameter is required for raw body upload")
            path = _resolved_path(raw, user)
            await _write_file(root, path, body, owner, metadata)
            return [_written(root, path)]
        if media.startswith("multipart/"):
            return await self._multipart(request, root, user, owner, metadata, body, params.get("boundary", ""))
        raise HttpError(
            400, f"unsupported content type: {content_type}, expected multipart/form-data or application/octet-stream"
        )

    async def _multipart(
        self,
        request: _Request,
        root: SandboxRoot,
        user: Account,
        owner: tuple[int, int],
        metadata: dict[str, str],
        body: AsyncIterator[bytes],
        boundary: str,
    ) -> list[dict[str, Any]]:
        written: list[dict[str, Any]] = []
        events = read_parts(body, boundary)
        try:
            async for event in events:
                if not isinstance(event, PartStart):
                    continue
                disposition = event.disposition()
                if disposition.get("name") != "file":
                    continue  # envd reads only the "file" fields
                raw = request.query.get("path")
                if raw is None:
                    raw = disposition.get("filename")
                    if raw is None:
                        raise HttpError(
                            400,
                            "error getting multipart custom part file name: no filename in Content-Disposition",
                        )
                path = _resolved_path(raw, user)
                if any(entry["path"] == path for entry in written):
                    raise HttpError(
                        400,
                        f"you cannot upload multiple files to the same path '{path}' in one upload request, "
                        "only the first specified file was uploaded",
                    )
                await _write_file(root, path, _part_body(events), owner, metadata)
                written.append(_written(root, path))
        except MultipartError as error:
            raise HttpError(400, f"error reading form: {error}") from None
        return written


async def _part_body(events: AsyncIterator[Any]) -> AsyncIterator[bytes | memoryview]:
    async for event in events:
        if isinstance(event, PartData):
            yield event.data
        elif isinstance(event, PartEnd):
            return


# zlib's fastest level: envd compresses whenever asked (the SDK's client always asks), so speed counts most.
GZIP_LEVEL = 1
# Data that gzip shrinks by less than this share (random or already compressed) goes as identity.
GZIP_MIN_SAVING = 0.1


def _gzip_if_it_pays(fd: int, identity_ok: bool) -> Any:
    """A gzip compressor for the file, or None when a sample barely compresses and identity is acceptable.

    A client that lists gzip still accepts identity unless it says `identity;q=0` (RFC 9110): then
    the choice is the server's, and compressing random or compressed bytes only costs time.
    """
    if identity_ok:
        sample = os.pread(fd, 256 * 1024, 0)
        if sample and len(zlib.compress(sample, GZIP_LEVEL)) > len(sample) * (1 - GZIP_MIN_SAVING):
            return None
    return zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)


def _still_running(sandbox: SandboxView) -> None:
    """Between two parts of a download: a paused or killed sandbox's download ends there, cut short."""
    if sandbox.state != "running":
        raise AnswerAborted(f"sandbox {sandbox.sandbox_id} is {sandbox.state}")


def _next_chunk(fd: int, offset: int, deflater: Any) -> tuple[int, bytes]:
    """(bytes read, what to send) for the chunk at `offset`: compressed when there is a compressor."""
    chunk = os.pread(fd, CHUNK, offset)
    if deflater is None or not chunk:
        return len(chunk), chunk
    return len(chunk), deflater.compress(chunk)


def _open_for_reading(root: SandboxRoot, path: str) -> tuple[int, int, float]:
    try:
        with root.resolve(path, follow=True) as found:
            try:
                fd = os.open(
                    found.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=found.parent_fd
                )
            except FileNotFoundError:
                raise HttpError(404, f"path '{path}' does not exist") from None
            except OSError as error:
                raise HttpError(500, f"error opening file '{path}': {error.strerror}") from None
    except PathError as error:
        if error.kind == "not_found":
            raise HttpError(404, f"path '{path}' does not exist") from None
        raise _path_error(error) from None
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise HttpError(400, f"path '{path}' is a directory")
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)  # a fifo or a device would block or never end
        raise HttpError(400, f"path '{path}' is not a regular file")
    return fd, st.st_size, st.st_mtime


async def _write_file(
    root: SandboxRoot,
    path: str,
    chunks: AsyncIterator[bytes | memoryview],
    owner: tuple[int, int],
    metadata: dict[str, str],
) -> None:
    """envd's processFile: parents made, the file refilled as the bytes arrive and cut where they end, metadata set.

    An existing file is rewritten in place, then cut to the upload's length (also when the upload
    fails): the same file as envd's truncate-then-write leaves, but an overwrite reuses the old
    file's cached pages and disk blocks instead of freeing and allocating them again (several
    times faster on ext4 for a large file).
    """

    def open_target() -> int:
        try:
            with root.resolve(path, follow=True, create_parents=owner) as found:
                if found.name == ".":
                    raise HttpError(400, f"path is a directory: {path}")
                try:
                    st = os.stat(found.name, dir_fd=found.parent_fd, follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        raise HttpError(400, f"path is a directory: {path}")
                except FileNotFoundError:
                    pass
                # O_NONBLOCK: a fifo with no reader would hold this worker thread in open() for good, and
                # with a handful of them every sandbox's file calls (one shared pool); a fifo put in the
                # file's place after the stat fails with ENXIO instead.
                flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
                try:
                    fd = os.open(found.name, flags, 0o644, dir_fd=found.parent_fd)
                except OSError as error:
                    if error.errno == errno.ENXIO:
                        raise HttpError(400, f"path '{path}' is not a regular file") from None
                    raise
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)  # a fifo with a reader, or a device: never written to
                    raise HttpError(400, f"path '{path}' is not a regular file")
                os.set_blocking(fd, True)
                return fd
        except PathError as error:
            raise _path_error(error) from None
        except OSError as error:
            raise _os_error(error, "error opening file") from None

    fd = await asyncio.to_thread(open_target)
    try:
        try:
            os.fchown(fd, *owner)
        except PermissionError:
            pass  # an unprivileged server: the file is the sandbox user's already
        # Batches of about WRITE_BATCH go to disk in a worker, one while the next arrives: a slow disk
        # never stalls the event loop, and memory stays at two batches whatever the size.
        batch = _Batch()
        writing: asyncio.Future[None] | None = None
        try:
            async for chunk in chunks:
                batch.add(chunk)
                if batch.size >= WRITE_BATCH:
                    if writing is not None:
                        await writing
                    # The batch itself goes to the worker (no copy); the next one is a new one.
                    writing = asyncio.ensure_future(asyncio.to_thread(_write_all, fd, batch.parts))
                    batch = _Batch()
            if writing is not None:
                await writing
            writing = asyncio.ensure_future(asyncio.to_thread(_write_and_end, fd, batch.parts))
            await writing
        except BaseException:
            if writing is not None:
                # Not cancelled: a cancelled to_thread task ends at once, its worker still writing to fd.
                await asyncio.gather(writing, return_exceptions=True)
            _end_quietly(fd)  # what the file held before does not outlive a failed upload either
            raise
        _replace_metadata(fd, metadata)
    finally:
        os.close(fd)


def _write_and_end(fd: int, parts: list[Piece]) -> None:
    """The last batch, then the file cut where the upload ended (a longer old file's tail dropped)."""
    _write_all(fd, parts)
    try:
        os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_CUR))
    except OSError as error:
        raise _os_error(error, "error writing file") from None


def _end_quietly(fd: int) -> None:
    try:
        os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_CUR))
    except OSError:
        pass  # the upload's own error is the one to report


# Pieces of a body smaller than this are gathered into one buffer; larger ones are written as they came.
GATHER_BELOW = 64 * 1024
Piece = bytes | bytearray | memoryview  # what the disk worker is handed: never copied on the way


class _Batch:
    """An upload's next bytes for the disk: large pieces kept as they came, small ones gathered.

    A body arrives in pieces of up to 256 KiB (what the event loop reads at once), which `os.writev`
    writes without a copy; gathering the small ones keeps a batch to a few dozen buffers (the kernel
    takes at most 1,024).
    """

    def __init__(self) -> None:
        self.parts: list[Piece] = []
        self.size = 0
        self._gathering: bytearray | None = None

    def add(self, chunk: bytes | memoryview) -> None:
        self.size += len(chunk)
        if len(chunk) >= GATHER_BELOW:
            self.parts.append(chunk)
            self._gathering = None
        elif self._gathering is not None:
            self._gathering += chunk
        else:
            self._gathering = bytearray(chunk)
            self.parts.append(self._gathering)


def _write_all(fd: int, parts: list[Piece]) -> None:
    views = [memoryview(part) for part in parts if part]
    while views:
        try:
            written = os.writev(fd, views)
        except OSError as error:
            raise _os_error(error, "error writing file") from None
        while views and written >= views[0].nbytes:
            written -= views[0].nbytes
            del views[0]
        if written:
            views[0] = views[0][written:]


def _replace_metadata(fd: int, metadata: dict[str, str]) -> None:
    # Always rewritten: an overwrite keeps the old xattrs otherwise, and the SDK's metadata is the whole set.
    try:
        for name in os.listxattr(fd):
            if name.startswith(METADATA_PREFIX) and name[len(METADATA_PREFIX) :] not in metadata:
                os.removexattr(fd, name)
        for key, value in metadata.items():
            os.setxattr(fd, METADATA_PREFIX + key, value.encode())
    except OSError as error:
        if error.errno in (95, 61):  # EOPNOTSUPP, ENODATA: a filesystem without user xattrs keeps none
            return
        raise _os_error(error, "error writing file metadata") from None


def _os_error(error: OSError, what: str) -> HttpError:
    if error.errno in (28, 122):  # ENOSPC, EDQUOT
        return HttpError(507, f"{what}: not enough disk space available")
    return HttpError(500, f"{what}: {error.strerror}")


def _written(root: SandboxRoot, path: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path, "name": path.rsplit("/", 1)[-1], "type": "file"}
    try:
        with root.resolve(path, follow=True) as found:
            fd = os.open(found.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=found.parent_fd)
        try:
            persisted = read_metadata(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
    except (PathError, OSError):
        persisted = {}
    if persisted:
        entry["metadata"] = persisted
    return entry


def _disposition(name: str) -> bytes:
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    try:
        return f'inline; filename="{escaped}"'.encode("latin-1")
    except UnicodeEncodeError:
        from urllib.parse import quote

        return f"inline; filename*=utf-8''{quote(name)}".encode("latin-1")


def _sniff(head: bytes) -> str:
    """Go's DetectContentType, reduced to what matters to the SDK: text or bytes."""
    if not head:
        return "text/plain; charset=utf-8"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 3:  # not just a character cut at 512 bytes
            return "application/octet-stream"
        text = head[: error.start].decode("utf-8")
    if any(ord(c) < 0x20 and c not in "\t\n\r\x0c\x1b" for c in text):
        return "application/octet-stream"
    return "text/plain; charset=utf-8"


def files_http_app(lookup: Lookup, signed_candidates: Callable[[], Iterable[SandboxView]] | None = None) -> FilesApp:
    """The ASGI app for `/files`, `/health`, `/envs` and `/metrics`; `lookup` finds each request's sandbox.

    `signed_candidates()`: the running sandboxes, to find the one a signed URL without headers is for.
    """
    return FilesApp(lookup, signed_candidates)


__all__ = ["FilesApp", "HttpError", "choose_encoding", "files_http_app"]
