"""envd's HTTP endpoints over real HTTP with httpx: /files both ways, signatures, /health, /envs, /metrics."""

from __future__ import annotations

import gzip
import json
import os
import resource
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from e2b_local_api.dataplane.files_http import WRITE_BATCH, _Batch, _write_all, choose_encoding
from e2b_local_api.dataplane.signed_urls import expected_signature

from .conftest import Envd, StandInSandbox

HOME = "/home/user"
MIB = 1 << 20


def test_octet_stream_upload_then_download(envd: Envd, sandbox: StandInSandbox) -> None:
    with envd.http(sandbox) as http:
        up = http.post(
            "/files",
            params={"path": "dir/a.txt"},
            content=b"hello",
            headers={"Content-Type": "application/octet-stream"},
        )
        assert up.status_code == 200, up.text
        assert up.json() == [{"path": f"{HOME}/dir/a.txt", "name": "a.txt", "type": "file"}]
        assert sandbox.host(f"{HOME}/dir/a.txt").read_bytes() == b"hello"
        assert oct(sandbox.host(f"{HOME}/dir/a.txt").stat().st_mode & 0o777) == "0o644"
        down = http.get("/files", params={"path": "dir/a.txt"})
        assert down.status_code == 200 and down.content == b"hello"
        assert (
            down.headers["content-type"].startswith("text/plain")
            and 'filename="a.txt"' in down.headers["content-disposition"]
        )


def test_an_upload_over_a_file_leaves_exactly_its_bytes(envd: Envd, sandbox: StandInSandbox) -> None:
    # The old file is rewritten in place and cut where the upload ends: never a tail of what it
    # held, whether the upload is shorter, longer, empty, multipart or fails midway.
    target = sandbox.host(f"{HOME}/over.bin")
    target.write_bytes(b"old" * WRITE_BATCH)
    inode = target.stat().st_ino
    octet = {"Content-Type": "application/octet-stream"}
    with envd.http(sandbox) as http:
        shorter = os.urandom(WRITE_BATCH + 17)  # more than one write batch, less than the old file
        assert http.post("/files", params={"path": "over.bin"}, content=shorter, headers=octet).status_code == 200
        assert target.read_bytes() == shorter
        assert target.stat().st_ino == inode  # the same file, as envd's truncate-then-write keeps it
        longer = os.urandom(4 * WRITE_BATCH + 5)
        assert http.post("/files", params={"path": "over.bin"}, content=longer, headers=octet).status_code == 200
        assert target.read_bytes() == longer
        multipart = http.post("/files", params={"path": "over.bin"}, files=[("file", ("over.bin", b"form"))])
        assert multipart.status_code == 200 and target.read_bytes() == b"form"
        assert http.post("/files", params={"path": "over.bin"}, content=b"", headers=octet).status_code == 200
        assert target.read_bytes() == b""
        target.write_bytes(b"old" * WRITE_BATCH)
        new = os.urandom(3 * WRITE_BATCH)
        cut = http.post(
            "/files",
            params={"path": "over.bin"},
            content=gzip.compress(new, 1)[: 2 * WRITE_BATCH],  # inflates to some of `new`, then ends too soon
            headers={**octet, "Content-Encoding": "gzip"},
        )
        assert cut.status_code == 400 and "truncated" in cut.json()["message"]
        left = target.read_bytes()
        assert 0 < len(left) < len(new) and new.startswith(left)  # what arrived, and nothing of the old file


def test_multipart_one_and_many(envd: Envd, sandbox: StandInSandbox) -> None:
    with envd.http(sandbox) as http:
        one = http.post("/files", params={"path": "/tmp/one.bin"}, files=[("file", ("ignored-name", b"\x00\x01\x02"))])
        assert one.status_code == 200 and one.json()[0]["path"] == "/tmp/one.bin"
        many = http.post(
            "/files",
            files=[
                ("file", ("m/a.txt", b"A" * 100_000)),
                ("other", ("x", b"not a file field")),
                ("file", ("/tmp/b.txt", b"B")),
            ],
        )
        assert many.status_code == 200, many.text
        assert [e["path"] for e in many.json()] == [f"{HOME}/m/a.txt", "/tmp/b.txt"]
    assert sandbox.host("/tmp/one.bin").read_bytes() == b"\x00\x01\x02"
    assert sandbox.host(f"{HOME}/m/a.txt").read_bytes() == b"A" * 100_000
    assert not sandbox.host(f"{HOME}/x").exists()


def test_multipart_same_path_twice_is_refused(envd: Envd, sandbox: StandInSandbox) -> None:
    with envd.http(sandbox) as http:
        r = http.post("/files", files=[("file", ("same", b"1")), ("file", ("same", b"2"))])
    assert r.status_code == 400 and "same path" in r.json()["message"]


def test_gzip_upload_and_download(envd: Envd, sandbox: StandInSandbox) -> None:
    data = b"".join(b"line %d of a compressible file\n" % i for i in range(40_000))
    with envd.http(sandbox) as http:
        up = http.post(
            "/files",
            params={"path": "z.bin"},
            content=gzip.compress(data),
            headers={"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"},
        )
        assert up.status_code == 200, up.text
        assert sandbox.host(f"{HOME}/z.bin").read_bytes() == data
        down = http.get("/files", params={"path": "z.bin"}, headers={"Accept-Encoding": "gzip"})
        assert down.headers["content-encoding"] == "gzip" and down.content == data  # httpx inflates it


def test_incompressible_downloads_go_as_identity_unless_it_is_refused(envd: Envd, sandbox: StandInSandbox) -> None:
    noise = os.urandom(2 << 20)
    sandbox.host(f"{HOME}/noise.bin").write_bytes(noise)
    with envd.http(sandbox) as http:
        plain = http.get("/files", params={"path": "noise.bin"}, headers={"Accept-Encoding": "gzip, deflate"})
        assert "content-encoding" not in plain.headers and plain.headers["content-length"] == str(len(noise))
        assert plain.content == noise
        forced = http.get("/files", params={"path": "noise.bin"}, headers={"Accept-Encoding": "gzip, identity;q=0"})
        assert forced.headers["content-encoding"] == "gzip" and forced.content == noise


def test_bad_upload_inputs(envd: Envd, sandbox: StandInSandbox) -> None:
    with envd.http(sandbox) as http:
        no_path = http.post("/files", content=b"x", headers={"Content-Type": "application/octet-stream"})
        assert no_path.status_code == 400 and "path query parameter is required" in no_path.json()["message"]
        unknown = http.post(
            "/files",
            params={"path": "a"},
            content=b"x",
            headers={"Content-Type": "application/octet-stream", "Content-Encoding": "br"},
        )
        assert unknown.status_code == 400 and "unsupported Content-Encoding" in unknown.json()["message"]
        truncated = http.post(
            "/files",
            params={"path": "a"},
            content=gzip.compress(b"abc" * 1000)[:20],
            headers={"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"},
        )
        assert truncated.status_code == 400
        form = http.post("/files", content=b"x", headers={"Content-Type": "text/plain"})
        assert form.status_code == 400 and "unsupported content type" in form.json()["message"]
        nameless = http.post(
            "/files",
            content=b'--B\r\nContent-Disposition: form-data; name="file"\r\n\r\ndata\r\n--B--\r\n',
            headers={"Content-Type": "multipart/form-data; boundary=B"},
        )
        assert nameless.status_code == 400 and "filename" in nameless.json()["message"]
        cut = http.post(
            "/files",
            content=b'--B\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\ndata',
            headers={"Content-Type": "multipart/form-data; boundary=B"},
        )
        assert cut.status_code == 400
        sandbox.host(f"{HOME}/adir").mkdir()
        onto_dir = http.post(
            "/files", params={"path": "adir"}, content=b"x", headers={"Content-Type": "application/octet-stream"}
        )
        assert onto_dir.status_code == 400 and "is a directory" in onto_dir.json()["message"]
        nul = http.post(
            "/files", params={"path": "a\0b"}, content=b"x", headers={"Content-Type": "application/octet-stream"}
        )
        assert nul.status_code == 400
        not_gzip = http.post(
            "/files",
            params={"path": "a"},
            content=b"abc",
            headers={"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"},
        )
        assert not_gzip.status_code == 400 and "not a valid gzip stream" in not_gzip.json()["message"]


@pytest.mark.parametrize("reader", [False, True])
def test_a_fifo_is_refused_not_waited_on(envd: Envd, sandbox: StandInSandbox, reader: bool) -> None:
    # Opened for writing, a fifo with no reader held a worker of the server's one pool for good: eight
    # such uploads (more than the pool's workers) stopped every sandbox's file calls.
    fifo = sandbox.host("/tmp/fifo")
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK) if reader else None
    octet = {"Content-Type": "application/octet-stream"}
    try:
        with envd.http(sandbox) as http:
            for _ in range(8):
                r = http.post("/files", params={"path": "/tmp/fifo"}, content=b"x", headers=octet)
                assert r.status_code == 400 and "is not a regular file" in r.json()["message"]
            assert http.post("/files", params={"path": "/tmp/f"}, content=b"x", headers=octet).status_code == 200
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    finally:
        if held is not None:
            os.close(held)


@pytest.mark.parametrize("state", ["paused", "gone"])
def test_a_download_is_cut_short_when_its_sandbox_stops(envd: Envd, sandbox: StandInSandbox, state: str) -> None:
    # 64 MiB: far more than the socket buffers hold, so most of it is still to send when the state changes.
    size = 64 * MIB
    sandbox.host(f"{HOME}/big").write_bytes(bytes(size))
    with envd.http(sandbox) as http:
        with http.stream("GET", "/files", params={"path": "big"}, headers={"Accept-Encoding": "identity"}) as r:
            chunks = r.iter_raw()
            received = len(next(chunks))
            sandbox.set_state(state)  # type: ignore[arg-type]
            with pytest.raises(httpx.RemoteProtocolError):
                for chunk in chunks:
                    received += len(chunk)
    assert received < size


def test_metadata_headers_become_xattrs(envd: Envd, sandbox: StandInSandbox) -> None:
    with envd.http(sandbox) as http:
        r = http.post(
            "/files",
            params={"path": "m.txt"},
            content=b"x",
            headers={
                "Content-Type": "application/octet-stream",
                "X-Metadata-Team": "infra",
                "X-Metadata-Stage": "prod",
            },
        )
        assert r.status_code == 200 and r.json()[0]["metadata"] == {"team": "infra", "stage": "prod"}
        # An overwrite replaces the whole set.
        r2 = http.post(
            "/files",
            params={"path": "m.txt"},
            content=b"y",
            headers={"Content-Type": "application/octet-stream", "X-Metadata-Team": "core"},
        )
        assert r2.json()[0]["metadata"] == {"team": "core"}
        too_big = http.post(
            "/files",
            params={"path": "m.txt"},
            content=b"y",
            headers={"Content-Type": "application/octet-stream", "X-Metadata-Big": "v" * 5000},
        )
        assert too_big.status_code == 400 and "invalid metadata" in too_big.json()["message"]
    assert os.getxattr(sandbox.host(f"{HOME}/m.txt"), "user.e2b.team") == b"core"


def test_download_errors_and_confinement(envd: Envd, sandbox: StandInSandbox) -> None:
    os.symlink("/", sandbox.host(f"{HOME}/rootlink"))
    with envd.http(sandbox) as http:
        assert http.get("/files", params={"path": "missing"}).status_code == 404
        folder = http.get("/files", params={"path": "/tmp"})
        assert folder.status_code == 400 and "is a directory" in folder.json()["message"]
        for path in ("../../etc/passwd", "rootlink/etc/passwd", "/../../../etc/passwd"):
            r = http.get("/files", params={"path": path})
            assert r.status_code == 200 and r.content == sandbox.host("/etc/passwd").read_bytes(), path
        assert http.get("/files", params={"path": "/proc/1/environ"}).status_code == 404
        refused = http.get("/files", params={"path": "/etc/passwd"}, headers={"Accept-Encoding": "identity;q=0, br"})
        assert refused.status_code == 406


def test_upload_through_a_symlink_to_root_stays_inside(envd: Envd, sandbox: StandInSandbox, tmp_path) -> None:  # type: ignore[no-untyped-def]
    os.symlink("/", sandbox.host(f"{HOME}/up"))
    os.symlink(str(tmp_path), sandbox.host(f"{HOME}/hostdir"))  # an absolute link means the sandbox's path
    with envd.http(sandbox) as http:
        r = http.post(
            "/files",
            params={"path": "up/tmp/planted"},
            content=b"x",
            headers={"Content-Type": "application/octet-stream"},
        )
        assert r.status_code == 200 and r.json()[0]["path"] == f"{HOME}/up/tmp/planted"
        http.post(
            "/files",
            params={"path": "hostdir/planted"},
            content=b"x",
            headers={"Content-Type": "application/octet-stream"},
        )
    assert sandbox.host("/tmp/planted").read_bytes() == b"x"
    assert not (tmp_path / "planted").exists()
    assert sandbox.host(str(tmp_path) + "/planted").read_bytes() == b"x"


def test_accept_encoding_rules() -> None:
    assert choose_encoding("") == "identity"
    assert choose_encoding("gzip") == "gzip"
    assert choose_encoding("br, gzip;q=0.5") == "gzip"
    assert choose_encoding("identity, gzip;q=0.5") == "identity"
    assert choose_encoding("*;q=0, gzip") == "gzip"
    assert choose_encoding("br") == "identity"


def _secure(envd: Envd, token: str = "tok-secret") -> StandInSandbox:
    return envd.sandboxes.create(f"secure{time.monotonic_ns()}", access_token=token, secure=True)


def test_signed_urls(envd: Envd) -> None:
    sandbox = _secure(envd)
    sandbox.host(f"{HOME}/s.txt").write_text("signed")
    with envd.http(sandbox) as http:
        assert http.get("/files", params={"path": "s.txt"}).json() == {
            "code": 401,
            "message": "missing signature query parameter",
        }
        good = expected_signature("s.txt", "read", "", "tok-secret", None)
        assert http.get("/files", params={"path": "s.txt", "signature": good}).text == "signed"
        later = int(time.time()) + 60
        timed = expected_signature("s.txt", "read", "user", "tok-secret", later)
        ok = http.get(
            "/files", params={"path": "s.txt", "username": "user", "signature": timed, "signature_expiration": later}
        )
        assert ok.status_code == 200
        past = int(time.time()) - 5
        expired = expected_signature("s.txt", "read", "", "tok-secret", past)
        gone = http.get("/files", params={"path": "s.txt", "signature": expired, "signature_expiration": past})
        assert gone.status_code == 401 and "expired" in gone.json()["message"]
        wrong_op = expected_signature("w.txt", "read", "", "tok-secret", None)
        refused = http.post(
            "/files",
            params={"path": "w.txt", "signature": wrong_op},
            content=b"x",
            headers={"Content-Type": "application/octet-stream"},
        )
        assert refused.status_code == 401 and refused.json()["message"] == "invalid signature"
        write = expected_signature("w.txt", "write", "", "tok-secret", None)
        assert (
            http.post(
                "/files",
                params={"path": "w.txt", "signature": write},
                content=b"x",
                headers={"Content-Type": "application/octet-stream"},
            ).status_code
            == 200
        )
        with_token = http.get("/files", params={"path": "s.txt"}, headers={"X-Access-Token": "tok-secret"})
        assert with_token.status_code == 200
        bad_token = http.get("/files", params={"path": "s.txt", "signature": good}, headers={"X-Access-Token": "nope"})
        assert bad_token.status_code == 401


def test_health_envs_and_gone(envd: Envd) -> None:
    sandbox = envd.sandboxes.create(f"h{time.monotonic_ns()}", env_vars={"A": "1", "B": "two"})
    with envd.http(sandbox) as http:
        health = http.get("/health")
        assert health.status_code == 204 and health.content == b""
        assert http.get("/envs").json() == {"A": "1", "B": "two"}
        sandbox.set_state("gone")
        dead = http.get("/health")
        assert dead.status_code == 502 and dead.json()["message"] == f"The sandbox {sandbox.sandbox_id} was not found"


def test_metrics_from_the_sandbox_processes(envd: Envd, sandbox: StandInSandbox) -> None:
    with envd.http(sandbox) as http:
        idle = http.get("/metrics").json()
        assert idle["mem_used"] == 0 and idle["cpu_used_pct"] == 0 and idle["cpu_count"] >= 1 and idle["mem_total"] > 0
        busy = subprocess.Popen([sys.executable, "-c", "b = bytearray(64 << 20)\nwhile True: pass"])
        try:
            sandbox.processes.append(busy.pid)
            deadline = time.monotonic() + 20
            while True:
                metrics = http.get("/metrics").json()
                if metrics["mem_used"] >= 64 << 20 and metrics["cpu_used_pct"] > 0:
                    break
                assert time.monotonic() < deadline, metrics
        finally:
            busy.kill()
            busy.wait()
            sandbox.processes.clear()
    assert set(metrics) >= {"ts", "cpu_count", "cpu_used_pct", "mem_total", "mem_used", "disk_used", "disk_total"}


def test_unknown_route_and_method(envd: Envd, sandbox: StandInSandbox) -> None:
    with envd.http(sandbox) as http:
        assert http.get("/nope").status_code == 404
        assert http.delete("/files").status_code == 405


@pytest.mark.slow
def test_a_large_upload_streams_to_disk(envd: Envd, sandbox: StandInSandbox) -> None:
    size = 200 << 20
    chunk = os.urandom(1 << 20)

    def body() -> Iterator[bytes]:
        for _ in range(size // len(chunk)):
            yield chunk

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with envd.http(sandbox) as http:
        r = http.post(
            "/files", params={"path": "big.bin"}, content=body(), headers={"Content-Type": "application/octet-stream"}
        )
        assert r.status_code == 200, r.text
        received = 0
        with http.stream("GET", "/files", params={"path": "big.bin"}, headers={"Accept-Encoding": "identity"}) as down:
            for part in down.iter_raw():
                received += len(part)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert received == size and sandbox.host(f"{HOME}/big.bin").stat().st_size == size
    assert grown_mib < 64, f"the server (in this process) grew {grown_mib:.0f} MiB for a {size >> 20} MiB round trip"
    json.dumps(r.json())


def test_a_signed_url_without_headers_finds_its_sandbox(envd: Envd) -> None:
    sandbox = _secure(envd, token="tok-bare")
    sandbox.host(f"{HOME}/bare.txt").write_text("no headers")
    signature = expected_signature("bare.txt", "read", "", "tok-bare", None)
    bare = httpx.get(f"{envd.url}/files", params={"path": "bare.txt", "signature": signature})
    assert bare.status_code == 200 and bare.text == "no headers"
    forged = httpx.get(f"{envd.url}/files", params={"path": "bare.txt", "signature": "v1_forged"})
    assert forged.status_code == 401


def test_a_batch_keeps_large_pieces_and_gathers_small_ones_in_order(tmp_path: Path) -> None:
    # Large pieces go to os.writev as they came; small ones are gathered, so that a body that
    # arrives a byte at a time never asks writev for more than the kernel's 1,024 buffers.
    pieces = [os.urandom(size) for size in (1, 70_000, *([3] * 5000), 64 * 1024, 10, 1 << 20, 5)]
    batch = _Batch()
    for piece in pieces:
        batch.add(piece)
    assert batch.size == sum(map(len, pieces))
    assert len(batch.parts) == 7
    large = [part for part in batch.parts if len(part) >= 64 * 1024]
    assert [id(part) for part in large] == [id(pieces[1]), id(pieces[-4]), id(pieces[-2])]  # not copies
    target = tmp_path / "batch"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT)
    try:
        _write_all(fd, batch.parts)
    finally:
        os.close(fd)
    assert target.read_bytes() == b"".join(pieces)
