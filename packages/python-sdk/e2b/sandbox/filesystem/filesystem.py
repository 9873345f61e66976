"""Filesystem types, the decoding of envd's entries, and the shapes an upload's data may take.

An upload's data is a str (sent as UTF-8), bytes, a file object (read in
chunks, binary or text) or an iterable of bytes chunks (async iterables in
the async flavour): the last two are streamed, never read whole.
"""

from __future__ import annotations

import datetime
import gzip as gzip_module
import re
from collections.abc import AsyncIterable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import IO, Any, TypedDict

from e2b._exceptions import InvalidArgumentException, UnexpectedResponseException, brief

__all__ = [
    "EntryInfo",
    "FileType",
    "WriteData",
    "WriteEntry",
    "WriteInfo",
]

# How much of a file object an upload reads at once.
CHUNK_SIZE = 256 * 1024


class FileType(Enum):
    """What an entry is."""

    FILE = "file"
    """A regular file."""
    DIR = "dir"
    """A folder."""
    SYMLINK = "symlink"
    """A symbolic link (`EntryInfo.symlink_target` says where it points)."""


# envd's FileType numbers (filesystem.proto) and what the SDK calls them.
_FILE_TYPES = {1: FileType.FILE, 2: FileType.DIR, 3: FileType.SYMLINK}


def file_type(number: object) -> FileType | None:
    return _FILE_TYPES.get(int(number)) if isinstance(number, int) else None  # an enum member is an int


@dataclass
class WriteInfo:
    """A file a write created or replaced."""

    name: str
    """Its name."""
    type: FileType | None
    """FILE, or None when envd did not say."""
    path: str
    """Its full path."""
    metadata: dict[str, str] | None = field(default=None, kw_only=True)
    """The metadata stored with it (envd 0.6.2+), or None."""


@dataclass
class EntryInfo(WriteInfo):
    """A file, folder or symbolic link in the sandbox."""

    size: int
    """Size in bytes."""
    mode: int
    """Its mode bits (permissions and type), as `stat` gives them."""
    permissions: str
    """The permissions as `ls -l` shows them (`-rw-r--r--`)."""
    owner: str
    """The owning user's name."""
    group: str
    """The owning group's name."""
    modified_time: datetime.datetime
    """When it was last modified."""
    symlink_target: str | None = None
    """Where a symbolic link points, resolved; None for anything else."""

    @property
    def is_symlink(self) -> bool:
        """Whether the entry is a symbolic link."""
        return self.type is FileType.SYMLINK


WriteData = str | bytes | IO[Any] | Iterable[bytes]
"""What `Sandbox.files.write` takes: text (written as UTF-8), bytes, a file object or an iterable of bytes."""
AsyncWriteData = str | bytes | IO[Any] | AsyncIterable[bytes]
"""What `AsyncSandbox.files.write` takes: text (as UTF-8), bytes, a file object or an async iterable of bytes."""


class WriteEntry(TypedDict):
    """One file of `write_files`: where it goes and what it holds."""

    path: str
    """Where the file goes in the sandbox; a relative path is relative to the user's home."""
    data: Any  # WriteData, or AsyncWriteData in the async flavour
    """What it holds: `WriteData` (`AsyncWriteData` for `AsyncSandbox`)."""


def _metadata(value: object) -> dict[str, str] | None:
    if not value:
        return None
    return {str(k): str(v) for k, v in dict(value).items()}  # type: ignore[call-overload]


def entry_info(entry: Any) -> EntryInfo:
    """A generated `EntryInfo` message as the SDK's."""
    if entry is None:
        raise UnexpectedResponseException("the answer is not envd's: it has no entry")
    modified = getattr(entry, "modified_time", None)
    when = modified.to_datetime() if modified is not None else datetime.datetime.fromtimestamp(0, datetime.UTC)
    symlink = entry.symlink_target if entry.has_field("symlink_target") else None
    return EntryInfo(
        name=entry.name,
        type=FileType.SYMLINK if getattr(entry, "is_symlink", False) else file_type(entry.type),
        path=entry.path,
        size=entry.size,
        mode=entry.mode,
        permissions=entry.permissions,
        owner=entry.owner,
        group=entry.group,
        modified_time=when,
        symlink_target=symlink,
        metadata=_metadata(getattr(entry, "metadata", None)),
    )


def write_infos(payload: object) -> list[WriteInfo]:
    """What envd's POST /files answers: a JSON list of written files."""
    if not isinstance(payload, list) or not payload:
        raise UnexpectedResponseException(f"the answer is not envd's: {brief(payload)} is not a list of files")
    try:
        return [
            WriteInfo(
                name=item["name"],
                type=FileType.FILE
                if item.get("type") == "file"
                else FileType.DIR
                if item.get("type") == "dir"
                else None,
                path=item["path"],
                metadata=_metadata(item.get("metadata")),
            )
            for item in payload
        ]
    except (KeyError, TypeError, AttributeError) as error:
        raise UnexpectedResponseException(f"the answer is not envd's: {brief(payload)}") from error


# --- uploads -------------------------------------------------------------------

METADATA_HEADER_PREFIX = "X-Metadata-"
_METADATA_KEY = re.compile(r"[A-Za-z0-9!#$%&'*+\-.^_`|~]+")
_METADATA_VALUE = re.compile(r"[\x20-\x7e]*")


def metadata_headers(metadata: object) -> dict[str, str]:
    """`metadata` as the headers envd stores it from; keys must be header tokens, values printable ASCII."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidArgumentException(f"metadata must be a dict of str to str (got {brief(metadata)})")
    headers = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not _METADATA_KEY.fullmatch(key):
            raise InvalidArgumentException(
                f"metadata key {brief(key)}: use letters, digits and !#$%&'*+-.^_`|~ only (an HTTP header name)"
            )
        if not isinstance(value, str) or not _METADATA_VALUE.fullmatch(value):
            raise InvalidArgumentException(f"metadata[{key!r}] must be a str of printable ASCII")
        headers[METADATA_HEADER_PREFIX + key] = value
    return headers


def is_file_like(data: object) -> bool:
    return not isinstance(data, str | bytes | bytearray | memoryview) and callable(getattr(data, "read", None))


def as_bytes(chunk: object) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, bytearray | memoryview):
        return bytes(chunk)
    if isinstance(chunk, str):
        return chunk.encode("utf-8")
    raise InvalidArgumentException(f"data must yield bytes chunks (got a {type(chunk).__name__})")


def file_chunks(data: IO[Any]) -> Iterator[bytes]:
    """A file object read in chunks; text is sent as UTF-8."""
    while True:
        chunk = data.read(CHUNK_SIZE)
        if not chunk:
            return
        yield as_bytes(chunk)


def whole_body(data: object, gzip: bool) -> bytes | None:
    """The body of a str or bytes upload, compressed if asked; None for data that streams."""
    if isinstance(data, str):
        raw = data.encode("utf-8")
    elif isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
    else:
        return None
    return gzip_module.compress(raw) if gzip else raw


def unsupported(data: object, path: str) -> InvalidArgumentException:
    return InvalidArgumentException(
        f"data for {path!r} must be str, bytes, a file object or an iterable of bytes (got a {type(data).__name__})"
    )
