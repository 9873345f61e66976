"""A command's output streamed to a callback is not held by the SDK: the client's memory stays flat.

The client runs in its own process, so that its resident memory is its own
(the test envd in this process buffers what it relays).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ._envd_server import EnvdServer

SIZE = 256 * 1024 * 1024
# What the client may grow by while 256 MiB pass through it: the bound for 1 GiB.
MAX_GROWTH = 64 * 1024 * 1024

CLIENT = textwrap.dedent(
    """
    import asyncio, resource, sys
    from e2b import AsyncSandbox, ConnectionConfig

    async def main():
        config = ConnectionConfig(api_key="e2b_test", api_url=sys.argv[1])
        sbx = AsyncSandbox("sbxtest", envd_version="0.6.4", connection_config=config)
        await sbx.commands.run("true")  # everything imported and connected before the baseline
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        seen = 0

        def count(text):
            nonlocal seen
            seen += len(text)

        result = await sbx.commands.run(f"head -c {sys.argv[2]} /dev/zero", on_stdout=count, retain_output=False)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(seen, result.stdout, (after - before) * 1024)

    asyncio.run(main())
    """
)


@pytest.mark.slow
def test_streaming_output_to_a_callback_keeps_the_client_s_memory_flat(envd: EnvdServer) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CLIENT, envd.url, str(SIZE)], capture_output=True, text=True, timeout=600, check=True
    ).stdout.split()
    seen, stdout, growth = int(out[0]), out[1], int(out[2])
    assert (seen, stdout) == (SIZE, "None")
    assert growth < MAX_GROWTH, f"the client grew by {growth / 2**20:.0f} MiB"
