"""Connect request compressions that call a body they cannot decompress `invalid_argument`, as connect-go does.

connectrpc's gzip lets zlib's error (or `EOFError`, `gzip.BadGzipFile`) through, which its server
answers as `unknown` (HTTP 500, or a stream's end): that would tell a client the server failed when
the client sent a corrupt body. Every envd service of the data plane is built with `envd_compressions()`.
"""

from __future__ import annotations

from connectrpc.code import Code
from connectrpc.compression import Compression
from connectrpc.compression.gzip import GzipCompression
from connectrpc.errors import ConnectError


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
        except Exception as error:
            raise ConnectError(Code.INVALID_ARGUMENT, f"decompress: not valid {self.name()}: {error}") from error


def envd_compressions() -> list[Compression]:
    """gzip, as connectrpc's default; identity is always added by connectrpc itself."""
    return [_StrictDecompression(GzipCompression())]
