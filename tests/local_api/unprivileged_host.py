"""A host where the local server is not root and bubblewrap really fails: the server's tests run it there.

Debian's and Ubuntu's defaults let bubblewrap work, so the hosts `--no-isolation` is for (a Docker container
under its default seccomp profile, a kernel that forbids unprivileged user namespaces) are made here for one
process: run as a script by root, it enters a user namespace of its own with every id mapped onto itself,
sets that namespace's `user.max_user_namespaces` to 0 (bubblewrap's `--unshare-user` then fails with ENOSPC,
as a refusing kernel makes it fail), drops to an unprivileged uid and execs the command. Nothing of the host
changes: the limit holds inside that namespace only, and ends with it.

    python -I unprivileged_host.py UID -- COMMAND...
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

CLONE_NEWUSER = 0x10000000
NOBODY = 65534
SITE_PACKAGES = next(p for p in sys.path if p.endswith("site-packages"))
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
    return None


def server_command(*flags: str, uid: int = NOBODY) -> list[str]:
    """`e2b-local-api FLAGS` as `uid`, on this unprivileged host (its state folder must be writable by `uid`)."""
    server = ["/usr/bin/python3", "-I", "-c", SERVER, SITE_PACKAGES, *flags]
    return [sys.executable, "-I", __file__, str(uid), "--", *server]


def _enter(uid: int, command: list[str]) -> None:
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
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.execv(command[0], command)


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: unprivileged_host.py UID -- COMMAND...")
    _enter(int(sys.argv[1]), sys.argv[3:])
