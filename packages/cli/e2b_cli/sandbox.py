"""`e2b sandbox ...`: the sandbox lifecycle commands, each one SDK call, and `exec`/`connect` inside one.

Commands only call the SDK and print; failures propagate to the top-level
handler in `e2b_cli.main`, which decides the message and the exit status.
What runs inside a sandbox is `e2b_cli.exec_command` and `e2b_cli.pty_session`.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, cast

import click
from e2b import SandboxListOrder, SandboxQuery, SandboxState, SnapshotMode
from e2b._config import DEFAULT_SANDBOX_TIMEOUT, DEFAULT_TEMPLATE

from e2b_cli import attach_terminal, output
from e2b_cli.errors import not_found, snapshot_not_found
from e2b_cli.params import TIMEOUT_SECONDS, Timestamp, metadata_pairs, non_empty, state_list
from e2b_cli.printable import printable
from e2b_cli.settings import CliState, connection_options, json_option, sandbox_ids, snapshot_id

__all__ = ["sandbox"]

# The API's page size is 1-100; --limit above that takes several pages.
MAX_PAGE_SIZE = 100

if TYPE_CHECKING:
    from e2b import Sandbox

T = TypeVar("T")


class _Listing(Protocol[T]):
    """The SDK's paginators (`SandboxPaginator`, `SnapshotPaginator`)."""

    @property
    def has_next(self) -> bool: ...

    def next_items(self) -> list[T]: ...


pass_state = click.make_pass_decorator(CliState, ensure=True)


def _sandbox(state: CliState) -> type[Sandbox]:
    """`e2b.Sandbox` for the API call about to be made.

    Loaded (with httpx and the API client) only by a command that calls the
    API; the call's clock starts after the import, so that a timeout is
    reported with the time the call waited.
    """
    from e2b import Sandbox

    state.start_call()
    return Sandbox


def _pages(state: CliState, paginator: _Listing[T], limit: int | None) -> list[T]:
    """Every item of a listing, page after page, or the first `limit` of them."""
    found: list[T] = []
    while paginator.has_next and (limit is None or len(found) < limit):
        state.start_call()  # one call per page
        found.extend(paginator.next_items())
    return found if limit is None else found[:limit]


def _limit_option(what: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return click.option(
        "--limit",
        type=click.IntRange(min=1),
        help=f"Show at most this many {what}; above {MAX_PAGE_SIZE}, several pages are read [default: all].",
    )


@click.group()
def sandbox() -> None:
    """Create, list, inspect, pause, resume and kill sandboxes; their metrics and snapshots.

    \b
    Examples:
      e2b sandbox create
      e2b sandbox list --state paused
      e2b sandbox pause sbx_123 --force
      e2b sandbox metrics sbx_123
      e2b sandbox exec sbx_123 -- ls -la /
      e2b sandbox connect sbx_123
      e2b sandbox snapshot create sbx_123 --name ready
    """


@sandbox.command("create")
@click.argument("template", default=DEFAULT_TEMPLATE, required=False)
@click.option(
    "--timeout",
    # At least 1: a sandbox that expires as it is made would be gone before its id was used.
    type=TIMEOUT_SECONDS,
    default=DEFAULT_SANDBOX_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="The sandbox expires this long from now, 1 or more (`e2b sandbox timeout` changes it).",
)
@attach_terminal.terminal_options
@json_option("Print {sandbox_id, template_id, envd_version} as JSON (no terminal is opened).")
@connection_options
@pass_state
@click.pass_context
def create(
    ctx: click.Context,
    state: CliState,
    template: str,
    timeout: int,
    detach: bool,
    user: str | None,
    cwd: str | None,
    envs: dict[str, str],
    as_json: bool,
) -> None:
    """Create and start a sandbox from TEMPLATE [default: base] and open a terminal on it.

    With -d (or --json, or when stdin or stdout is not a terminal) no terminal
    is opened: the id is printed alone, so that a script can keep it:
    ID=$(e2b sandbox create -d). The sandbox then runs until its --timeout.

    With a terminal, the sandbox lives while the terminal is open; when it
    closes, the sandbox is killed, unless --timeout was given: then it runs
    that long after.

    \b
    Examples:
      e2b sandbox create
      e2b sandbox create base --timeout 600 -u root -c /tmp -e MODE=dev
      ID=$(e2b sandbox create -d) && e2b sandbox pause "$ID"
    """
    from e2b_cli.terminal import can_attach

    timeout_given = ctx.get_parameter_source("timeout") is not click.core.ParameterSource.DEFAULT
    attach = not (detach or as_json) and can_attach()
    created = _sandbox(state).create(
        template,
        timeout if timeout_given or not attach else attach_terminal.TERMINAL_ONLY_TIMEOUT,
        **state.api_params(),
    )
    if as_json:
        data = {"sandbox_id": created.sandbox_id, "template_id": created.template_id}
        output.print_json({**data, "envd_version": created.envd_version})
        return
    if not attach:
        click.echo(printable(created.sandbox_id))
        return
    state.sandbox_ids = (created.sandbox_id,)
    with attach_terminal.then_after_terminal(created, timeout if timeout_given else None):
        attach_terminal.attach(
            created,
            timeout=timeout if timeout_given else attach_terminal.TERMINAL_ONLY_TIMEOUT,
            user=user,
            cwd=cwd,
            envs=envs,
        )


@sandbox.command("list")
@click.option(
    "--state",
    "states",
    metavar="STATE",
    multiple=True,
    callback=state_list,
    help="Only sandboxes in this state, running or paused; repeat it or give a comma list [default: all].",
)
@click.option(
    "--metadata",
    metavar="KEY=VALUE",
    multiple=True,
    callback=metadata_pairs,
    help="Only sandboxes whose metadata has this pair; repeat for several, all of which must match.",
)
@click.option(
    "--template",
    metavar="TEMPLATE",
    callback=non_empty,
    help="Only sandboxes started from this template (id or alias).",
)
@click.option(
    "--started-after",
    type=Timestamp(),
    help="Only sandboxes started at or after this time: ISO 8601, e.g. 2025-01-02T03:04:05Z (no offset means UTC).",
)
@click.option(
    "--order",
    type=click.Choice(["desc", "asc"]),
    help="By start time: desc, newest first (the API's default), or asc, oldest first.",
)
@_limit_option("sandboxes")
@json_option("Print a JSON array instead of a table.")
@connection_options
@pass_state
def list_sandboxes(
    state: CliState,
    states: list[str],
    metadata: dict[str, str],
    template: str | None,
    started_after: datetime.datetime | None,
    order: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """List your team's sandboxes, newest first; every filter given must match.

    \b
    Examples:
      e2b sandbox list
      e2b sandbox list --state running,paused --limit 20
      e2b sandbox list --metadata team=qa --template base --started-after 2025-01-02T00:00:00Z
      e2b sandbox list --order asc --json | jq -r '.[].sandbox_id'
    """
    params = state.api_params()
    query = SandboxQuery(
        metadata=metadata or None,
        state=[SandboxState(s) for s in states] or None,
        started_after=started_after,
        template=template,
    )
    page_size = min(limit, MAX_PAGE_SIZE) if limit else None
    # click.Choice has already limited --order to the SDK's SandboxListOrder.
    paginator = _sandbox(state).list(query, page_size, order=cast(SandboxListOrder | None, order), **params)
    found = _pages(state, paginator, limit)
    if as_json:
        output.print_json([output.info_dict(s) for s in found])
    elif found:
        output.sandbox_table(found)
    else:
        output.say("No sandboxes.")


@sandbox.command("info")
@click.argument("sandbox_id", callback=sandbox_ids)
@json_option("Print a JSON object instead of a table.")
@connection_options
@pass_state
def info(state: CliState, sandbox_id: str, as_json: bool) -> None:
    """Show what the API reports about one sandbox.

    \b
    Examples:
      e2b sandbox info sbx_123
      e2b sandbox info sbx_123 --json | jq -r .state
    """
    result = _sandbox(state).get_info(sandbox_id, **state.api_params())
    if as_json:
        output.print_json(output.info_dict(result))
    else:
        output.sandbox_detail(result)


@sandbox.command("kill")
@click.argument("ids", metavar="SANDBOX_ID...", nargs=-1, required=True, callback=sandbox_ids)
@connection_options
@pass_state
def kill(state: CliState, ids: tuple[str, ...]) -> None:
    """Kill sandboxes and discard them, their pause snapshots included.

    Persistent snapshots (`e2b sandbox snapshot create`) outlive the sandbox.

    Every id is tried; the exit status is 1 if any of them was not found.

    \b
    Examples:
      e2b sandbox kill sbx_123
      e2b sandbox kill sbx_123 sbx_456
    """
    params = state.api_params()
    missing: list[str] = []
    for sandbox_id in ids:
        if _sandbox(state).kill(sandbox_id, **params):
            output.say(f"Killed sandbox {sandbox_id}.")
        else:
            missing.append(sandbox_id)
    if missing:
        raise not_found(missing)


@sandbox.command("connect")
@click.argument("sandbox_id", callback=sandbox_ids)
@click.option(
    "--on-resume",
    type=click.Choice(["restore", "reboot", "memory"]),
    help=(
        "How a paused sandbox resumes: 'restore' restores its memory, so its processes continue (the API's default); "
        "'reboot' cold-boots it from its snapshot's disk state, e.g. after a forced pause whose memory does not "
        "resume. 'memory' is the former name of 'restore'."
    ),
)
@click.option(
    "--timeout",
    "timeout",
    # At least 1: 0 would resume a paused sandbox to expire at once, and keep no terminal's sandbox alive.
    type=TIMEOUT_SECONDS,
    default=DEFAULT_SANDBOX_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Keep the sandbox alive at least this long from now, 1 or more.",
)
@attach_terminal.terminal_options
@connection_options
@pass_state
def connect(
    state: CliState,
    sandbox_id: str,
    on_resume: Literal["restore", "reboot", "memory"] | None,
    timeout: int,
    detach: bool,
    user: str | None,
    cwd: str | None,
    envs: dict[str, str],
) -> None:
    """Open a terminal on a sandbox, resuming it first if it is paused.

    The terminal is a login shell in the sandbox: every key goes to it
    (Ctrl-C included); `exit` or Ctrl-D ends it, and this terminal is put back
    as it was. The sandbox is kept alive while the terminal is open, and runs
    --timeout seconds after. With -d, or when stdin or stdout is not a
    terminal, the sandbox is only resumed.

    \b
    Examples:
      e2b sandbox connect sbx_123
      e2b sandbox connect sbx_123 -u root -c /tmp -e MODE=dev
      e2b sandbox connect sbx_123 -d --on-resume reboot
    """
    from e2b_cli.terminal import can_attach

    params = state.api_params()
    # "restore" (or its former name) is the API's default: the SDK sends it as an absent field.
    sbx = _sandbox(state).connect(
        sandbox_id, timeout, on_resume="reboot" if on_resume == "reboot" else "restore", **params
    )
    if not detach and can_attach():
        attach_terminal.attach(sbx, timeout=timeout, user=user, cwd=cwd, envs=envs)
        return
    how = " (cold-booted from its snapshot's disk state if it was paused)" if on_resume == "reboot" else ""
    output.say(f"Sandbox {sandbox_id} is running{how}.")


@sandbox.command("exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-b", "--background", is_flag=True, help="Start the command and leave it running; print its pid.")
@click.option("-c", "--cwd", metavar="DIR", callback=non_empty, help="Run the command in DIR.")
@click.option("-u", "--user", metavar="USER", callback=non_empty, help="Run the command as USER (e.g. root).")
@click.option(
    "-e",
    "--env",
    "envs",
    metavar="KEY=VALUE",
    multiple=True,
    callback=metadata_pairs,
    help="Set an environment variable for the command; repeat for several.",
)
@json_option("With --background, print {sandbox_id, pid} as JSON.")
@connection_options
@click.argument("sandbox_id", callback=sandbox_ids)
@click.argument("command", metavar="[--] COMMAND [ARG]...", nargs=-1, type=click.UNPROCESSED)
@pass_state
@click.pass_context
def exec_command(
    ctx: click.Context,
    state: CliState,
    background: bool,
    cwd: str | None,
    user: str | None,
    envs: dict[str, str],
    as_json: bool,
    sandbox_id: str,
    command: tuple[str, ...],
) -> None:
    """Run a command in a sandbox; its output is streamed here and its exit status is this command's.

    Everything after SANDBOX_ID is the command, so options go before it. One
    argument is run as a shell line ('ls | wc -l'); several are quoted one by
    one. A piped stdin (a file or a pipe) is forwarded to the command, then
    closed. The command has no time limit: the sandbox is kept alive while it runs, past its own
    timeout if need be, and ends no sooner than its timeout. Ctrl-C ends it (and this command).

    With --background the command is left running and its pid printed.

    \b
    Examples:
      e2b sandbox exec sbx_123 -- ls -la /
      e2b sandbox exec -u root -c /tmp -e MODE=dev sbx_123 -- id -u
      echo hello | e2b sandbox exec sbx_123 -- cat
      e2b sandbox exec sbx_123 'ps aux | wc -l'
      PID=$(e2b sandbox exec -b sbx_123 -- python3 -m http.server)
    """
    from e2b_cli import exec_command as remote

    argv = command[1:] if command[:1] == ("--",) else command
    if not argv:
        raise click.UsageError("no command to run: e2b sandbox exec SANDBOX_ID -- COMMAND [ARG]...", ctx=ctx)
    params = state.api_params()
    # Not the SDK's default of 300 s: a sandbox of shorter timeout would be kept that long after the command.
    sbx = _sandbox(state).connect(sandbox_id, remote.ALIVE_AHEAD, **params)
    line = remote.command_line(argv)
    piped = remote.stdin_is_piped()
    if background:
        pid = remote.run_background(sbx, line, envs=envs, user=user, cwd=cwd, piped=piped)
        try:
            if as_json:
                output.print_json({"sandbox_id": sandbox_id, "pid": pid})
            else:
                click.echo(pid)
            sys.stdout.flush()
        except OSError:  # a pid nobody can read is a command nobody can end: end it
            remote.kill_quietly(sbx, pid)
            raise
        return
    ctx.exit(remote.run_foreground(sbx, line, envs=envs, user=user, cwd=cwd, piped=piped))


@sandbox.command("timeout")
@click.argument("sandbox_id", callback=sandbox_ids)
# At least 1: 0 would end the sandbox at once, which is `e2b sandbox kill`'s to do.
@click.argument("seconds", type=TIMEOUT_SECONDS)
@connection_options
@pass_state
def set_timeout(state: CliState, sandbox_id: str, seconds: int) -> None:
    """Make a sandbox expire SECONDS from now (1 or more), replacing its deadline.

    `e2b sandbox kill` ends a sandbox now.

    \b
    Examples:
      e2b sandbox timeout sbx_123 3600
    """
    _sandbox(state).set_timeout(sandbox_id, seconds, **state.api_params())
    output.say(f"Sandbox {sandbox_id} now expires in {seconds} seconds.")


@sandbox.command("pause")
@click.argument("sandbox_id", callback=sandbox_ids)
@click.option(
    "-f",
    "--force",
    is_flag=True,
    help=(
        "Skip the guest agent's health check, to pause a sandbox whose agent does not answer. "
        "A forced snapshot's memory may not resume: then `e2b sandbox connect ID --on-resume reboot`."
    ),
)
@json_option("Print {sandbox_id, paused, forced} as JSON.")
@connection_options
@pass_state
def pause(state: CliState, sandbox_id: str, force: bool, as_json: bool) -> None:
    """Pause a sandbox: snapshot it and stop it; `connect` resumes it.

    A sandbox that is already paused is not an error (exit status 0). When the
    API refuses the pause, its message is printed on stderr as one line (with
    --json: as {"error": {...}} on stdout) and the exit status is 1; the
    sandbox keeps running.

    \b
    Examples:
      e2b sandbox pause sbx_123
      e2b sandbox pause sbx_123 --force
      e2b sandbox pause sbx_123 || echo "refused: still running"
    """
    # Without --force nothing is sent and the API applies its default.
    result = _sandbox(state).pause(sandbox_id, force=True if force else None, **state.api_params())
    if as_json:
        output.print_json({"sandbox_id": sandbox_id, "paused": result.paused, "forced": result.forced})
        return
    if not result.paused:
        output.say(f"Sandbox {sandbox_id} was already paused.")
        return
    output.say(f"Paused sandbox {sandbox_id}.", "green")
    if result.forced:
        output.say(
            "The snapshot was forced (the guest agent's health check was skipped): if resuming fails, "
            f"run `e2b sandbox connect {sandbox_id} --on-resume reboot`.",
            "yellow",
        )
    elif force:
        output.say("The API did not report a forced snapshot: it took a normal one.")


def _unix_seconds(param: str, value: datetime.datetime | None) -> None:
    # The API takes Unix seconds from 0: an earlier time is a value to fix, not the API's no.
    if value is not None and value.timestamp() < 0:
        raise click.BadParameter("must not be before 1970-01-01T00:00:00Z.", param_hint=f"'--{param}'")


@sandbox.command("metrics")
@click.argument("sandbox_id", callback=sandbox_ids)
@click.option(
    "--start",
    type=Timestamp(),
    help="Only samples from this time on: ISO 8601, e.g. 2025-01-02T03:04:05Z (no offset means UTC).",
)
@click.option("--end", type=Timestamp(), help="Only samples up to this time, read as --start is.")
@json_option("Print a JSON array of samples instead of a table.")
@connection_options
@pass_state
def metrics(
    state: CliState,
    sandbox_id: str,
    start: datetime.datetime | None,
    end: datetime.datetime | None,
    as_json: bool,
) -> None:
    """Show a sandbox's resource usage samples, oldest first: CPU, memory and disk.

    Without --start and --end, the API chooses the interval.

    \b
    Examples:
      e2b sandbox metrics sbx_123
      e2b sandbox metrics sbx_123 --start 2025-01-02T03:00:00Z --end 2025-01-02T04:00:00Z
      e2b sandbox metrics sbx_123 --json | jq '.[-1].cpu_used_pct'
    """
    _unix_seconds("start", start)
    _unix_seconds("end", end)
    if start is not None and end is not None and start > end:
        raise click.BadParameter("must not be after --end.", param_hint="'--start'")
    samples = _sandbox(state).get_metrics(sandbox_id, start=start, end=end, **state.api_params())
    if as_json:
        output.print_json([output.metrics_dict(sample) for sample in samples])
    elif samples:
        output.metrics_table(samples)
    else:
        output.say("No metrics.")


@sandbox.group("snapshot")
def snapshot() -> None:
    """Take, list and delete persistent snapshots of sandboxes.

    A snapshot outlives its sandbox: `e2b sandbox create SNAPSHOT_ID` starts a
    new sandbox from it.

    \b
    Examples:
      SNAP=$(e2b sandbox snapshot create sbx_123 --name ready)
      e2b sandbox create -d "$SNAP"
      e2b sandbox snapshot list --sandbox sbx_123
      e2b sandbox snapshot delete "$SNAP"
    """


@snapshot.command("create")
@click.argument("sandbox_id", callback=sandbox_ids)
@click.option(
    "--name",
    metavar="NAME",
    callback=non_empty,
    help="A name to find the snapshot by; a snapshot that has it already gets a new build.",
)
@click.option(
    "--mode",
    type=click.Choice(["full", "filesystem"]),
    help="What the snapshot keeps: full, memory and filesystem (the API's default), or filesystem, the disk only.",
)
@json_option("Print {snapshot_id, names} as JSON.")
@connection_options
@pass_state
def snapshot_create(state: CliState, sandbox_id: str, name: str | None, mode: str | None, as_json: bool) -> None:
    """Take a persistent snapshot of a sandbox; print its id.

    The id is printed alone, so that a script can keep it:
    SNAP=$(e2b sandbox snapshot create sbx_123). The sandbox keeps running.

    \b
    Examples:
      e2b sandbox snapshot create sbx_123
      e2b sandbox snapshot create sbx_123 --name ready --mode filesystem
      e2b sandbox snapshot create sbx_123 --json | jq -r '.names[]'
    """
    params = state.api_params()
    # click.Choice has already limited --mode to the SDK's SnapshotMode.
    taken = _sandbox(state).create_snapshot(sandbox_id, name=name, mode=cast(SnapshotMode | None, mode), **params)
    if as_json:
        output.print_json(output.snapshot_dict(taken))
    else:
        click.echo(printable(taken.snapshot_id))


def _sandbox_filter(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # The sandbox named, for the wording of "not found".
    value = non_empty(ctx, param, value)
    if value is not None:
        sandbox_ids(ctx, param, value)
    return value


@snapshot.command("list")
@click.option(
    "--sandbox", "sandbox_id", metavar="SANDBOX_ID", callback=_sandbox_filter, help="Only snapshots of this sandbox."
)
@click.option(
    "--name",
    metavar="NAME",
    callback=non_empty,
    help="Only snapshots with this name or id, optionally with a namespace (team/name) or a tag (name:tag).",
)
@_limit_option("snapshots")
@json_option("Print a JSON array instead of a table.")
@connection_options
@pass_state
def snapshot_list(state: CliState, sandbox_id: str | None, name: str | None, limit: int | None, as_json: bool) -> None:
    """List your team's snapshots.

    \b
    Examples:
      e2b sandbox snapshot list
      e2b sandbox snapshot list --sandbox sbx_123 --limit 10
      e2b sandbox snapshot list --name ready --json | jq -r '.[].snapshot_id'
    """
    params = state.api_params()
    page_size = min(limit, MAX_PAGE_SIZE) if limit else None
    paginator = _sandbox(state).list_snapshots(sandbox_id, page_size, name=name, **params)
    found = _pages(state, paginator, limit)
    if as_json:
        output.print_json([output.snapshot_dict(s) for s in found])
    elif found:
        output.snapshot_table(found)
    else:
        output.say("No snapshots.")


@snapshot.command("delete")
@click.argument("snapshot_id", callback=snapshot_id)
@json_option("Print {snapshot_id, deleted} as JSON.")
@connection_options
@pass_state
def snapshot_delete(state: CliState, snapshot_id: str, as_json: bool) -> None:
    """Delete a snapshot; sandboxes started from it keep running.

    An unknown snapshot is an error (exit status 1).

    \b
    Examples:
      e2b sandbox snapshot delete snap_123
      e2b sandbox snapshot delete snap_123 --json
    """
    if not _sandbox(state).delete_snapshot(snapshot_id, **state.api_params()):
        raise snapshot_not_found(snapshot_id)
    if as_json:
        output.print_json({"snapshot_id": snapshot_id, "deleted": True})
    else:
        output.say(f"Deleted snapshot {snapshot_id}.")
