"""Connect codecs and compressions that call a request they cannot read `invalid_argument`, as connect-go does.

connectrpc lets a decoding or decompressing error through as `unknown` (HTTP 500, or a stream's end),
which would tell a client the server failed when the client sent bad JSON or a corrupt gzip body.
An answer that cannot be encoded (a file name that is not UTF-8) is `internal`, as connect-go's
marshal error is in envd. Every envd service is built with `envd_codecs()` and `envd_compressions()`.
"""

from __future__ import annotations

from typing import Any

from connectrpc.code import Code
from connectrpc.codec import Codec, proto_binary_codec, proto_json_codec
from connectrpc.compression import Compression
from connectrpc.compression.gzip import GzipCompression
from connectrpc.errors import ConnectError


class _StrictDecoding:
    def __init__(self, inner: Codec[Any, Any]) -> None:
        self._inner = inner

    def name(self) -> str:
        return self._inner.name()

    def encode(self, message: Any) -> bytes:
        try:
            return self._inner.encode(message)
        except UnicodeEncodeError as error:
            # A name read from the disk as bytes (os.fsdecode) that is not UTF-8: proto3 strings must be,
            # and envd's protojson refuses to marshal it the same way.
            bad = error.object[error.start : error.end].encode("utf-8", "surrogateescape")
            raise ConnectError(
                Code.INTERNAL,
                f"the answer holds a name that is not valid UTF-8 (byte 0x{bad.hex()} in {error.object!a}): "
                "rename it in the sandbox",
            ) from error

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        try:
            return self._inner.decode(data, message_class)
        except ConnectError:
            raise
        except Exception as error:
            raise ConnectError(
                Code.INVALID_ARGUMENT,
                f"the request is not a valid {message_class.__name__} ({self.name()}): {error}",
            ) from error


def envd_codecs() -> list[Codec[Any, Any]]:
    return [_StrictDecoding(proto_binary_codec()), _StrictDecoding(proto_json_codec())]


class _StrictDecompression:
    def __init__(self, inner: Compression) -> None:
        self._inner = inner

    def name(self) -> str:
        return self._inner.name()

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        return self._inner.compress(data)

    def decompress(self, data: bytes | bytearray | memoryview, read_max_bytes: int | None = None) -> bytes:
        try:
            return self._inner.decompress(data, read_max_bytes)
        except ConnectError:  # a message over the limit: resource_exhausted already
            raise
        except Exception as error:  # zlib's error, EOFError, gzip.BadGzipFile
            raise ConnectError(Code.INVALID_ARGUMENT, f"decompress: not valid {self.name()}: {error}") from error


def envd_compressions() -> list[Compression]:
    """gzip, as connectrpc's default; identity is always added by connectrpc itself."""
    return [_StrictDecompression(GzipCompression())]
