"""The Filesystem service over real HTTP, driven by the generated Connect client (JSON codec, as the SDK)."""

from __future__ import annotations

import os
import sys
import time

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from e2b_local_api.dataplane import filesystem as service
from e2b_local_api.wire.envd.filesystem import filesystem_pb as pb

from .conftest import Envd, StandInSandbox, headers_for

HOME = "/home/user"


def _error(call) -> ConnectError:  # type: ignore[no-untyped-def]
    with pytest.raises(ConnectError) as caught:
        call()
    return caught.value


def test_stat_a_file_relative_to_home(envd: Envd, sandbox: StandInSandbox) -> None:
    sandbox.host(f"{HOME}/a.txt").write_text("hello")
    os.chmod(sandbox.host(f"{HOME}/a.txt"), 0o640)
    entry = envd.rpc().stat(pb.StatRequest(path="a.txt"), headers=headers_for(sandbox)).entry
    assert entry is not None
    assert (entry.name, entry.path, entry.type, entry.size) == ("a.txt", f"{HOME}/a.txt", pb.FileType.FILE, 5)
    assert (entry.mode, entry.permissions) == (0o640, "-rw-r-----")
    assert not entry.is_symlink and not entry.has_field("symlink_target")
    assert entry.modified_time is not None and abs(entry.modified_time.seconds - time.time()) < 60
    assert entry.owner == "root" if os.geteuid() == 0 else entry.owner == "user"


def test_stat_a_folder_and_the_root(envd: Envd, sandbox: StandInSandbox) -> None:
    rpc = envd.rpc()
    home = rpc.stat(pb.StatRequest(path="~"), headers=headers_for(sandbox)).entry
    assert home is not None and (home.path, home.type, home.permissions[0]) == (HOME, pb.FileType.DIRECTORY, "d")
    top = rpc.stat(pb.StatRequest(path="/"), headers=headers_for(sandbox)).entry
    assert top is not None and (top.path, top.name, top.type) == ("/", "/", pb.FileType.DIRECTORY)


def test_stat_as_root_starts_at_roots_home(envd: Envd, sandbox: StandInSandbox) -> None:
    sandbox.host("/root/mine").write_text("x")
    entry = envd.rpc().stat(pb.StatRequest(path="mine"), headers=headers_for(sandbox, "root")).entry
    assert entry is not None and entry.path == "/root/mine"


def test_unknown_user_is_unauthenticated(envd: Envd, sandbox: StandInSandbox) -> None:
    error = _error(lambda: envd.rpc().stat(pb.StatRequest(path="/"), headers=headers_for(sandbox, "mallory")))
    assert error.code == Code.UNAUTHENTICATED and "mallory" in error.message


def test_stat_a_symlink_reports_its_resolved_target(envd: Envd, sandbox: StandInSandbox) -> None:
    sandbox.host(f"{HOME}/target.txt").write_text("data")
    os.chmod(sandbox.host(f"{HOME}/target.txt"), 0o600)
    os.symlink("target.txt", sandbox.host(f"{HOME}/link"))
    entry = envd.rpc().stat(pb.StatRequest(path="link"), headers=headers_for(sandbox)).entry
    assert entry is not None
    assert entry.is_symlink and entry.type == pb.FileType.FILE and entry.mode == 0o600
    assert entry.symlink_target == f"{HOME}/target.txt"
    assert entry.permissions == "Lrwxrwxrwx" and entry.path == f"{HOME}/link"


def test_a_symlink_to_the_host_root_stays_inside(envd: Envd, sandbox: StandInSandbox) -> None:
    os.symlink("/", sandbox.host(f"{HOME}/escape"))
    os.symlink("../../../../../../../../etc/passwd", sandbox.host(f"{HOME}/passwd"))
    rpc = envd.rpc()
    entry = rpc.stat(pb.StatRequest(path="escape"), headers=headers_for(sandbox)).entry
    assert entry is not None and entry.symlink_target == "/" and entry.type == pb.FileType.DIRECTORY
    # ListDir through the link lists the sandbox's / — never the host's.
    names = {e.name for e in rpc.list_dir(pb.ListDirRequest(path="escape"), headers=headers_for(sandbox)).entries}
    assert names == {"home", "root", "tmp", "etc"}
    linked = rpc.stat(pb.StatRequest(path="passwd"), headers=headers_for(sandbox)).entry
    assert linked is not None and linked.symlink_target == "/etc/passwd"
    assert linked.size == len("../../../../../../../../etc/passwd")


def test_paths_outside_the_root_resolve_inside_it(envd: Envd, sandbox: StandInSandbox) -> None:
    rpc = envd.rpc()
    for path in ("../../etc/passwd", "/../../../etc/passwd", f"{HOME}/../../../etc/passwd"):
        entry = rpc.stat(pb.StatRequest(path=path), headers=headers_for(sandbox)).entry
        assert (
            entry is not None
            and entry.path == "/etc/passwd"
            and entry.size == len(sandbox.host("/etc/passwd").read_bytes())
        )
    error = _error(lambda: rpc.stat(pb.StatRequest(path="/proc/1/environ"), headers=headers_for(sandbox)))
    assert error.code == Code.NOT_FOUND


def test_nul_byte_is_invalid_argument(envd: Envd, sandbox: StandInSandbox) -> None:
    error = _error(lambda: envd.rpc().stat(pb.StatRequest(path="a\0b"), headers=headers_for(sandbox)))
    assert error.code == Code.INVALID_ARGUMENT and "NUL" in error.message


def test_stat_missing_is_not_found(envd: Envd, sandbox: StandInSandbox) -> None:
    error = _error(lambda: envd.rpc().stat(pb.StatRequest(path="nope/deeper"), headers=headers_for(sandbox)))
    assert error.code == Code.NOT_FOUND


def test_list_dir_depth_and_order(envd: Envd, sandbox: StandInSandbox) -> None:
    base = sandbox.host(f"{HOME}/tree")
    (base / "b" / "deep" / "deeper").mkdir(parents=True)
    (base / "a.txt").write_text("1")
    (base / "b" / "c.txt").write_text("2")
    os.symlink("b", base / "link")
    rpc = envd.rpc()
    one = [e.path for e in rpc.list_dir(pb.ListDirRequest(path="tree"), headers=headers_for(sandbox)).entries]
    assert one == [f"{HOME}/tree/a.txt", f"{HOME}/tree/b", f"{HOME}/tree/link"]
    two = [e.path for e in rpc.list_dir(pb.ListDirRequest(path="tree", depth=2), headers=headers_for(sandbox)).entries]
    assert two == [
        f"{HOME}/tree/a.txt",
        f"{HOME}/tree/b",
        f"{HOME}/tree/b/c.txt",
        f"{HOME}/tree/b/deep",
        f"{HOME}/tree/link",
    ]
    # Listing through a link shows the requested path, not the resolved one.
    via_link = [e.path for e in rpc.list_dir(pb.ListDirRequest(path="tree/link"), headers=headers_for(sandbox)).entries]
    assert via_link == [f"{HOME}/tree/link/c.txt", f"{HOME}/tree/link/deep"]


def test_list_dir_errors(envd: Envd, sandbox: StandInSandbox) -> None:
    sandbox.host(f"{HOME}/file").write_text("x")
    rpc = envd.rpc()
    assert (
        _error(lambda: rpc.list_dir(pb.ListDirRequest(path="file"), headers=headers_for(sandbox))).code
        == Code.INVALID_ARGUMENT
    )
    assert (
        _error(lambda: rpc.list_dir(pb.ListDirRequest(path="none"), headers=headers_for(sandbox))).code
        == Code.NOT_FOUND
    )


def test_a_name_that_is_not_utf8_is_internal_and_the_connection_goes_on(envd: Envd, sandbox: StandInSandbox) -> None:
    # proto3 strings are UTF-8, and envd's marshalling refuses such a name: so does this server, as an answer.
    folder = sandbox.host(f"{HOME}/odd")
    folder.mkdir()
    open(os.fsencode(folder) + b"/a\xffb", "wb").close()
    with envd.rpc() as rpc:
        for _ in range(2):  # the same connection: the first answer left it fit for the next request
            error = _error(lambda: rpc.list_dir(pb.ListDirRequest(path="odd"), headers=headers_for(sandbox)))
            assert error.code == Code.INTERNAL and "not valid UTF-8 (byte 0xff in " in str(error)
            assert "a\\udcffb'" in str(error)  # the name as Python writes it: printable, whatever its bytes
            entry = rpc.stat(pb.StatRequest(path="odd"), headers=headers_for(sandbox)).entry
            assert entry is not None and entry.name == "odd"


def test_make_dir_creates_parents_then_already_exists(envd: Envd, sandbox: StandInSandbox) -> None:
    rpc = envd.rpc()
    entry = rpc.make_dir(pb.MakeDirRequest(path="x/y/z"), headers=headers_for(sandbox)).entry
    assert entry is not None and (entry.path, entry.type, entry.mode) == (f"{HOME}/x/y/z", pb.FileType.DIRECTORY, 0o755)
    assert sandbox.host(f"{HOME}/x/y/z").is_dir()
    if os.geteuid() == 0:
        assert sandbox.host(f"{HOME}/x").stat().st_uid == 1000 and entry.owner == "user" and entry.group == "user"
    again = _error(lambda: rpc.make_dir(pb.MakeDirRequest(path="x/y/z"), headers=headers_for(sandbox)))
    assert again.code == Code.ALREADY_EXISTS
    sandbox.host(f"{HOME}/plain").write_text("")
    assert (
        _error(lambda: rpc.make_dir(pb.MakeDirRequest(path="plain"), headers=headers_for(sandbox))).code
        == Code.INVALID_ARGUMENT
    )


def test_move_renames_and_makes_the_destination_folder(envd: Envd, sandbox: StandInSandbox) -> None:
    sandbox.host(f"{HOME}/from.txt").write_text("moved")
    entry = (
        envd.rpc()
        .move(pb.MoveRequest(source="from.txt", destination="new/dir/to.txt"), headers=headers_for(sandbox))
        .entry
    )
    assert entry is not None and entry.path == f"{HOME}/new/dir/to.txt" and entry.name == "to.txt"
    assert sandbox.host(f"{HOME}/new/dir/to.txt").read_text() == "moved"
    assert not sandbox.host(f"{HOME}/from.txt").exists()
    missing = _error(
        lambda: envd.rpc().move(pb.MoveRequest(source="gone", destination="x"), headers=headers_for(sandbox))
    )
    assert missing.code == Code.NOT_FOUND


def test_move_of_a_symlink_moves_the_link(envd: Envd, sandbox: StandInSandbox) -> None:
    os.symlink("/", sandbox.host(f"{HOME}/toroot"))
    envd.rpc().move(pb.MoveRequest(source="toroot", destination="renamed"), headers=headers_for(sandbox))
    assert os.readlink(sandbox.host(f"{HOME}/renamed")) == "/"


def test_remove_files_trees_links_and_missing(envd: Envd, sandbox: StandInSandbox, tmp_path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("host file")
    tree = sandbox.host(f"{HOME}/tree")
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "f").write_text("x")
    os.symlink(str(outside), tree / "hostlink")  # a link to a host folder: removing the tree removes the link only
    rpc = envd.rpc()
    rpc.remove(pb.RemoveRequest(path="tree"), headers=headers_for(sandbox))
    assert not tree.exists() and (outside / "keep").read_text() == "host file"
    rpc.remove(pb.RemoveRequest(path="never/was/here"), headers=headers_for(sandbox))
    root_error = _error(lambda: rpc.remove(pb.RemoveRequest(path="/"), headers=headers_for(sandbox)))
    assert root_error.code == Code.INVALID_ARGUMENT


@pytest.mark.parametrize("mount_point", ["/root", "/tmp", "/home", "/etc"])
def test_a_mount_point_is_never_moved_replaced_or_removed(
    envd: Envd, sandbox: StandInSandbox, mount_point: str
) -> None:
    """The red team's escape: `/root` moved aside and a link to `/` moved into its place, which the next
    bubblewrap of the sandbox (a fork, a snapshot's sandbox) would have bound as `/root`."""
    os.symlink("/", sandbox.host("/tmp/evil"))
    rpc, headers = envd.rpc(), headers_for(sandbox, "root")
    inside = f"{mount_point}/../{mount_point.lstrip('/')}"  # the same folder by another spelling
    for source, destination, done in (
        (mount_point, "/home/user/aside", "moved"),
        (inside, "/home/user/aside", "moved"),
        ("/tmp/evil", mount_point, "replaced"),
    ):
        request = pb.MoveRequest(source=source, destination=destination)
        error = _error(lambda: rpc.move(request, headers=headers))  # noqa: B023 -- called at once
        assert (error.code, error.message) == (
            Code.FAILED_PRECONDITION,
            f"'{mount_point}' is a mount point of the sandbox and cannot be {done}",
        )
    for path in (mount_point, inside):
        error = _error(lambda: rpc.remove(pb.RemoveRequest(path=path), headers=headers))  # noqa: B023 -- at once
        assert error.code == Code.FAILED_PRECONDITION and "cannot be removed" in error.message
    assert sandbox.host(mount_point).is_dir() and not sandbox.host(mount_point).is_symlink()
    # What is in them moves and goes as before.
    sandbox.host(f"{mount_point}/inner").mkdir()
    rpc.move(pb.MoveRequest(source=f"{mount_point}/inner", destination="/home/user/inner2"), headers=headers)
    rpc.remove(pb.RemoveRequest(path="/home/user/inner2"), headers=headers)
    assert not sandbox.host("/home/user/inner2").exists()


def test_list_dir_walks_a_tree_deeper_than_python_s_recursion_limit(envd: Envd, sandbox: StandInSandbox) -> None:
    """A recursive walk failed past the interpreter's limit (a red team's 1,500 levels: `unknown`). The limit is
    lowered for the call, so that the tree, which the walk resolves level by level from the root, stays small."""
    levels = 350
    folder = sandbox.host(f"{HOME}/deep")
    folder.mkdir()
    for _ in range(levels - 1):
        folder = folder / "d"
        folder.mkdir()
    (sandbox.host(f"{HOME}/deep") / "after").write_text("x")  # after the whole tree: depth first, names in order
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)  # the walk's server thread starts a few dozen frames deep
    try:
        listed = envd.rpc().list_dir(pb.ListDirRequest(path="deep", depth=levels + 5), headers=headers_for(sandbox))
    finally:
        sys.setrecursionlimit(limit)
    paths = [entry.path for entry in listed.entries]
    assert paths == [f"{HOME}/deep/after"] + [f"{HOME}/deep" + "/d" * level for level in range(1, levels)]


def test_metadata_from_xattrs(envd: Envd, sandbox: StandInSandbox) -> None:
    path = sandbox.host(f"{HOME}/meta")
    path.write_text("x")
    os.setxattr(path, "user.e2b.owner-team", b"infra")
    os.setxattr(path, "user.other", b"hidden")
    entry = envd.rpc().stat(pb.StatRequest(path="meta"), headers=headers_for(sandbox)).entry
    assert entry is not None and dict(entry.metadata) == {"owner-team": "infra"}


def test_unknown_sandbox_is_unavailable_not_found(envd: Envd) -> None:
    error = _error(lambda: envd.rpc().stat(pb.StatRequest(path="/"), headers={"E2b-Sandbox-Id": "nope"}))
    assert error.code == Code.UNAVAILABLE and "was not found" in error.message


def test_a_1_gib_unary_request_is_refused_by_size(envd: Envd, sandbox: StandInSandbox) -> None:
    """Declared as 1 GiB, refused once past the limit: the answer comes while the client is still sending."""
    import socket
    import threading

    host, port = envd.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    head = (
        "POST /filesystem.Filesystem/Stat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"E2b-Sandbox-Id: {sandbox.sandbox_id}\r\nContent-Length: {1 << 30}\r\n\r\n"
    )
    sent = [0]

    def send_until_refused() -> None:
        # The server stops reading after its limit; this sender then blocks until the socket closes.
        try:
            sock.sendall(head.encode() + b'{"path":"')
            chunk = b"a" * (1 << 20)
            while sent[0] < 1 << 30:
                sock.sendall(chunk)
                sent[0] += len(chunk)
        except OSError:
            pass

    sender = threading.Thread(target=send_until_refused, daemon=True)
    sender.start()
    answer = b""
    try:
        while b"larger than" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    finally:
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        sender.join(timeout=30)
    assert answer.startswith(b"HTTP/1.1 429 ") and b"resource_exhausted" in answer, answer[:500]
    assert sent[0] < 64 << 20, f"the server read {sent[0] >> 20} MiB before refusing"


def test_unknown_rpc_and_malformed_json(envd: Envd, sandbox: StandInSandbox) -> None:
    import httpx

    unknown = httpx.post(
        f"{envd.url}/filesystem.Filesystem/Nope",
        content=b"{}",
        headers={**headers_for(sandbox), "Content-Type": "application/json"},
    )
    assert unknown.status_code == 404
    bad = httpx.post(
        f"{envd.url}/filesystem.Filesystem/Stat",
        content=b"{not json",
        headers={**headers_for(sandbox), "Content-Type": "application/json"},
    )
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_argument"


def test_watcher_limit_per_sandbox(envd: Envd, sandbox: StandInSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "MAX_WATCHES_PER_SANDBOX", 2)
    rpc = envd.rpc()
    ids = [
        rpc.create_watcher(pb.CreateWatcherRequest(path="~"), headers=headers_for(sandbox)).watcher_id for _ in range(2)
    ]
    error = _error(lambda: rpc.create_watcher(pb.CreateWatcherRequest(path="~"), headers=headers_for(sandbox)))
    assert error.code == Code.RESOURCE_EXHAUSTED and "remove a watcher" in error.message
    for watcher_id in ids:
        rpc.remove_watcher(pb.RemoveWatcherRequest(watcher_id=watcher_id), headers=headers_for(sandbox))
    again = rpc.create_watcher(pb.CreateWatcherRequest(path="~"), headers=headers_for(sandbox)).watcher_id
    rpc.remove_watcher(pb.RemoveWatcherRequest(watcher_id=again), headers=headers_for(sandbox))
