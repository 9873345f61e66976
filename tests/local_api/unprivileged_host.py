"""The local server as an unprivileged user, on a host where bubblewrap works or (`forbid_namespaces`) really fails.

Run as a script by root, it drops to an unprivileged uid and execs the command. To forbid namespaces it
first enters a user namespace of its own with every id mapped onto itself and sets that namespace's
`user.max_user_namespaces` to 0: bubblewrap's `--unshare-user` then fails with ENOSPC, as it fails in a
Docker container under its default seccomp profile or on a kernel that refuses unprivileged user
namespaces. Nothing of the host changes: the limit holds inside that namespace only, and ends with it.

    python -I unprivileged_host.py UID [--forbid-namespaces] -- COMMAND...
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

CLONE_NEWUSER = 0x10000000
NOBODY = 65534
SITE_PACKAGES = next((p for p in sys.path if p.endswith(("site-packages", "dist-packages"))), None)
SERVER = (  # the server, run by the host's python3: the test's interpreter lives under /root, out of its reach
    "import runpy, site, sys; site.addsitedir(sys.argv.pop(1)); "
    "runpy.run_module('e2b_local_api', run_name='__main__', alter_sys=True)"
)


def unavailable() -> str | None:
    """Why this host cannot be made here, or None."""
    if os.geteuid() != 0:
        return "making an unprivileged host needs root (to write a user namespace's id maps)"
    if not os.access("/usr/bin/python3", os.X_OK):
        return "no /usr/bin/python3 to run the server as an unprivileged user"
    if SITE_PACKAGES is None:
        return "the tests' interpreter has no site-packages folder to lend the unprivileged server"
    return None


def server_command(*flags: str, uid: int = NOBODY, forbid_namespaces: bool = True) -> list[str]:
    """`e2b-local-api FLAGS` as `uid`, on this unprivileged host (its state folder must be writable by `uid`)."""
    assert SITE_PACKAGES is not None, unavailable()
    server = ["/usr/bin/python3", "-I", "-c", SERVER, SITE_PACKAGES, *flags]
    forbid = ["--forbid-namespaces"] if forbid_namespaces else []
    return [sys.executable, "-I", __file__, str(uid), *forbid, "--", *server]


def _run_as(uid: int, command: list[str]) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.execv(command[0], command)


def _forbid_namespaces() -> None:
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    helper = os.fork()
    if helper == 0:  # stays in the host's namespace, where root may write any map of its parent's namespace
        os.close(ready_w)
        os.close(mapped_r)
        if os.read(ready_r, 1) == b"1":
            parent = os.getppid()
            for kind in ("uid_map", "gid_map"):
                Path(f"/proc/{parent}/{kind}").write_text("0 0 4294967295\n")
            os.write(mapped_w, b"1")
        os._exit(0)
    os.close(ready_r)
    os.close(mapped_w)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        sys.exit(f"unprivileged_host: unshare(CLONE_NEWUSER): {os.strerror(ctypes.get_errno())}")
    os.write(ready_w, b"1")
    mapped = os.read(mapped_r, 1) == b"1"
    os.waitpid(helper, 0)
    if not mapped:
        sys.exit("unprivileged_host: the id maps were not written")
    Path("/proc/sys/user/max_user_namespaces").write_text("0\n")


if __name__ == "__main__":
    uid, *rest = sys.argv[1:]
    forbidden = rest[:1] == ["--forbid-namespaces"]
    rest = rest[1:] if forbidden else rest
    if rest[:1] != ["--"] or len(rest) < 2:
        sys.exit("usage: unprivileged_host.py UID [--forbid-namespaces] -- COMMAND...")
    if forbidden:
        _forbid_namespaces()
    _run_as(int(uid), rest[1:])
