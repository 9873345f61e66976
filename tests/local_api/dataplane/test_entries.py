"""EntryInfo's permissions string is Go's FileMode.String(), as envd prints it."""

from __future__ import annotations

import stat

import pytest
from e2b_local_api.dataplane.entries import go_permissions


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (stat.S_IFREG | 0o644, "-rw-r--r--"),
        (stat.S_IFDIR | 0o755, "drwxr-xr-x"),
        (stat.S_IFLNK | 0o777, "Lrwxrwxrwx"),
        (stat.S_IFDIR | stat.S_ISVTX | 0o777, "dtrwxrwxrwx"),
        (stat.S_IFREG | stat.S_ISUID | 0o755, "urwxr-xr-x"),
        (stat.S_IFREG | stat.S_ISGID | 0o755, "grwxr-xr-x"),
        (stat.S_IFCHR | 0o666, "Dcrw-rw-rw-"),
        (stat.S_IFBLK | 0o660, "Drw-rw----"),
        (stat.S_IFIFO | 0o644, "prw-r--r--"),
        (stat.S_IFSOCK | 0o755, "Srwxr-xr-x"),
        (stat.S_IFREG, "----------"),
    ],
)
def test_go_file_mode_string(mode: int, expected: str) -> None:
    assert go_permissions(mode) == expected
