"""One data-plane program for two SDKs: the released `e2b` 2.63.0 and this repository's, against a local server.

`python -I dataplane_calls.py --api-url URL --api-key KEY [GROUP...]` runs the
groups (all by default) with whichever `e2b` the interpreter has, reaching the
server as the released SDK's users do (`E2B_API_URL` = `E2B_SANDBOX_URL` = URL).
Every SDK call is made through `Recorder.call`, which never lets an exception
escape: it records what came back (shaped: no pid, id or clock), the exception's
class and fields, and whether the observation is the expected one. The last line
printed is one JSON object: the SDK's version, the records and the calls counted
by kind. tests/conformance/test_dataplane.py judges and compares the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import importlib
import io
import json
import os
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

# Loaded by main() at run time, typed Any: mypy checks this file in the repository's environment,
# and either SDK may be the one that runs it.
e2b: Any = None

HOME = "/home/user"
LONG = 300  # a group's sandbox outlives the group, whatever the load
DEADLINE = 30.0  # for anything awaited on a condition (watch events, pty output)
UNSET = object()

Shape = Callable[[Any], Any]
Expect = Any  # a value the shaped result must equal, or a predicate on it


class Recorder:
    """Each call's record and the count of calls by kind."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()
        self.group = ""

    def _record(self, kind: str, label: str, got: dict[str, Any], expect: Expect) -> None:
        if expect is UNSET:
            ok = "raised" not in got
        elif callable(expect):
            ok = bool(expect(got))
        else:
            ok = got == expect
        self.records.append({"group": self.group, "label": label, "kind": kind, "got": got, "ok": ok})

    def call(
        self, kind: str, label: str, fn: Callable[[], Any], shape: Shape = lambda v: v, expect: Expect = UNSET
    ) -> Any:
        """`fn()`'s value, or None when it raised; either way one record."""
        self.counts[kind] += 1
        try:
            value = fn()
        except Exception as err:
            self._record(kind, label, raised(err), expect)
            return None
        self._record(kind, label, {"value": plain(shape(value))}, expect)
        return value

    async def acall(
        self, kind: str, label: str, fn: Callable[[], Any], shape: Shape = lambda v: v, expect: Expect = UNSET
    ) -> Any:
        self.counts[kind] += 1
        try:
            value = await fn()
        except Exception as err:
            self._record(kind, label, raised(err), expect)
            return None
        self._record(kind, label, {"value": plain(shape(value))}, expect)
        return value

    def note(self, label: str, value: Any, expect: Expect = UNSET) -> None:
        """An observation that is no call of its own (what callbacks received, a loop's outcome)."""
        self._record("observed", label, {"value": plain(value)}, expect)


def raised(err: BaseException) -> dict[str, Any]:
    # The class and what it is (its bases up to Exception): "a TimeoutException" holds of its subclasses.
    bases = [k.__name__ for k in type(err).__mro__ if k not in (err.__class__, Exception, BaseException, object)]
    got: dict[str, Any] = {"raised": type(err).__name__, "is": bases}
    if type(err).__name__ == "CommandExitException":
        got |= {"exit_code": err.exit_code, "stdout": err.stdout, "stderr": err.stderr, "error": err.error}  # type: ignore[attr-defined]
    text = str(err).lower()
    # The facts a user reads in the message (the sandbox's fate), compared; the wording is not.
    got["says"] = sorted(words for words in ("was killed", "was paused", "not found") if words in text)
    got["message"] = str(err)[:300]  # for the reader of a failure; not compared
    return got


def plain(value: Any) -> Any:
    """JSON's shape of a value, enums by value, times as their type only (a clock is not compared)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return {"bytes": bytes(value).decode("latin-1")}
    if isinstance(value, datetime):
        return "datetime" + ("+tz" if value.tzinfo else "")
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def result(r: Any) -> dict[str, Any]:
    return {"stdout": r.stdout, "stderr": r.stderr, "exit_code": r.exit_code, "error": r.error}


def entry(info: Any) -> dict[str, Any]:
    """EntryInfo's fields; the clock as its type, a folder's size left out (the filesystem's own)."""
    kind = plain(info.type)
    shaped = {"name": info.name, "type": kind, "path": info.path, "metadata": getattr(info, "metadata", None)}
    for field in ("mode", "permissions", "owner", "group", "symlink_target", "modified_time"):
        if hasattr(info, field):
            shaped[field] = plain(getattr(info, field))
    if hasattr(info, "size") and kind != "dir":
        shaped["size"] = info.size
    return shaped


def write_info(info: Any) -> dict[str, Any]:
    return {"name": info.name, "type": plain(info.type), "path": info.path}


def process(info: Any) -> dict[str, Any]:
    return {"cmd": info.cmd, "args": list(info.args), "cwd": info.cwd, "tag": info.tag}


def is_value(expected: Any) -> Callable[[dict[str, Any]], bool]:
    return lambda got: got.get("value") == expected


def is_a(got: dict[str, Any], name: str) -> bool:
    return got.get("raised") == name or name in got.get("is", [])


def raises(name: str, **fields: Any) -> Callable[[dict[str, Any]], bool]:
    """The call raised `name` or a subclass of it, with these fields."""
    return lambda got: is_a(got, name) and all(got.get(k) == v for k, v in fields.items())


def says(name: str, word: str) -> Callable[[dict[str, Any]], bool]:
    return lambda got: is_a(got, name) and word in got.get("says", [])


def wait_until(condition: Callable[[], bool], timeout: float = DEADLINE) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def create(rec: Recorder, **options: Any) -> Any:
    """A group's sandbox (not a recorded call: a group cannot go on without it)."""
    rec.counts["create"] += 1
    return e2b.Sandbox.create(timeout=LONG, **options)


# --- groups ---------------------------------------------------------------------------------------


def commands(rec: Recorder) -> None:
    sbx = create(rec, envs={"FROM_CREATE": "yes"})
    run = sbx.commands.run
    try:
        out: list[str] = []
        err: list[str] = []
        want = {"stdout": "yes mine\n/tmp\n", "stderr": "oops\n", "exit_code": 0, "error": None}
        rec.call(
            "commands.run",
            "foreground with envs, cwd and callbacks",
            lambda: run(
                "echo $FROM_CREATE $OWN; echo oops >&2; pwd",
                envs={"OWN": "mine"},
                cwd="/tmp",
                on_stdout=out.append,
                on_stderr=err.append,
            ),
            result,
            is_value(want),
        )
        rec.note("on_stdout/on_stderr received", ["".join(out), "".join(err)], is_value(["yes mine\n/tmp\n", "oops\n"]))
        rec.call("commands.run", "user root", lambda: run("id -un", user="root").stdout, expect=is_value("root\n"))
        rec.call(
            "commands.run",
            "default user and cwd",
            lambda: run("id -un; pwd").stdout,
            expect=is_value("user\n/home/user\n"),
        )
        rec.call(
            "commands.run",
            "non-zero exit",
            lambda: run("echo out; echo bad >&2; exit 3"),
            result,
            raises("CommandExitException", exit_code=3, stdout="out\n", stderr="bad\n"),
        )
        rec.call(
            "commands.run",
            "a command that does not exist",
            lambda: run("no-such-command-here"),
            result,
            raises("CommandExitException", exit_code=127),
        )
        rec.call(
            "commands.run",
            "timeout ends the call",
            lambda: run("sleep 30", timeout=1),
            result,
            raises("TimeoutException"),
        )
        rec.call(
            "commands.run", "timeout=0 is no limit", lambda: run("echo ok", timeout=0).stdout, expect=is_value("ok\n")
        )
        rec.call(
            "commands.run",
            "non-UTF-8 output replaced",
            lambda: run(r"printf 'a\377b'").stdout,
            expect=is_value("a\ufffdb"),
        )
        rec.call(
            "commands.run",
            "100k lines",
            lambda: (lambda r: [len(r.stdout), r.stdout[-7:]])(run("seq 1 100000")),
            expect=is_value([588895, "100000\n"]),
        )
        rec.call(
            "commands.run",
            "a cwd that does not exist",
            lambda: run("pwd", cwd="/no/such/folder"),
            result,
            raises("InvalidArgumentException"),
        )

        sleeper = rec.call("commands.run", "background", lambda: run("sleep 300", background=True), lambda h: "handle")
        if sleeper is not None:
            listed = rec.call(
                "commands.list",
                "list shows the background command",
                lambda: sbx.commands.list(),
                lambda ps: [process(p) for p in ps if p.pid == sleeper.pid],
            )
            del listed
            rec.call(
                "commands.kill", "kill a running command", lambda: sbx.commands.kill(sleeper.pid), expect=is_value(True)
            )
            rec.call(
                "handle.wait",
                "wait on a killed command",
                lambda: sleeper.wait(),
                result,
                raises("CommandExitException"),
            )
        rec.call(
            "commands.kill", "kill a pid that does not exist", lambda: sbx.commands.kill(999999), expect=is_value(False)
        )

        reader = rec.call(
            "commands.run",
            "background with stdin",
            lambda: run("read a; read b; echo got $a $b; cat", background=True, stdin=True),
            lambda h: "handle",
        )
        if reader is not None:
            rec.call("commands.send_stdin", "send_stdin by pid", lambda: sbx.commands.send_stdin(reader.pid, "one\n"))
            rec.call("handle.send_stdin", "send_stdin on the handle", lambda: reader.send_stdin("two\n"))
            rec.call("commands.send_stdin", "send_stdin bytes", lambda: sbx.commands.send_stdin(reader.pid, b"tail"))
            rec.call(
                "commands.stream_input",
                "chunks of str and bytes",
                lambda: sbx.commands.stream_input(reader.pid, iter([" s1", b" s2"])),
            )
            rec.call("commands.close_stdin", "close_stdin", lambda: sbx.commands.close_stdin(reader.pid))
            rec.call(
                "handle.wait",
                "stdin reached the command",
                lambda: reader.wait(),
                result,
                is_value({"stdout": "got one two\ntail s1 s2", "stderr": "", "exit_code": 0, "error": None}),
            )

        waiting = rec.call(
            "commands.run",
            "background to connect to",
            lambda: run("read x; echo after $x", background=True, stdin=True),
            lambda h: "handle",
        )
        if waiting is not None:
            again = rec.call(
                "commands.connect",
                "connect by pid",
                lambda: sbx.commands.connect(waiting.pid),
                lambda h: h.pid == waiting.pid,
                is_value(True),
            )
            rec.call(
                "commands.send_stdin",
                "send_stdin to the connected",
                lambda: sbx.commands.send_stdin(waiting.pid, "c\n"),
            )
            if again is not None:
                rec.call(
                    "handle.wait",
                    "the connected handle's result",
                    lambda: again.wait(),
                    result,
                    is_value({"stdout": "after c\n", "stderr": "", "exit_code": 0, "error": None}),
                )

        def iterate() -> list[Any]:
            handle = run("for i in 1 2 3; do echo $i; done; echo e >&2", background=True)
            outs, errs = [], []
            for stdout, stderr, _pty in handle:
                if stdout:
                    outs.append(stdout)
                if stderr:
                    errs.append(stderr)
            return ["".join(outs), "".join(errs), handle.wait().exit_code]

        rec.call(
            "handle.iterate", "iterate a background command's output", iterate, expect=is_value(["1\n2\n3\n", "e\n", 0])
        )

        victim = rec.call(
            "commands.run",
            "background to kill by its handle",
            lambda: run("sleep 300", background=True),
            lambda h: "handle",
        )
        if victim is not None:
            rec.call("handle.kill", "handle.kill", lambda: victim.kill(), expect=is_value(True))

            def listed_until_gone() -> bool:
                """Whether the killed command left the list within the deadline (the kill is a signal: not at once)."""
                return wait_until(lambda: not [p for p in sbx.commands.list() if p.pid == victim.pid])

            rec.call("commands.list", "a killed command leaves the list", listed_until_gone, expect=is_value(True))
    finally:
        sbx.kill()


def files(rec: Recorder) -> None:
    sbx = create(rec)
    f = sbx.files
    try:
        rec.call(
            "files.write",
            "str",
            lambda: f.write("a.txt", "text"),
            write_info,
            is_value({"name": "a.txt", "type": "file", "path": f"{HOME}/a.txt"}),
        )
        rec.call("files.write", "bytes", lambda: f.write("b.bin", b"\x00\x01\xff"), write_info)
        rec.call("files.write", "binary IO", lambda: f.write("io.bin", io.BytesIO(b"from io")), write_info)
        rec.call("files.write", "text IO", lambda: f.write("text-io.txt", io.StringIO("text io")), write_info)
        rec.call(
            "files.write", "iterable of bytes", lambda: f.write("iter.bin", iter([b"chunk1", b"chunk2"])), write_info
        )
        rec.call("files.write", "empty", lambda: f.write("empty.txt", b""), write_info)
        rec.call("files.write", "absolute path in a new folder", lambda: f.write("/tmp/deep/x/y.txt", "y"), write_info)
        rec.call("files.write", "metadata", lambda: f.write("meta.txt", "m", metadata={"Team": "infra"}), entry)
        rec.call(
            "files.write_files",
            "many at once",
            lambda: f.write_files([{"path": "many/1.txt", "data": "one"}, {"path": "/tmp/2.txt", "data": b"two"}]),
            lambda infos: [write_info(i) for i in infos],
        )
        rec.call("files.write_files", "none", lambda: f.write_files([]), lambda infos: [write_info(i) for i in infos])

        rec.call("files.read", "text", lambda: f.read("a.txt"), expect=is_value("text"))
        rec.call(
            "files.read", "bytes", lambda: f.read("b.bin", format="bytes"), expect=is_value({"bytes": "\x00\x01\xff"})
        )
        rec.call(
            "files.read",
            "stream",
            lambda: b"".join(f.read("iter.bin", format="stream")),
            expect=is_value({"bytes": "chunk1chunk2"}),
        )
        rec.call(
            "files.read",
            "IO written",
            lambda: [f.read("io.bin"), f.read("text-io.txt")],
            expect=is_value(["from io", "text io"]),
        )
        rec.call("files.read", "empty", lambda: f.read("empty.txt"), expect=is_value(""))
        rec.call("files.read", "missing", lambda: f.read("missing.txt"), expect=raises("FileNotFoundException"))
        rec.call("files.read", "a folder", lambda: f.read("many"), expect=raises("InvalidArgumentException"))
        rec.call(
            "files.read",
            "the sandbox's own /etc/passwd through ..",
            lambda: "user:x:1000" in f.read("../../etc/passwd"),
            expect=is_value(True),
        )

        rec.call("files.write", "gzip", lambda: f.write("gz.txt", "zipped" * 1000, gzip=True), write_info)
        rec.call("files.read", "gzip", lambda: f.read("gz.txt", gzip=True) == "zipped" * 1000, expect=is_value(True))

        rec.call("files.list", "depth 1", lambda: sorted(e.name for e in f.list("many")), expect=is_value(["1.txt"]))
        rec.call("files.list", "depth 2", lambda: sorted(entry(e)["path"] for e in f.list("/tmp", depth=2)))
        rec.call("files.list", "entries", lambda: sorted((entry(e) for e in f.list("many")), key=lambda e: e["path"]))
        rec.call("files.list", "missing", lambda: f.list("missing-dir"), expect=raises("FileNotFoundException"))

        rec.call("files.exists", "a file", lambda: f.exists("a.txt"), expect=is_value(True))
        rec.call("files.exists", "missing", lambda: f.exists("nope"), expect=is_value(False))

        made = sbx.commands.run(
            f"ln -s {HOME}/a.txt {HOME}/link && ln -s / {HOME}/rootlink && ln -s gone {HOME}/dangling"
        )
        rec.counts["commands.run"] += 1
        rec.note("links made", made.exit_code, is_value(0))
        rec.call("files.get_info", "file", lambda: f.get_info("a.txt"), entry)
        # One sandbox, one user: what the SDK wrote as `user` a command of `user` may change, and what a
        # command made is the user's.
        f.write("shared.txt", "sdk")
        rec.counts["files.write"] += 1
        rec.call(
            "commands.run",
            "a command appends to a file the SDK wrote",
            lambda: sbx.commands.run("echo +cmd >> shared.txt && cat shared.txt").stdout,
            expect=is_value("sdk+cmd\n"),
        )
        rec.counts["commands.run"] += 1
        sbx.commands.run("echo made > made.txt")
        rec.call(
            "files.get_info",
            "a command's file is the user's",
            lambda: (lambda e: [e.owner, e.group])(f.get_info("made.txt")),
            expect=is_value(["user", "user"]),
        )
        rec.call("files.get_info", "folder", lambda: f.get_info("many"), entry)
        rec.call(
            "files.get_info", "metadata", lambda: f.get_info("meta.txt").metadata, expect=is_value({"team": "infra"})
        )
        rec.call(
            "files.get_info",
            "symlink to a file",
            lambda: f.get_info("link"),
            entry,
            lambda got: got.get("value", {}).get("symlink_target") == f"{HOME}/a.txt",
        )
        rec.call("files.get_info", "symlink to /", lambda: f.get_info("rootlink"), entry)
        rec.call("files.get_info", "dangling symlink", lambda: f.get_info("dangling"), entry)
        rec.call("files.get_info", "missing", lambda: f.get_info("missing.txt"), expect=raises("FileNotFoundException"))

        rec.call("files.write", "as root", lambda: f.write("/root/secret.txt", "s", user="root"), write_info)
        rec.call("files.get_info", "a file of root's", lambda: f.get_info("/root/secret.txt", user="root"), entry)
        rec.call("files.read", "root's file as user", lambda: f.read("/root/secret.txt"))
        rec.call("files.make_dir", "new", lambda: f.make_dir("new/dir"), expect=is_value(True))
        rec.call("files.make_dir", "existing", lambda: f.make_dir("new/dir"), expect=is_value(False))
        rec.call(
            "files.rename",
            "into a folder",
            lambda: f.rename("a.txt", "new/dir/a.txt"),
            write_info,
            is_value({"name": "a.txt", "type": "file", "path": f"{HOME}/new/dir/a.txt"}),
        )
        rec.call("files.exists", "the old name", lambda: f.exists("a.txt"), expect=is_value(False))
        rec.call(
            "files.rename", "missing", lambda: f.rename("missing.txt", "x.txt"), expect=raises("FileNotFoundException")
        )
        rec.call("files.remove", "a folder tree", lambda: f.remove("new"))
        rec.call("files.remove", "missing", lambda: f.remove("never-was"))
        rec.call("files.exists", "the removed", lambda: f.exists("new"), expect=is_value(False))
    finally:
        sbx.kill()


def events_of(seen: Iterable[Any]) -> list[list[str]]:
    """(name, type) of each event, a repeat of the one before dropped: the kernel may split one write."""
    shaped: list[list[str]] = []
    for event in seen:
        item = [event.name, plain(event.type)]
        if not shaped or shaped[-1] != item:
            shaped.append(item)
    return shaped


def watch(rec: Recorder) -> None:
    sbx = create(rec)
    f = sbx.files
    try:
        f.make_dir("watched/sub")
        rec.counts["files.make_dir"] += 1
        handle = rec.call(
            "files.watch_dir",
            "recursive, with entries",
            lambda: f.watch_dir("watched", recursive=True, include_entry=True),
            lambda h: "handle",
        )
        flat = rec.call("files.watch_dir", "not recursive", lambda: f.watch_dir("watched"), lambda h: "handle")
        if handle is not None and flat is not None:
            f.write("watched/sub/new.txt", "x")
            f.write("watched/top.txt", "t")
            f.remove("watched/top.txt")
            rec.counts["files.write"] += 2
            rec.counts["files.remove"] += 1
            seen: list[Any] = []
            flat_seen: list[Any] = []

            def complete() -> bool:
                seen.extend(handle.get_new_events())
                flat_seen.extend(flat.get_new_events())
                names = {(e.name, plain(e.type)) for e in seen}
                return ("top.txt", "remove") in names and ("sub/new.txt", "write") in names

            done = wait_until(complete)
            rec.note("recursive events came", done, is_value(True))
            rec.note("recursive event sequence", events_of(seen))
            created = [e for e in seen if plain(e.type) == "create" and e.name == "sub/new.txt"]
            # Where the entry is: its size and owner are read when the server handles the event, and the
            # upload may not have written or chowned the file by then (a race in envd too).
            rec.note("a created file's entry", [write_info(e.entry) if e.entry else None for e in created[:1]])

            def flat_complete() -> bool:
                flat_seen.extend(flat.get_new_events())
                return any(e.name == "top.txt" and plain(e.type) == "remove" for e in flat_seen)

            rec.note("not-recursive events came", wait_until(flat_complete), is_value(True))
            rec.note("not-recursive event sequence", events_of(flat_seen))
            rec.call("watch.stop", "stop", lambda: handle.stop())
            rec.call("watch.stop", "stop", lambda: flat.stop())
        rec.call(
            "files.watch_dir",
            "a missing folder",
            lambda: f.watch_dir("no-such-folder"),
            lambda h: "handle",
            raises("FileNotFoundException"),
        )
        f.write("plain.txt", "p")
        rec.counts["files.write"] += 1
        rec.call(
            "files.watch_dir",
            "a file",
            lambda: f.watch_dir("plain.txt"),
            lambda h: "handle",
            raises("InvalidArgumentException"),
        )
    finally:
        sbx.kill()


def pty(rec: Recorder) -> None:
    sbx = create(rec)
    size = e2b.PtySize
    try:
        terminal = rec.call("pty.create", "24x80", lambda: sbx.pty.create(size(rows=24, cols=80)), lambda h: "handle")
        if terminal is None:
            return
        output = bytearray()

        def read_until(term: Any, marker: bytes) -> bool:
            """Reads the terminal's events until `marker` appears (the command's echo is skipped)."""
            start = time.monotonic()
            try:
                for _out, _err, chunk in term:
                    if chunk:
                        output.extend(chunk)
                        if marker in output:
                            del output[:]
                            return True
                    if time.monotonic() - start > DEADLINE:
                        return False
            except Exception:  # the terminal's own deadline: the marker never came
                return False
            return False

        rec.call("pty.send_stdin", "stty size", lambda: sbx.pty.send_stdin(terminal.pid, b"stty size\n"))
        rec.note("the size it started with", read_until(terminal, b"24 80"), is_value(True))
        rec.call("pty.resize", "40x120", lambda: sbx.pty.resize(terminal.pid, size(rows=40, cols=120)))
        rec.call("pty.send_stdin", "stty size", lambda: sbx.pty.send_stdin(terminal.pid, b"stty size\n"))
        rec.note("the size after resize", read_until(terminal, b"40 120"), is_value(True))
        terminal.disconnect()
        follower = rec.call("pty.connect", "connect", lambda: sbx.pty.connect(terminal.pid), lambda h: "handle")
        rec.call("pty.send_stdin", "arithmetic", lambda: sbx.pty.send_stdin(terminal.pid, b"echo $((6*7))x\n"))
        if follower is not None:
            rec.note("output after connect", read_until(follower, b"42x"), is_value(True))
        rec.call("pty.kill", "kill", lambda: sbx.pty.kill(terminal.pid), expect=is_value(True))
        if follower is not None:
            rec.call(
                "handle.wait",
                "a killed terminal's end",
                lambda: follower.wait(),
                lambda r: r.exit_code,
                raises("CommandExitException"),
            )
        rec.call("pty.kill", "kill again", lambda: sbx.pty.kill(terminal.pid), expect=is_value(False))
    finally:
        sbx.kill()


def lifecycle(rec: Recorder) -> None:
    sbx = create(rec)
    rec.call("is_running", "a new sandbox", lambda: sbx.is_running(), expect=is_value(True))
    handle = rec.call(
        "commands.run",
        "background, then its sandbox killed",
        lambda: sbx.commands.run("while true; do echo tick; sleep 0.05; done", background=True),
        lambda h: "handle",
    )

    def first_output() -> bool:
        """The background command's first output (2.x's sync handle keeps no stdout before wait())."""
        for stdout, _stderr, _pty in handle or ():
            if stdout:
                return True
        return False

    seen = first_output()
    rec.note("the command streamed before the kill", seen, is_value(True))
    rec.call("kill", "the sandbox", lambda: sbx.kill(), expect=is_value(True))
    if handle is not None:
        rec.call(
            "handle.wait",
            "a command of a killed sandbox",
            lambda: handle.wait(),
            result,
            says("TimeoutException", "was killed"),
        )
    rec.call("is_running", "a killed sandbox", lambda: sbx.is_running(), expect=is_value(False))
    gone = says("TimeoutException", "not found")
    rec.call("commands.run", "in a killed sandbox", lambda: sbx.commands.run("true"), result, gone)
    rec.call("files.read", "in a killed sandbox", lambda: sbx.files.read("x"), expect=gone)

    foreground = create(rec)

    def kill_soon() -> None:
        wait_until(lambda: bool(foreground.commands.list()))
        e2b.Sandbox.kill(foreground.sandbox_id)

    import threading

    killer = threading.Thread(target=kill_soon, daemon=True)
    killer.start()
    rec.call(
        "commands.run",
        "foreground while its sandbox is killed",
        lambda: foreground.commands.run("sleep 120"),
        result,
        says("TimeoutException", "was killed"),
    )
    killer.join(DEADLINE)


def pause(rec: Recorder) -> None:
    sbx = create(rec)
    try:
        ticker = "i=0; while true; do i=$((i+1)); echo $i > /tmp/n; sleep 0.02; done"
        handle = rec.call(
            "commands.run",
            "background, then paused",
            lambda: sbx.commands.run(ticker, background=True),
            lambda h: "handle",
        )

        def count() -> str:
            """The counter, as a command reads it (a file read could meet it cut short by the next `>`)."""
            return str(sbx.commands.run("cat /tmp/n 2>/dev/null || true").stdout)

        rec.note("counting", wait_until(lambda: bool(count().strip())), is_value(True))
        # 2.x's pause answers True; e2b 3's a SandboxPauseResult (the pause contract): compared as its truth.
        rec.call("pause", "the sandbox", lambda: sbx.pause(), lambda paused: bool(paused), is_value(True))
        if handle is not None:
            rec.call(
                "handle.wait",
                "a command of a paused sandbox",
                lambda: handle.wait(),
                result,
                says("TimeoutException", "was paused"),
            )
        rec.call("is_running", "a paused sandbox", lambda: sbx.is_running(), expect=is_value(False))
        rec.call(
            "commands.run", "in a paused sandbox", lambda: sbx.commands.run("true"), result, raises("TimeoutException")
        )
        rec.call("connect", "resume", lambda: e2b.Sandbox.connect(sbx.sandbox_id), lambda s: "sandbox")
        rec.call("is_running", "resumed", lambda: sbx.is_running(), expect=is_value(True))
        before = count()
        rec.note("the command goes on", wait_until(lambda: count() not in ("", before)), is_value(True))
        rec.call(
            "commands.list",
            "the command is still there",
            lambda: [process(p) for p in sbx.commands.list() if handle is not None and p.pid == handle.pid],
        )
    finally:
        sbx.kill()


def async_calls(rec: Recorder) -> None:
    async def body() -> None:
        sbx = await e2b.AsyncSandbox.create(timeout=LONG)
        rec.counts["async create"] += 1
        try:
            seen: list[str] = []
            await rec.acall(
                "async commands.run",
                "foreground with on_stdout",
                lambda: sbx.commands.run("echo a; echo b", on_stdout=seen.append),
                result,
                is_value({"stdout": "a\nb\n", "stderr": "", "exit_code": 0, "error": None}),
            )
            rec.note("on_stdout received", "".join(seen), is_value("a\nb\n"))
            await rec.acall(
                "async commands.run",
                "non-zero exit",
                lambda: sbx.commands.run("exit 5"),
                result,
                raises("CommandExitException", exit_code=5),
            )
            handle = await rec.acall(
                "async commands.run",
                "background with stdin",
                lambda: sbx.commands.run("cat", background=True, stdin=True),
                lambda h: "handle",
            )
            if handle is not None:
                await rec.acall(
                    "async commands.send_stdin", "send", lambda: sbx.commands.send_stdin(handle.pid, "echoed")
                )
                await rec.acall("async commands.close_stdin", "close", lambda: sbx.commands.close_stdin(handle.pid))
                await rec.acall(
                    "async handle.wait",
                    "result",
                    lambda: handle.wait(),
                    result,
                    is_value({"stdout": "echoed", "stderr": "", "exit_code": 0, "error": None}),
                )
            await rec.acall("async commands.list", "list", lambda: sbx.commands.list(), lambda ps: len(ps))
            await rec.acall("async files.write", "write", lambda: sbx.files.write("async.txt", "async"), write_info)
            await rec.acall("async files.read", "read", lambda: sbx.files.read("async.txt"), expect=is_value("async"))
            await rec.acall(
                "async files.make_dir", "make_dir", lambda: sbx.files.make_dir("aw/sub"), expect=is_value(True)
            )
            events: list[Any] = []
            got = asyncio.Event()

            def on_event(event: Any) -> None:
                events.append(event)
                if event.name == "sub/x.txt" and plain(event.type) == "write":
                    got.set()

            watcher = await rec.acall(
                "async files.watch_dir",
                "recursive",
                lambda: sbx.files.watch_dir("aw", on_event, recursive=True),
                lambda h: "handle",
            )
            if watcher is not None:
                await sbx.files.write("aw/sub/x.txt", "x")
                rec.counts["async files.write"] += 1
                try:
                    await asyncio.wait_for(got.wait(), DEADLINE)
                    came = True
                except TimeoutError:
                    came = False
                rec.note("async watch events came", came, is_value(True))
                rec.note("async watch event sequence", events_of(events))
                await rec.acall("async watch.stop", "stop", lambda: watcher.stop())
            chunks = bytearray()
            terminal = await rec.acall(
                "async pty.create",
                "with on_data",
                lambda: sbx.pty.create(e2b.PtySize(rows=10, cols=50), on_data=chunks.extend),
                lambda h: "handle",
            )
            if terminal is not None:
                await rec.acall(
                    "async pty.send_stdin", "stty size", lambda: sbx.pty.send_stdin(terminal.pid, b"stty size\n")
                )
                deadline = time.monotonic() + DEADLINE
                while b"10 50" not in chunks and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                rec.note("async terminal's size", b"10 50" in chunks, is_value(True))
                await rec.acall("async pty.kill", "kill", lambda: sbx.pty.kill(terminal.pid), expect=is_value(True))
            await rec.acall("async is_running", "running", lambda: sbx.is_running(), expect=is_value(True))
        finally:
            await sbx.kill()

    asyncio.run(body())


GROUPS: dict[str, Callable[[Recorder], None]] = {
    "commands": commands,
    "files": files,
    "watch": watch,
    "pty": pty,
    "lifecycle": lifecycle,
    "pause": pause,
    "async": async_calls,
}


def main(argv: list[str]) -> int:
    global e2b
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--api-url", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=f"default: every group ({', '.join(GROUPS)})")
    args = parser.parse_args(argv)
    if unknown := [name for name in args.groups if name not in GROUPS]:
        parser.error(f"unknown group(s) {', '.join(unknown)}: choose from {', '.join(GROUPS)}")
    os.environ["E2B_API_URL"] = os.environ["E2B_SANDBOX_URL"] = args.api_url
    os.environ["E2B_API_KEY"] = args.api_key
    e2b = importlib.import_module("e2b")
    version = importlib.import_module("importlib.metadata").version("e2b")
    rec = Recorder()
    for name in args.groups or GROUPS:
        rec.group = name
        try:
            GROUPS[name](rec)
        except Exception as err:  # outside any recorded call: the group stopped there
            rec.records.append(
                {"group": name, "label": "(group stopped)", "kind": "group", "got": raised(err), "ok": False}
            )
    run_id = uuid.uuid4().hex[:8]
    print(json.dumps({"sdk": version, "run": run_id, "records": rec.records, "counts": dict(rec.counts)}))
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # As released_calls.py: no interpreter finalization (the released SDK's pyqwest worker may abort it).
    os._exit(status)
