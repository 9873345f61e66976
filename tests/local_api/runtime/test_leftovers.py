"""What a killed server leaves: its state folder is removed by the next server, and no id-map folder piles up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from e2b_local_api import DEV_API_KEY
from e2b_local_api.runtime import isolation, leftovers
from e2b_local_api.runtime.leftovers import LOCK, STATE_PREFIX, id_map_writers, own_state_folder, sweep_dead_state

from tests.local_api.conftest import free_socket
from tests.local_api.sandboxes import Envd, answers, wait_for

# A process that makes its state folder, says where, and waits to be killed.
HOLDER = """
import sys, time
from e2b_local_api.runtime.leftovers import own_state_folder
folder, _ = own_state_folder(keep="--keep" in sys.argv)
print(folder, flush=True)
time.sleep(3600)
"""


def holder(tmp: Path, *flags: str) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    process = subprocess.Popen([sys.executable, "-c", HOLDER, *flags], env=env, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def killed(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait()


def test_the_sweep_removes_only_the_folders_whose_server_is_dead(tmp_path: Path) -> None:
    dead, dead_folder = holder(tmp_path)
    alive, alive_folder = holder(tmp_path)
    kept, kept_folder = holder(tmp_path, "--keep")
    (dead_folder / "sandboxes" / "one").mkdir(parents=True)
    (dead_folder / "sandboxes" / "one" / "file").write_text("left behind")
    unlocked = tmp_path / f"{STATE_PREFIX}being-made"  # no lock file yet: a server making it
    unlocked.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / LOCK).touch()
    (tmp_path / f"{STATE_PREFIX}link").symlink_to(outside)
    other = tmp_path / f"{STATE_PREFIX}someone-else"
    other.mkdir()
    (other / LOCK).touch()
    if os.geteuid() == 0:
        os.chown(other, 12345, 12345)
    try:
        killed(dead)
        killed(kept)
        removed = sweep_dead_state(tmp_path)
        assert removed == [dead_folder]
        assert not dead_folder.exists()
        assert alive_folder.is_dir() and kept_folder.is_dir() and unlocked.is_dir() and (outside / LOCK).exists()
        assert (tmp_path / f"{STATE_PREFIX}link").is_symlink()
        if os.geteuid() == 0:
            assert other.is_dir()
        killed(alive)
        assert sweep_dead_state(tmp_path) == [alive_folder]
    finally:
        for process in (dead, alive, kept):
            if process.poll() is None:
                killed(process)


def test_the_lock_is_held_from_the_moment_its_name_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    folder, fd = own_state_folder()
    try:
        assert sorted(p.name for p in folder.iterdir()) == [LOCK]
        assert sweep_dead_state(tmp_path) == []  # this process holds it
    finally:
        os.close(fd)
    assert sweep_dead_state(tmp_path) == [folder]


@pytest.mark.skipif(os.geteuid() != 0, reason="the shared id-map folder is root's")
def test_the_id_map_folder_is_shared_and_never_follows_a_planted_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(leftovers, "SHARED_ROOT", tmp_path / "run")
    script = "#!/bin/sh\necho {map_file}\n"
    first = id_map_writers(script)
    assert first == str(tmp_path / "run" / "idmap")
    assert (Path(first) / "newuidmap").read_text() == "#!/bin/sh\necho uid_map\n"
    target = tmp_path / "not-a-tool"
    target.write_text("untouched")
    (Path(first) / "newgidmap").unlink()
    (Path(first) / "newgidmap").symlink_to(target)
    assert id_map_writers(script) == first
    assert target.read_text() == "untouched"
    assert not (Path(first) / "newgidmap").is_symlink()
    assert (Path(first) / "newgidmap").read_text() == "#!/bin/sh\necho gid_map\n"
    assert sorted(p.name for p in Path(first).iterdir()) == ["newgidmap", "newuidmap"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the shared id-map folder is root's")
def test_an_id_map_folder_others_can_reach_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "run"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setattr(leftovers, "SHARED_ROOT", shared)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    folder = id_map_writers("#!/bin/sh\n")
    assert Path(folder).parent == tmp_path and Path(folder).name.startswith("e2b-local-idmap-")
    assert not (shared / "idmap").exists()


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A temp folder a root server's sandboxes (uid 100000) can pass through, as the system's temp folder is."""
    folder = Path(tempfile.mkdtemp(prefix="e2b-leftovers-test-"))
    folder.chmod(0o711)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def test_a_killed_server_s_sandbox_files_are_gone_once_the_next_server_starts(reachable: Path) -> None:
    if not isolation.probe().available:
        pytest.skip("sandboxes cannot run processes on this machine")
    tmp_path = reachable
    first, url = _server(tmp_path)
    try:
        api = httpx.Client(base_url=url, headers={"X-API-Key": DEV_API_KEY}, timeout=30)
        sandbox = api.post("/sandboxes", json={"templateID": "base", "timeout": 300}).json()
        Envd(url, sandbox["sandboxID"], sandbox["envdAccessToken"]).run("echo data > /home/user/file")
        states = [p for p in tmp_path.iterdir() if p.name.startswith(STATE_PREFIX)]
        assert len(states) == 1 and list(states[0].rglob("file"))
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert states[0].is_dir()  # SIGKILL: no clean-up ran
        second, _ = _server(tmp_path)
        try:
            now = [p for p in tmp_path.iterdir() if p.name.startswith(STATE_PREFIX)]
            assert not states[0].exists() and len(now) == 1
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=30)
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(STATE_PREFIX)]  # its own, at its exit
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


def _server(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    command = [sys.executable, "-m", "e2b_local_api", "--port", str(port), "--log-level", "warning"]
    env = {**os.environ, "TMPDIR": str(tmp)}
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: answers(url) or server.poll() is not None, "the server to answer")
    assert server.poll() is None
    return server, url
