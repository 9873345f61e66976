"""The bytearray `files.read` fills: reserved at the declared length, advised to huge pages, no unfilled room shown."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import httpx
import pytest
from e2b.sandbox.filesystem import download_buffer
from e2b.sandbox.filesystem.download_buffer import HUGE_PAGE, DownloadBuffer, declared_length

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Content-Length": "1048576"}, 1048576),
        ({"Content-Length": " 12 ", "Content-Encoding": "identity"}, 12),
        ({"Content-Length": "12", "Content-Encoding": "gzip"}, None),  # the caller reads the decoded body
        ({}, None),
        ({"Content-Length": "-1"}, None),
        ({"Content-Length": "12, 12"}, None),
        ({"Content-Length": "1e6"}, None),
        ([(b"Content-Length", b"\xb2")], None),  # latin-1's superscript two: a digit to str.isdigit, not to HTTP
        ({"Content-Length": "9" * 40}, None),
    ],
)
def test_the_declared_length_is_read_only_from_a_plain_decimal_of_an_uncoded_body(
    headers: dict[str, str] | list[tuple[bytes, bytes]], expected: int | None
) -> None:
    assert declared_length(httpx.Headers(headers)) == expected


def _fill(buffer: DownloadBuffer, data: bytes, piece: int) -> bytearray:
    for start in range(0, len(data), piece):
        buffer.add(data[start : start + piece])
    return buffer.take()


@pytest.mark.parametrize("declared_more", [0, 1, 3 << 20])
def test_a_body_shorter_than_declared_returns_only_what_came(declared_more: int) -> None:
    data = os.urandom(HUGE_PAGE + 12345)
    got = _fill(DownloadBuffer(len(data) + declared_more), data, 65536)
    assert type(got) is bytearray and got == data


@pytest.mark.parametrize("declared", [HUGE_PAGE, 0, None])
def test_a_body_longer_than_declared_grows_the_bytearray(declared: int | None) -> None:
    data = os.urandom(HUGE_PAGE * 2 + 7)
    assert _fill(DownloadBuffer(declared), data, 1 << 20) == data


def test_a_small_body_is_read_into_an_ordinary_bytearray() -> None:
    assert _fill(DownloadBuffer(5), b"hello", 2) == bytearray(b"hello")
    assert DownloadBuffer(0).take() == bytearray()


def test_a_length_no_process_could_hold_falls_back_to_growing() -> None:
    assert _fill(DownloadBuffer(1 << 62), b"abc", 1) == b"abc"


def test_without_the_native_calls_the_buffer_is_ordinary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(download_buffer, "_native_calls", lambda: None)
    data = os.urandom(HUGE_PAGE + 1)
    assert _fill(DownloadBuffer(len(data)), data, 1 << 16) == data


@pytest.mark.skipif(
    not THP.exists() or "[never]" in THP.read_text(), reason="this kernel has no transparent huge pages"
)
def test_the_reserved_room_is_advised_to_huge_pages() -> None:
    # The advice is the mapping's flag `hg` in smaps: set by the call, whatever pages the kernel can find later.
    size = 64 << 20
    buffer = DownloadBuffer(size)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buffer._data))
    assert _mapping_flags(address + size // 2) >= {"hg"}
    plain = bytearray(size)
    assert "hg" not in _mapping_flags(ctypes.addressof(ctypes.c_char.from_buffer(plain)) + size // 2)


def _mapping_flags(address: int) -> set[str]:
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=1)[0]
        if "-" in head and not head.endswith(":"):
            low, high = (int(part, 16) for part in head.split("-"))
            inside = low <= address < high
        elif inside and head == "VmFlags:":
            return set(line.split()[1:])
    raise AssertionError(f"no mapping holds {address:#x}")
