"""slirp4netns connecting a sandbox's own network namespace: what a failure says, and that the probe cleans up."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from e2b_local_api.runtime import network

SLIRP = shutil.which("slirp4netns")
needs_slirp = pytest.mark.skipif(SLIRP is None, reason="slirp4netns is not installed (apt-get install slirp4netns)")
NO_SUCH_PID = 2**22 + 1  # above Linux's largest pid (pid_max is at most 2^22)


@needs_slirp
def test_a_namespace_that_is_not_there_is_a_link_error_in_slirp4netns_s_words() -> None:
    assert SLIRP is not None
    with pytest.raises(network.LinkError) as failed:
        asyncio.run(network.attach(SLIRP, NO_SUCH_PID, 10))
    assert str(failed.value)  # slirp4netns's own words (or its exit status), not an empty message
    assert network.attach_blocking(SLIRP, NO_SUCH_PID, 10)


def test_a_missing_slirp4netns_is_a_link_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = str(tmp_path / "slirp4netns")
    with pytest.raises(network.LinkError, match="does not start"):
        asyncio.run(network.attach(missing, 1, 10))
    assert "does not start" in (network.attach_blocking(missing, 1, 10) or "")


def test_bubblewrap_s_info_is_read_whole_or_not_at_all() -> None:
    import os

    read, write = os.pipe()
    os.write(write, b'{\n    "child-pid": 4')
    os.write(write, b"2\n}\n")
    assert network.read_info(read, 5) == 42
    os.close(write)
    assert network.read_info(read, 5) is None  # the writer gone before a whole object: no pid
    os.close(read)
