"""The bytearray `files.read` returns, reserved whole when the server declares the body's length.

A 100 MiB read spent more client time on fresh memory than on the socket: a bytearray grown by each
chunk faults its pages in one 4 KiB page at a time, 25,600 faults (about 90 ms of the read's 200 here).
Reserved at the declared length, the bytearray is left unfilled (never zeroed first) and Linux asked
to back it with 2 MiB pages (madvise MADV_HUGEPAGE; transparent huge pages are often madvise-only):
about 50 faults. Where that cannot be asked (not CPython, not Linux, a refusal), it is an ordinary
bytearray; unfilled room is cut off before the bytearray is returned, so no stale byte is ever seen.
"""

from __future__ import annotations

import functools
import mmap
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

HUGE_PAGE = 2 << 20  # below this the advice cannot help: the body grows the bytearray chunk by chunk
_DIGITS = re.compile(r"[0-9]{1,19}")


def declared_length(headers: Mapping[str, str]) -> int | None:
    """The body's length as the bytes the caller will read, if the headers say it (no content coding)."""
    if headers.get("content-encoding", "identity").strip().lower() != "identity":
        return None  # the caller reads the decoded body, whose length no header gives
    value = headers.get("content-length", "").strip()
    return int(value) if _DIGITS.fullmatch(value) else None


class DownloadBuffer:
    """A body's bytes in one bytearray, with room reserved for the length the server declared."""

    def __init__(self, declared: int | None) -> None:
        reserved = _reserved(declared) if declared is not None and declared >= HUGE_PAGE else None
        self._data = reserved if reserved is not None else bytearray()
        self._filled = 0

    def add(self, chunk: bytes) -> None:
        end = self._filled + len(chunk)
        # Within the room a plain copy; past it (a body longer than declared) the bytearray grows.
        self._data[self._filled : end] = chunk
        self._filled = end

    def take(self) -> bytearray:
        del self._data[self._filled :]  # room a shorter body left unfilled
        return self._data


def _reserved(size: int) -> bytearray | None:
    """`size` unfilled bytes advised to huge pages, or None where they cannot be made that way."""
    calls = _native_calls()
    if calls is None:
        return None
    make, advise = calls
    try:
        data: bytearray = make(None, size)
    except MemoryError:
        return None  # a length this process cannot hold at once: grown as it arrives, it may still fit
    _advise_huge(data, size, advise)
    return data


def _advise_huge(data: bytearray, size: int, advise: Callable[[int, int, int], int]) -> None:
    import ctypes

    view = ctypes.c_char.from_buffer(data)  # an export of the buffer: released before anything resizes it
    start = ctypes.addressof(view)
    del view
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    end = (start + size) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        advise(first, end - first, mmap.MADV_HUGEPAGE)  # a refusal (no THP in this kernel) costs nothing


@functools.cache
def _native_calls() -> tuple[Callable[..., Any], Callable[[int, int, int], int]] | None:
    """CPython's unfilled-bytearray constructor and libc's madvise, where both exist; loaded on first use."""
    if sys.implementation.name != "cpython" or not sys.platform.startswith("linux"):
        return None
    if not hasattr(mmap, "MADV_HUGEPAGE"):
        return None
    import ctypes

    try:
        # Prototypes of their own: setting restype on ctypes.pythonapi's shared attribute would change it for
        # every other user of ctypes in the process.
        make = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_char_p, ctypes.c_ssize_t)(
            ("PyByteArray_FromStringAndSize", ctypes.pythonapi)
        )
        advise = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, use_errno=True)(
            ("madvise", ctypes.CDLL(None, use_errno=True))
        )
    except (AttributeError, OSError):
        return None
    return make, advise
