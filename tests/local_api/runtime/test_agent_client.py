"""The server's side of the agent's socket (runtime/agent_client.py), against a peer socket the test reads.

The socket is filled for real before the requests are made, so that every one
of them meets a full socket and waits for room: the case where waiters used
to replace one another's wake-up.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from e2b_local_api.runtime.agent_client import AgentClient, AgentGone

DEADLINE = 10.0  # bounds a failure only: a request never woken would otherwise hang the test
WAITING = 20


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setblocking(False)
    theirs.setblocking(False)
    yield ours, theirs
    ours.close()
    theirs.close()


def fill(sock: socket.socket) -> None:
    """Send filler messages until the peer's queue takes no more."""
    while True:
        try:
            sock.send(b'{"filler": true}')
        except BlockingIOError:
            return


async def answer(peer: socket.socket, count: int) -> list[int]:
    """Read the peer's side, answering each request, until `count` are answered; their ids, in arrival order."""
    loop = asyncio.get_running_loop()
    answered: list[int] = []
    while len(answered) < count:
        message = json.loads(await loop.sock_recv(peer, 1 << 16))
        if "id" in message:
            await loop.sock_sendall(peer, json.dumps({"id": message["id"], "pid": 1}).encode())
            answered.append(message["id"])
    return answered


def test_requests_that_meet_a_full_socket_all_go_out_in_order_of_arrival(pair: tuple[socket.socket, ...]) -> None:
    ours, theirs = pair

    async def run() -> tuple[list[dict[str, Any]], list[int]]:
        fill(ours)
        client = AgentClient(ours, lambda pid, status: None)
        requests = [asyncio.create_task(client.request({"op": "ping"})) for _ in range(WAITING)]
        await asyncio.sleep(0)  # each request runs until the full socket stops it
        assert not any(request.done() for request in requests)
        answers, arrived = await asyncio.wait_for(
            asyncio.gather(asyncio.gather(*requests), answer(theirs, WAITING)), DEADLINE
        )
        client.close()
        return answers, arrived

    answers, arrived = asyncio.run(run())
    assert [a["pid"] for a in answers] == [1] * WAITING
    assert arrived == list(range(1, WAITING + 1))


def test_closing_the_client_ends_a_request_waiting_for_room(pair: tuple[socket.socket, ...]) -> None:
    ours, _ = pair

    async def run() -> None:
        fill(ours)
        client = AgentClient(ours, lambda pid, status: None)
        waiting = asyncio.create_task(client.request({"op": "ping"}))
        queued = asyncio.create_task(client.request({"op": "ping"}))
        await asyncio.sleep(0)
        assert not waiting.done() and not queued.done()
        client.close()
        with pytest.raises(AgentGone):
            await asyncio.wait_for(waiting, DEADLINE)
        with pytest.raises(AgentGone):
            await asyncio.wait_for(queued, DEADLINE)

    asyncio.run(run())
