"""How a sandbox is isolated: bubblewrap's command line, and whether this host can run it.

As root, a sandbox gets a user namespace mapping ids 0-65535 inside onto host ids 100000-165535 (written
by the server: bubblewrap maps one id only), so `root` inside is no one in particular outside (not the
identity map: the kernel treats uid 0 as root wherever it compares uids, e.g. for sysctls). Unprivileged,
bubblewrap maps the server's own uid to 1000 and there is no root inside. Either way: its own mount, pid,
ipc and uts namespaces, and a network namespace unless it shares the host's (`network.py`: slirp4netns).
`--no-isolation` (Mode.NONE, asked for, never the probe's answer): no bubblewrap, the agent is the
server's plain child, and the server says so at start and on every create.
"""

from __future__ import annotations

import functools
import os
import select
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from e2b_local_api.runtime.agent import HOST as HOST_AGENT
from e2b_local_api.runtime.layout import BOUND, HOSTNAME, host_resolv_conf
from e2b_local_api.runtime.leftovers import id_map_writers
from e2b_local_api.runtime.network import RESOLV_CONF as SLIRP_RESOLV_CONF
from e2b_local_api.runtime.network import GuardError, LinkError, attach_blocking, read_info

NO_RESOLVER = "nameserver 127.0.0.1\n"  # a sandbox without a network: its own loopback, where nothing answers
ID_RANGE = 65536
ID_BASE = 100000  # host id of id 0 inside (MAPPED_ROOT)
# Host /etc entries programs expect besides the sandbox's own files (alternatives: awk, vi...).
_HOST_ETC = ("alternatives", "ssl", "ca-certificates", "ld.so.cache", "localtime", "mime.types")
_TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


class Mode(Enum):
    MAPPED_ROOT = "mapped-root"  # the server is root: ids 0-65535 mapped onto themselves
    UNPRIVILEGED = "unprivileged"  # bubblewrap's own mapping: the server's uid is 1000 inside
    UNAVAILABLE = "unavailable"
    NONE = "none"  # --no-isolation: the agent and its commands are plain processes of the server's user


@dataclass(frozen=True)
class Isolation:
    mode: Mode
    bwrap: str | None
    python: str | None
    reason: str = ""  # why UNAVAILABLE
    slirp: str | None = None  # slirp4netns, when networked sandboxes get a network namespace of their own
    shared_network_reason: str = ""  # why they share the host's, when they do
    guard: tuple[str, str] | None = None  # nsenter and tc, when they set slirp sandboxes' loopback guard
    unguarded_reason: str = ""  # why they do not, when slirp4netns works

    @property
    def available(self) -> bool:
        return self.mode is not Mode.UNAVAILABLE

    @property
    def has_root(self) -> bool:
        return self.mode is Mode.MAPPED_ROOT

    def describe(self) -> str:
        if self.mode is Mode.MAPPED_ROOT:
            return (
                f"sandboxes run in bubblewrap (own user namespace: uids 0-65535 inside are {ID_BASE}-"
                f"{ID_BASE + ID_RANGE - 1} on the host; own pid, mount, ipc and uts namespaces); "
                + self.describe_network()
            )
        if self.mode is Mode.UNPRIVILEGED:
            return (
                "sandboxes run in bubblewrap as uid 1000 (the server is not root: commands as user 'root' are "
                "refused); " + self.describe_network()
            )
        if self.mode is Mode.NONE:
            return "WARNING: sandboxes are NOT isolated (--no-isolation): " + _NOT_ISOLATED.format(user=_server_user())
        return (
            f"sandboxes cannot run processes here: {self.reason}; data-plane calls are refused "
            "(start the server with --no-isolation to run their commands anyway, as plain processes, unisolated)"
        )

    def create_warning(self, sandbox_id: str, *, networked: bool) -> str | None:
        """What the server says of each sandbox it starts without isolation (None: it is isolated)."""
        if self.mode is not Mode.NONE:
            return None
        words = f"WARNING: sandbox {sandbox_id} is NOT isolated (--no-isolation): its commands run as {_server_user()}"
        words += " whatever user they ask for, see the host's files and processes and share its network"
        if not networked:
            words += "; allow_internet_access=False (or a deny of 0.0.0.0/0) is NOT enforced"
        return words

    def describe_network(self) -> str:
        if self.slirp is not None and self.guard is not None:
            return "networked sandboxes get their own network through slirp4netns, without the host's loopback"
        if self.slirp is not None:
            return (
                "networked sandboxes get their own network through slirp4netns, but UDP datagrams sent by a socket "
                f"bound to its tap0 still reach the host's loopback: {self.unguarded_reason}"
            )
        return (
            "networked sandboxes share the host's network, its loopback (this server) included: "
            f"{self.shared_network_reason}"
        )


_NOT_ISOLATED = (
    "commands run as {user} whatever user they ask for, as plain processes of this server in the sandbox's "
    "folder; they see the host's files, paths and /etc, can signal every process of that user, and share the "
    "host's network (allow_internet_access=False is not enforced); nothing is enforced but the kill of a "
    "sandbox's process tree"
)


def _server_user() -> str:
    uid = os.geteuid()
    return "the host's ROOT (uid 0)" if uid == 0 else f"this server's user (uid {uid})"


def without_isolation() -> Isolation:
    """`--no-isolation`: no bubblewrap, even where it works; the agent needs only a host python."""
    python = _host_python()
    if python is None:
        return Isolation(Mode.UNAVAILABLE, None, None, "no /usr/bin/python3 to run the sandbox's agent")
    return Isolation(Mode.NONE, None, python)


def _host_python() -> str | None:
    return next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)), None)


def probe() -> Isolation:
    """Whether bubblewrap, a host python, user namespaces and slirp4netns work here (short runs, some 60 ms)."""
    bwrap = shutil.which("bwrap")
    python = _host_python()
    if bwrap is None:
        return Isolation(
            Mode.UNAVAILABLE, None, python, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
        )
    if python is None:
        return Isolation(Mode.UNAVAILABLE, bwrap, None, "no /usr/bin/python3 to run the sandbox's agent")
    mode = Mode.MAPPED_ROOT if os.geteuid() == 0 and shutil.which("unshare") else Mode.UNPRIVILEGED
    argv = [*command_prefix(mode, bwrap), *_system_binds(), "--unshare-pid", "--unshare-net", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, env=environment(mode))
    except (OSError, subprocess.SubprocessError) as failure:
        return Isolation(Mode.UNAVAILABLE, bwrap, python, f"bubblewrap does not start: {failure}")
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        return Isolation(Mode.UNAVAILABLE, bwrap, python, f"bubblewrap cannot create namespaces here ({detail})")
    tools = _guard_tools()
    slirp, why_not, unguarded = _probe_slirp(mode, bwrap, tools if isinstance(tools, tuple) else None)
    if slirp is None:
        return Isolation(mode, bwrap, python, shared_network_reason=why_not)
    if isinstance(tools, str) or unguarded:
        return Isolation(mode, bwrap, python, slirp=slirp, unguarded_reason=unguarded or str(tools))
    return Isolation(mode, bwrap, python, slirp=slirp, guard=tools)


def _guard_tools() -> tuple[str, str] | str:
    """nsenter and tc, which set a networked sandbox's loopback guard (network.py), or what is missing."""
    nsenter, tc = (shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin") for name in ("nsenter", "tc"))
    if nsenter is None or tc is None:
        return "install util-linux's nsenter and iproute2's tc (apt-get install iproute2) to drop them"
    return nsenter, tc


def _probe_slirp(mode: Mode, bwrap: str, guarded_by: tuple[str, str] | None) -> tuple[str | None, str, str]:
    """slirp4netns if it connects a sandbox-shaped namespace here (a short run, some 50 ms), else why not;
    and why its loopback guard (`guarded_by`) could not be set, if it could not."""
    slirp = shutil.which("slirp4netns")
    if slirp is None:
        return None, "install slirp4netns (apt-get install slirp4netns) to give each its own", ""
    unprivileged = mode is Mode.UNPRIVILEGED
    if unprivileged and (shutil.which("unshare") is None or shutil.which("nsenter") is None):
        return None, "an unprivileged server needs util-linux's unshare and nsenter to give each its own", ""
    info_r, info_w = os.pipe()
    box_argv = [*own_network_prefix(mode), *command_prefix(mode, bwrap), *_system_binds(), "--unshare-pid"]
    box_argv += [] if unprivileged else ["--unshare-net"]
    # The command's first line says bubblewrap has set the namespace up (its loopback too): only then may
    # slirp4netns join it, as a sandbox's is joined once its agent runs.
    box_argv += ["--die-with-parent", "--info-fd", str(info_w), "--", "/bin/sh", "-c", "echo up; exec sleep 30"]
    try:
        box = subprocess.Popen(
            box_argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            pass_fds=(info_w,), env=environment(mode), start_new_session=True,
        )  # fmt: skip
    except OSError as error:
        os.close(info_r)
        os.close(info_w)
        return None, f"slirp4netns could not be tried ({error})", ""
    os.close(info_w)
    try:
        pid = read_info(info_r, 10)
        up = box.stdout is not None and select.select([box.stdout], [], [], 10)[0] and box.stdout.readline() == b"up\n"
        if pid is None or not up:
            failure: Exception | None = LinkError("bubblewrap did not start its probe")
        else:
            # An unprivileged server's network namespace is the one its `unshare` made: bubblewrap's own pid's.
            failure = attach_blocking(
                slirp, box.pid if unprivileged else pid, 10, guarded_by, unprivileged=unprivileged
            )
    finally:
        os.close(info_r)
        box.kill()
        box.communicate()
    if isinstance(failure, GuardError):
        return slirp, "", str(failure)
    if failure is not None:
        hint = ""
        if "/dev/net/tun" in str(failure) and unprivileged:
            hint = "; Debian's udev makes /dev/net/tun 0666, which rootless slirp4netns needs"
        words = " ".join(str(failure).split())  # slirp4netns's own lines, on the server's one start line
        return None, f"slirp4netns does not work here ({words}){hint}", ""
    return slirp, "", ""


def own_network_prefix(mode: Mode) -> list[str]:
    """What runs an unprivileged server's bubblewrap in a network namespace of its own that slirp4netns can join.

    bubblewrap's own user namespace lets no one else in (its processes are not dumpable), so a user
    namespace the server owns (its uid as root there) holds the network namespace, and bubblewrap, started in
    both, makes the sandbox's own user namespace inside them: the sandbox's processes have no capability over
    that network namespace, which belongs to the user namespace above theirs.
    """
    return ["unshare", "--user", "--map-root-user", "--net", "--"] if mode is Mode.UNPRIVILEGED else []


def command_prefix(mode: Mode, bwrap: str) -> list[str]:
    """What runs bubblewrap: in a user namespace the server maps (root), or bubblewrap's own."""
    if mode is Mode.MAPPED_ROOT:
        # unshare maps the namespace's ids through newuidmap/newgidmap (ours, see `environment`),
        # becomes its root before exec (an exec as the unmapped host root would drop every
        # capability), and execs bubblewrap, which holds every capability in that namespace only.
        maps = [f"--map-users={ID_BASE},0,{ID_RANGE}", f"--map-groups={ID_BASE},0,{ID_RANGE}"]
        return ["unshare", "--user", *maps, "--setuid", "0", "--setgid", "0", "--", bwrap]
    return [bwrap, "--unshare-user", "--uid", "1000", "--gid", "1000"]


def environment(mode: Mode) -> dict[str, str]:
    """The environment bubblewrap starts with (the agent sets each command's own)."""
    path = "/usr/sbin:/usr/bin:/sbin:/bin"
    if mode is Mode.MAPPED_ROOT:
        path = f"{_id_map_writers()}:{path}"
    return {"PATH": path}


@functools.cache
def _id_map_writers() -> str:
    """A folder with `newuidmap` and `newgidmap` for unshare: as root, writing the maps is all they need to do.

    (The shadow package's setuid tools would check /etc/subuid; this server, root, maps a range it chose.)
    """
    return id_map_writers('#!/bin/sh\npid=$1; shift; echo "$@" > "/proc/$pid/{map_file}"\n')


def sandbox_argv(
    isolation: Isolation, bound: Mapping[str, int], *, network: bool, agent_source: str, agent_fd: int
) -> list[str]:
    """The whole command line of a sandbox whose first process is the agent.

    `bound`: each of the sandbox's folders (layout.BOUND), open, by name: the process must inherit them
    (bubblewrap binds each by its descriptor, then closes it).
    """
    assert isolation.python is not None
    if isolation.mode is Mode.NONE:
        # No bubblewrap: the agent alone, the server's child, told to keep its commands in reach itself.
        return [isolation.python, "-I", "-S", "-c", agent_source, str(agent_fd), HOST_AGENT]
    assert isolation.bwrap is not None
    own_network = network and isolation.slirp is not None
    argv = own_network_prefix(isolation.mode) if own_network else []
    argv += [*command_prefix(isolation.mode, isolation.bwrap), *_system_binds()]
    for name in BOUND:
        argv += ["--bind-fd", str(bound[name]), f"/{name}"]
    for name in _HOST_ETC:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", HOSTNAME]
    if not network or (own_network and isolation.mode is Mode.MAPPED_ROOT):
        argv.append("--unshare-net")  # a networked sandbox's namespace is connected once it runs (network.py)
    if own_network and isolation.mode is Mode.MAPPED_ROOT:
        # slirp4netns opens a host socket for whatever reaches tap0, 127.0.0.1 included: root inside must not
        # route loopback there (CAP_NET_ADMIN: routes, route_localnet) nor write frames to it (CAP_NET_RAW).
        argv += ["--cap-drop", "CAP_NET_ADMIN", "--cap-drop", "CAP_NET_RAW"]
    if isolation.mode is Mode.MAPPED_ROOT:
        # Root inside holds every capability of the sandbox's user namespace, and bubblewrap's mounts, made in
        # it, are not locked: with CAP_SYS_ADMIN, `mount -o remount,bind,rw /usr` made the host's /usr writable
        # (wherever its files' owners are mapped) and `umount /tmp` showed what is under a bound folder.
        argv += ["--cap-drop", "CAP_SYS_ADMIN"]
    argv += ["--die-with-parent", "--new-session", "--as-pid-1", "--chdir", "/"]
    argv += ["--", isolation.python, "-I", "-S", "-c", agent_source, str(agent_fd)]
    return argv


def _system_binds() -> list[str]:
    argv = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP_LEVEL:
        path = Path("/") / name
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), f"/{name}"]
    return [*argv, "--proc", "/proc", "--dev", "/dev"]


def check_traversable(folder: Path) -> str | None:
    """Why bubblewrap, as the sandbox's root (not the host's), could not reach `folder`; None if it can.

    Every folder above it must let others through (x); the state folder itself is made so.
    """
    for parent in folder.resolve().parents:
        if not os.stat(parent).st_mode & 0o001:
            return f"{parent} does not let other users through (chmod o+x it, or choose another --state folder)"
    return None


def resolv_conf(isolation: Isolation, networked: bool) -> str:
    """What a new sandbox's /etc/resolv.conf says: slirp4netns's resolver, the host's, or none reachable."""
    if not networked:
        return NO_RESOLVER
    return SLIRP_RESOLV_CONF if isolation.slirp is not None else host_resolv_conf()


def host_id(mode: Mode, inside: int) -> int:
    """The host uid (or gid) of id `inside` of a sandbox: who owns its files on the host.

    For the filesystem service: a file written for user `user` belongs to `host_id(mode, 1000)`.
    An unprivileged server's own uid is the only id inside, so its files are already right.
    """
    return ID_BASE + inside if mode is Mode.MAPPED_ROOT else os.geteuid()
