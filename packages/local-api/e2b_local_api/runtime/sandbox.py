"""One sandbox's process tree: its agent in bubblewrap, the commands it started, pause and kill.

The agent is pid 1 of the sandbox's pid namespace: killing it (SIGKILL from
the host) ends every process of the namespace, `setsid`'d ones included.
Pausing stops each process of the namespace with SIGSTOP, the agent too, until
a pass over `/proc` finds none left running; resuming continues them. Without
isolation (Mode.NONE) the members are the agent's descendants instead (it is
their subreaper), frozen then killed before the agent at a kill. An agent that
ends by itself (killed from the host, crashed) ends the sandbox as a kill does.
"""

from __future__ import annotations

import asyncio
import json
import os
import posixpath
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from connectrpc.code import Code
from connectrpc.errors import ConnectError

from e2b_local_api.runtime import agent, exits, isolation
from e2b_local_api.runtime.agent_client import MAX_REQUEST, AgentClient, AgentError, AgentGone, RequestTooLarge
from e2b_local_api.runtime.isolation import ID_BASE, Isolation, Mode
from e2b_local_api.runtime.layout import BOUND, USER_GID, USER_UID, Layout
from e2b_local_api.runtime.network import Link, LinkError, attach
from e2b_local_api.runtime.processes import ManagedProcess

MAX_PROCESSES = 256
START_SECONDS = 10.0
RETAIN_SECONDS = 30.0  # an ended process's `end` stays available to a late Connect, as envd keeps it
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_ARG_STRLEN = 32 * 4096  # Linux's limit for one argument or `KEY=VALUE`, its NUL included (linux/binfmts.h)
BIG_DATA_HINT = "pass big data through a file (files.write) or the process's stdin instead"
_AGENT_SOURCE = Path(agent.__file__).read_text()


class SandboxError(Exception):
    """A request the sandbox cannot serve; `kind` says which Connect code it is."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "invalid_argument", "not_found", "resource_exhausted", "unauthenticated", "unavailable"


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int
    home: str


USERS = {"user": User("user", USER_UID, USER_GID, "/home/user"), "root": User("root", 0, 0, "/root")}


@dataclass(frozen=True)
class Spawn:
    """What Start asks for, in the runtime's terms."""

    cmd: str
    args: tuple[str, ...]
    envs: Mapping[str, str]
    cwd: str | None
    user: str
    stdin: bool
    pty_size: tuple[int, int] | None  # cols, rows
    tag: str | None
    config: object  # the request's ProcessConfig, for List


class SandboxRuntime:
    def __init__(
        self,
        sandbox_id: str,
        *,
        layout: Layout,
        isolation: Isolation,
        env_vars: Mapping[str, str],
        network: bool,
        on_end: Callable[[SandboxRuntime], None] = lambda runtime: None,
    ) -> None:
        """`on_end`: called once the sandbox ended by itself (its agent did), not by `kill`."""
        self.sandbox_id = sandbox_id
        self._on_end = on_end
        self.layout = layout
        self.isolation = isolation
        self.env_vars = dict(env_vars)
        self.network = network
        self.processes: dict[int, ManagedProcess] = {}
        self._terminated: dict[int, tuple[ManagedProcess, float]] = {}
        self._early_exits: dict[int, int] = {}
        # The agent may wait up to CONNECT_SECONDS on a connect, answering nothing else meanwhile: one sent at a
        # time, so that connects queued there (a port whose backlog is full) never stall its other answers longer.
        self._connect_turn = asyncio.Lock()
        self.frozen = False
        self.ended = False
        # What the filesystem service and /files read of it (e2b_local_api/dataplane/sandbox_view.py SandboxView).
        self.access_token: str | None = None
        self.secure = False
        self.id_offset = ID_BASE if isolation.mode is Mode.MAPPED_ROOT else 0
        self._not_running = asyncio.Event()
        self._bwrap: asyncio.subprocess.Process | None = None  # the server's child: bubblewrap, or the bare agent
        self._agent: AgentClient | None = None
        self._link: Link | None = None  # slirp4netns, for a networked sandbox of its own network
        self.agent_pid: int | None = None  # host pid of the namespace's pid 1
        self._started = asyncio.Event()  # start() is over, well or not
        self._start_succeeded = False
        self.waiting_for_start = 0  # spawns held until start() is over
        self._spawning = 0  # spawns waiting for the agent's answer: each holds one of the MAX_PROCESSES slots

    # --- start and end ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        try:
            await self._start()
            if self._agent is not None and self._agent.gone:  # it died after its first answer, while we waited
                self.kill()
                raise SandboxError("unavailable", f"sandbox {self.sandbox_id} could not start: its agent ended")
            self._start_succeeded = True
        finally:
            self._started.set()

    async def _start(self) -> None:
        try:
            bound = {} if self.unisolated else self.layout.open_bound()
        except NotADirectoryError as error:
            raise SandboxError("failed_precondition", f"sandbox {self.sandbox_id} could not start: {error}") from None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = isolation.sandbox_argv(
            self.isolation, bound, network=self.network, agent_source=_AGENT_SOURCE, agent_fd=theirs.fileno()
        )
        try:
            # bubblewrap passes inherited fds on: the agent finds its socket under the same number.
            self._bwrap = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(theirs.fileno(), *bound.values()),
                env=isolation.environment(self.isolation.mode),
                start_new_session=True,
            )
        finally:
            theirs.close()
            for fd in bound.values():
                os.close(fd)
        self._agent = AgentClient(ours, self._on_exit, self._agent_gone)
        process = self._bwrap
        try:
            await asyncio.wait_for(asyncio.shield(self._agent.ready), START_SECONDS)
        except (AgentGone, TimeoutError) as error:
            detail = await exits.helper_words(process)
            self.kill()
            reason = detail or str(error) or type(error).__name__
            raise SandboxError("unavailable", f"sandbox {self.sandbox_id} could not start: {reason}") from error
        self.agent_pid = process.pid if self.unisolated else _only_child(process.pid)
        if self.network and self.isolation.slirp is not None:
            await self._connect_network(self.isolation.slirp, process.pid)
        warning = self.isolation.create_warning(self.sandbox_id, networked=self.network)
        if warning is not None:
            print(f"e2b-local-api: {warning}", file=sys.stderr, flush=True)

    async def _connect_network(self, slirp: str, bwrap_pid: int) -> None:
        """Connect the sandbox's own network namespace before any command runs in it (network.py): the agent's,
        or, for an unprivileged server, the one bubblewrap was started in (isolation.own_network_prefix)."""
        unprivileged = self.isolation.mode is Mode.UNPRIVILEGED
        try:
            if self.agent_pid is None:
                raise LinkError("its first process is gone")
            pid = bwrap_pid if unprivileged else self.agent_pid
            self._link = await attach(slirp, pid, START_SECONDS, self.isolation.guard, unprivileged=unprivileged)
        except LinkError as error:
            self.kill()
            raise SandboxError(
                "unavailable", f"sandbox {self.sandbox_id} could not be given its network: {error}"
            ) from None

    @property
    def root(self) -> Path:
        """The host folder that is the sandbox's `/`."""
        return self.layout.root

    @property
    def unisolated(self) -> bool:
        """--no-isolation: the agent and the commands are plain processes of the server, with host paths."""
        return self.isolation.mode is Mode.NONE

    @property
    def state(self) -> Literal["running", "paused", "gone"]:
        return "gone" if self.ended else "paused" if self.frozen else "running"

    async def wait_not_running(self) -> None:
        """Return once the sandbox is paused or gone: open watch streams end then."""
        await self._not_running.wait()

    def pids(self) -> list[int]:
        return self.members()

    def kill(self, reason: str = "it was killed or timed out") -> None:
        """End every process of the sandbox now (the namespace's pid 1 dies, taking the rest); `reason` ends
        its streams."""
        if self.ended:
            return
        self.ended = True
        self._not_running.set()
        if self.unisolated and self.agent_pid is not None:
            # No namespace ends the commands with the agent: end them first, while the agent, their
            # subreaper, still holds the orphans among them where a walk from it finds them.
            agent.end_descendants(self.agent_pid)
        target = self.agent_pid or (self._bwrap.pid if self._bwrap is not None else None)
        if target is not None:
            # bubblewrap reaped already (asyncio did): its pid may be another process's by now.
            child = self._bwrap.pid if self._bwrap is not None and self._bwrap.returncode is None else None
            for pid in (target, child):
                if pid is not None:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        if self._agent is not None:
            self._agent.close()
        if self._link is not None:
            self._link.close()  # slirp4netns exits as its exit pipe closes
        gone = ConnectError(Code.UNAVAILABLE, f"The sandbox {self.sandbox_id} was not found: {reason}")
        for process in list(self.processes.values()):
            process.fail_streams(gone)
            process.abandon()
        self.processes.clear()
        self._terminated.clear()

    def fail_streams(self, error: ConnectError) -> None:
        for process in self.processes.values():
            process.fail_streams(error)

    async def wait_ended(self) -> None:
        if self._bwrap is not None:
            await self._bwrap.wait()
        if self._link is not None:
            await self._link.wait()

    # --- the agent -------------------------------------------------------------------------------------------------

    async def ping(self, timeout: float) -> bool:
        """Whether the agent answers within `timeout` seconds (the pause's health check)."""
        if self._agent is None or self.ended or self.frozen:
            return False
        try:
            await asyncio.wait_for(self._agent.request({"op": "ping"}), timeout)
        except (TimeoutError, AgentGone, AgentError):
            return False
        return True

    def _agent_gone(self) -> None:
        """The agent's socket ended. Not by `kill` (then the sandbox has ended already), nor while it starts
        (`start` says so): the agent died, and in its namespace every process with it."""
        if self.ended or not self._start_succeeded:
            return
        if not self.unisolated:
            self.agent_pid = None  # dead and reaped by bubblewrap: its pid may be another process's soon
        self.kill("its agent (the sandbox's first process) ended")
        self._on_end(self)

    def _on_exit(self, pid: int, status: int) -> None:
        process = self.processes.get(pid)
        if process is None:
            self._early_exits[pid] = status  # the exit overtook the spawn's answer
            return
        process.exited(exits.from_wait_status(status))

    def _done(self, process: ManagedProcess) -> None:
        if self.processes.get(process.pid) is process:
            del self.processes[process.pid]
        now = time.monotonic()
        self._terminated = {p: v for p, v in self._terminated.items() if v[1] > now}
        self._terminated[process.pid] = (process, now + RETAIN_SECONDS)

    # --- processes -------------------------------------------------------------------------------------------------

    def find(self, pid: int | None = None, tag: str | None = None, *, ended: bool = False) -> ManagedProcess:
        """A running process by pid or tag (with `ended`, one that ended in the last 30 s too)."""
        for process in self.processes.values():
            if (pid is not None and process.pid == pid) or (tag is not None and process.tag == tag):
                return process
        if ended:
            now = time.monotonic()
            for process, expiry in self._terminated.values():
                if expiry > now and (
                    (pid is not None and process.pid == pid) or (tag is not None and process.tag == tag)
                ):
                    return process
        what = f"pid {pid}" if pid is not None else f"tag {tag}"
        raise SandboxError("not_found", f"process with {what} not found")

    async def spawn(self, spawn: Spawn) -> ManagedProcess:
        if not self._started.is_set():
            # A connect can hand the sandbox out while it starts (its record exists from the create on): no
            # command runs before its network is connected and tap0 guarded (a red-team finding).
            self.waiting_for_start += 1
            try:
                await self._started.wait()
            finally:
                self.waiting_for_start -= 1
        if self._agent is None or self.ended or not self._start_succeeded:
            raise SandboxError("unavailable", f"sandbox {self.sandbox_id} has ended")
        user = USERS.get(spawn.user)
        if user is None:
            raise SandboxError("unauthenticated", f"invalid username: '{spawn.user}'")
        if user.uid == 0 and not self.isolation.has_root and not self.unisolated:
            raise SandboxError(
                "unauthenticated",
                "user 'root' is not available: the local server runs unprivileged, so its sandboxes have only "
                "'user' (uid 1000); run the server as root for a root user inside",
            )
        cwd = self._process_path(_resolve_cwd(spawn.cwd, user))
        env = {"PATH": PATH, "HOME": self._process_path(user.home), "USER": user.name, "LOGNAME": user.name}
        env.update(self.env_vars)
        env.update(spawn.envs)
        ids: tuple[int | None, int | None, list[int]]
        if self.isolation.has_root:
            ids = (user.uid, user.gid, [user.gid])
        else:
            # No user switching. Without isolation: the server's own uid, whatever user was asked for. Unprivileged:
            # the agent already is the one uid inside (1000), and may not even drop its groups (setgroups is
            # denied in a user namespace that an unprivileged process maps).
            ids = (None, None, [])
        _check_arguments([spawn.cmd, *spawn.args], env)
        request: dict[str, Any] = {
            "op": "spawn",
            "argv": [spawn.cmd, *spawn.args],
            "env": env,
            "cwd": cwd,
            "uid": ids[0],
            "gid": ids[1],
            "groups": ids[2],
            "pty": list(spawn.pty_size) if spawn.pty_size is not None else None,
        }
        if len(self.processes) + self._spawning >= MAX_PROCESSES:
            raise SandboxError(
                "resource_exhausted",
                f"sandbox {self.sandbox_id} already runs {MAX_PROCESSES} processes started through envd, "
                "its limit: wait for some to end or kill them",
            )
        # The slot is taken before the agent is awaited: else every spawn of a burst would pass the check above
        # while the others wait for their answers, and the limit would hold for one spawn at a time only.
        self._spawning += 1
        try:
            return await self._start_process(self._agent, spawn, request)
        finally:
            self._spawning -= 1

    async def _start_process(self, agent: AgentClient, spawn: Spawn, request: dict[str, Any]) -> ManagedProcess:
        """Ask the agent for `request`'s process, hand it its pipes, and keep it among `processes`."""
        theirs: list[int] = []
        outputs: dict[int, str] = {}
        stdin_fd: int | None = None
        master: int | None = None
        try:
            if spawn.pty_size is None:
                if spawn.stdin:
                    child_in, stdin_fd = os.pipe()
                else:
                    child_in = os.open(os.devnull, os.O_RDONLY)
                out_r, out_w = os.pipe()
                err_r, err_w = os.pipe()
                theirs = [child_in, out_w, err_w]
                outputs = {out_r: "stdout", err_r: "stderr"}
            try:
                answer = await agent.request(request, theirs)
            except RequestTooLarge as error:
                raise SandboxError(
                    "invalid_argument", _request_too_long("the command and its environment", error.size)
                ) from error
            except AgentError as error:
                raise SandboxError(
                    "invalid_argument", f"error starting process '{' '.join(request['argv'])}': {error}"
                ) from error
            except AgentGone as error:
                raise SandboxError("unavailable", f"sandbox {self.sandbox_id} has ended") from error
        except BaseException:
            for fd in [*outputs, *([stdin_fd] if stdin_fd is not None else [])]:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        pid = int(answer["pid"])
        if spawn.pty_size is not None:
            (master,) = answer["fds"]  # the terminal's master side, opened inside the sandbox
            outputs[master] = "pty"
        process = ManagedProcess(
            pid,
            config=spawn.config,
            tag=spawn.tag,
            outputs=outputs,  # type: ignore[arg-type]
            stdin=stdin_fd,
            pty=master,
            on_done=self._done,
        )
        self.processes[pid] = process
        self._terminated.pop(pid, None)
        early = self._early_exits.pop(pid, None)
        if early is not None:
            process.exited(exits.from_wait_status(early))
        return process

    def _process_path(self, path: str) -> str:
        """Where a process finds sandbox path `path`: the same path, or without isolation (no mount namespace)
        the host's path of the folder bubblewrap would bind there (`/home/user` is `<root>/home/user`)."""
        top = path.lstrip("/").split("/", 1)[0]
        if not self.unisolated or top not in BOUND:
            return path
        return str(self.root / path.lstrip("/"))

    @property
    def shares_host_network(self) -> bool:
        """Whether the sandbox's 127.0.0.1 is the host's: without isolation, or networked where slirp4netns is
        missing (isolation.sandbox_argv)."""
        return self.unisolated or (self.network and self.isolation.slirp is None)

    async def connect(self, port: int) -> socket.socket:
        """A TCP connection to 127.0.0.1:`port` inside the sandbox, opened by its agent in its network namespace.

        Raises SandboxError: "unavailable" (nothing accepts on the port, or the sandbox ended), "failed_precondition"
        (the sandbox shares the host's network: its loopback is not its own)."""
        if self.shares_host_network:
            raise SandboxError("failed_precondition", "the sandbox shares the host's network")
        if self._agent is None or self.ended or not self._start_succeeded:
            raise SandboxError("unavailable", f"sandbox {self.sandbox_id} has ended")
        try:
            async with self._connect_turn:
                answer = await self._agent.request({"op": "connect", "port": port})
        except AgentError as error:
            raise SandboxError("unavailable", str(error)) from error
        except AgentGone as error:
            raise SandboxError("unavailable", f"sandbox {self.sandbox_id} has ended") from error
        fds = answer["fds"]
        if len(fds) != 1:  # the agent runs inside the sandbox: what it passes is checked, not trusted
            for fd in fds:
                os.close(fd)
            raise SandboxError("unavailable", "the sandbox's agent passed no connection back")
        not_tcp = "the sandbox's agent passed something other than a TCP connection"
        try:
            sock = socket.socket(fileno=fds[0])
        except OSError:  # not a socket at all (ENOTSOCK): the descriptor is still ours to close
            os.close(fds[0])
            raise SandboxError("unavailable", not_tcp) from None
        if sock.family != socket.AF_INET or sock.type != socket.SOCK_STREAM:
            sock.close()
            raise SandboxError("unavailable", not_tcp)
        return sock

    async def signal(self, process: ManagedProcess, number: int) -> None:
        if self._agent is None:
            raise SandboxError("unavailable", f"sandbox {self.sandbox_id} has ended")
        try:
            await self._agent.request({"op": "signal", "pid": process.pid, "signal": number})
        except AgentError as error:
            raise SandboxError("not_found", str(error)) from error
        except AgentGone as error:
            raise SandboxError("unavailable", f"sandbox {self.sandbox_id} has ended") from error
        if number in (signal.SIGKILL, signal.SIGTERM):
            # Only now: closing its pipes first would kill it by SIGPIPE before the signal came.
            process.stop_output()

    # --- pause -----------------------------------------------------------------------------------------------------

    def members(self) -> list[int]:
        """Host pids of the agent and every process descended from it: the whole sandbox, nested pid namespaces
        included (a process of one is not in the sandbox's namespace, but, orphaned, it is adopted by its own
        namespace's first process, itself a descendant; the red team's `unshare -pf` loop ran on through a pause
        that stopped the sandbox's namespace alone)."""
        if self.agent_pid is None:
            return []
        return [self.agent_pid, *agent.descendants(self.agent_pid)]

    def freeze(self) -> None:
        """SIGSTOP every process of the namespace, again until a pass finds none running (forks race the first)."""
        self.frozen = True
        self._not_running.set()
        if self.unisolated and self.agent_pid is not None:
            # The agent keeps running, idle: a stopped agent would not notice the server's death, and
            # nothing else (no namespace) would end the stopped tree.
            root = self.agent_pid
            agent.stop_all(lambda: agent.descendants(root))
            return
        agent.stop_all(self.members)

    def thaw(self) -> None:
        self.frozen = False
        if not self.ended:
            self._not_running.clear()
        for pid in self.members():
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                continue


def _check_arguments(argv: list[str], env: Mapping[str, str]) -> None:
    """Refuse what execve would (E2BIG), before it goes to the agent, with what to do instead."""
    strings = [(f"argument {index}", arg) for index, arg in enumerate(argv)]
    problem = _string_too_long(strings + _variables(env))
    if problem is not None:
        raise SandboxError("invalid_argument", problem)


def environment_too_long(env: Mapping[str, str]) -> str | None:
    """Why no process could start with a create's `envVars` (a variable or the whole too long); None if they fit.

    The create checks it, so that a sandbox is never made whose every command would be refused.
    """
    problem = _string_too_long(_variables(env))
    if problem is not None:
        return problem
    size = len(json.dumps(dict(env)).encode())  # as the spawn request to the agent carries them
    return _request_too_long("the environment variables", size) if size > MAX_REQUEST else None


def _request_too_long(what: str, size: int) -> str:
    return (
        f"argument list too long: {what} take {size} bytes encoded, more than the {MAX_REQUEST} "
        f"the local server passes to a process; {BIG_DATA_HINT}"
    )


def _variables(env: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(f"environment variable {name!r}", f"{name}={value}") for name, value in env.items()]


def _string_too_long(strings: list[tuple[str, str]]) -> str | None:
    for which, text in strings:
        size = len(text.encode(errors="surrogatepass")) + 1
        if size > MAX_ARG_STRLEN:
            return (
                f"argument list too long: {which} takes {size} bytes, more than Linux's {MAX_ARG_STRLEN} "
                f"for one argument or variable (MAX_ARG_STRLEN); {BIG_DATA_HINT}"
            )
    return None


def _resolve_cwd(cwd: str | None, user: User) -> str:
    """envd's rules: unset is the user's home, `~` expands to it, a relative path is under it."""
    if not cwd:
        return user.home
    if cwd.startswith("~"):
        if len(cwd) > 1 and cwd[1] != "/":
            raise SandboxError("invalid_argument", f"cannot expand user-specific home dir in cwd '{cwd}'")
        cwd = user.home + cwd[1:]
    if "\0" in cwd:
        raise SandboxError("invalid_argument", "cwd contains a NUL byte")
    return posixpath.normpath(posixpath.join(user.home, cwd))


def _only_child(pid: int) -> int | None:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None
