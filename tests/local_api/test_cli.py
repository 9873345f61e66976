"""The `e2b-local-api` command."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import pytest
from e2b_local_api.cli import auth_config, parse_args
from e2b_local_api.control.auth import DEV_API_KEY


def test_defaults() -> None:
    args = parse_args([])
    assert (args.host, args.port) == ("127.0.0.1", 3000)
    assert auth_config(args).keys == frozenset({DEV_API_KEY})


def test_keys_are_repeatable() -> None:
    config = auth_config(parse_args(["--api-key", "a", "--api-key", "b"]))
    assert config.keys == frozenset({"a", "b"}) and not config.accept_any
    assert auth_config(parse_args(["--any-api-key"])).accept_any


def test_serves_on_the_given_port() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "e2b_local_api", "--port", str(port), "--api-key", "k"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/v2/sandboxes", headers={"X-API-Key": "k"})
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
        assert response.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_limits_are_options() -> None:
    args = parse_args(
        ["--header-timeout", "0.5", "--keep-alive-timeout", "3", "--body-timeout", "2", "--max-body-bytes", "100"]
    )
    assert (args.header_timeout, args.keep_alive_timeout, args.body_timeout, args.max_body_bytes) == (0.5, 3, 2, 100)


@pytest.mark.parametrize("option", ["--header-timeout", "--keep-alive-timeout", "--body-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_timeouts_must_be_positive(option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args([option, value])
    assert exited.value.code == 2
    assert "must be a positive number of seconds" in capsys.readouterr().err
