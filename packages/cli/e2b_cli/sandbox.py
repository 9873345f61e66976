"""`e2b sandbox ...`: the sandbox lifecycle commands, each one SDK call.

Commands only call the SDK and print; failures propagate to the top-level
handler in `e2b_cli.main`, which decides the message and the exit status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast

import click
from e2b import SandboxInfo, SandboxState
from e2b._config import DEFAULT_SANDBOX_TIMEOUT, DEFAULT_TEMPLATE

from e2b_cli import output
from e2b_cli.errors import not_found
from e2b_cli.printable import printable
from e2b_cli.settings import CliState, connection_options, json_option, sandbox_ids

__all__ = ["sandbox"]

# The API's page size is 1-100; --limit above that takes several pages.
MAX_PAGE_SIZE = 100

if TYPE_CHECKING:
    from e2b import Sandbox

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


@click.group()
def sandbox() -> None:
    """Create, list, inspect, pause, resume and kill sandboxes.

    \b
    Examples:
      e2b sandbox create
      e2b sandbox list --state paused
      e2b sandbox pause sbx_123 --force
    """


@sandbox.command("create")
@click.argument("template", default=DEFAULT_TEMPLATE, required=False)
@click.option(
    "--timeout",
    type=click.IntRange(min=0),
    default=DEFAULT_SANDBOX_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="The sandbox expires this long from now (`e2b sandbox timeout` changes it).",
)
@json_option("Print {sandbox_id, template_id, envd_version} as JSON.")
@connection_options
@pass_state
def create(state: CliState, template: str, timeout: int, as_json: bool) -> None:
    """Create and start a sandbox from TEMPLATE [default: base]; print its id.

    The id is printed alone, so that a script can keep it: ID=$(e2b sandbox create).

    \b
    Examples:
      e2b sandbox create
      e2b sandbox create base --timeout 600
      ID=$(e2b sandbox create) && e2b sandbox pause "$ID"
    """
    created = _sandbox(state).create(template, timeout, **state.api_params())
    if as_json:
        data = {"sandbox_id": created.sandbox_id, "template_id": created.template_id}
        output.print_json({**data, "envd_version": created.envd_version})
    else:
        click.echo(printable(created.sandbox_id))


@sandbox.command("list")
@click.option(
    "--state",
    "states",
    type=click.Choice(["running", "paused"]),
    multiple=True,
    help="Only sandboxes in this state; repeat for several [default: all].",
)
@click.option("--limit", type=click.IntRange(min=1), help="Show at most this many sandboxes [default: all].")
@json_option("Print a JSON array instead of a table.")
@connection_options
@pass_state
def list_sandboxes(state: CliState, states: tuple[str, ...], limit: int | None, as_json: bool) -> None:
    """List your team's sandboxes, newest first.

    \b
    Examples:
      e2b sandbox list
      e2b sandbox list --state running --state paused --limit 20
      e2b sandbox list --json | jq -r '.[].sandbox_id'
    """
    params = state.api_params()
    page_size = min(limit, MAX_PAGE_SIZE) if limit else None
    # click.Choice has already limited the values to the SDK's SandboxState.
    paginator = _sandbox(state).list(state=cast(list[SandboxState], list(states)) or None, limit=page_size, **params)
    found: list[SandboxInfo] = []
    while paginator.has_next and (limit is None or len(found) < limit):
        state.start_call()  # one call per page
        found.extend(paginator.next_items())
    if limit is not None:
        found = found[:limit]
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
    """Kill sandboxes and discard them, snapshots included.

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
    type=click.Choice(["memory", "reboot"]),
    help=(
        "How a paused sandbox resumes: 'memory' continues its processes (the API's default), "
        "'reboot' cold-boots it from its snapshot's disk state, e.g. after a forced pause whose memory does not resume."
    ),
)
@click.option(
    "--timeout",
    "timeout",
    type=click.IntRange(min=0),
    default=DEFAULT_SANDBOX_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Keep the sandbox alive at least this long from now.",
)
@connection_options
@pass_state
def connect(state: CliState, sandbox_id: str, on_resume: Literal["memory", "reboot"] | None, timeout: int) -> None:
    """Connect to a sandbox, resuming it if it is paused.

    \b
    Examples:
      e2b sandbox connect sbx_123
      e2b sandbox connect sbx_123 --on-resume reboot
    """
    _sandbox(state).connect(sandbox_id, timeout, on_resume=on_resume, **state.api_params())
    how = " (cold-booted from its snapshot's disk state if it was paused)" if on_resume == "reboot" else ""
    output.say(f"Sandbox {sandbox_id} is running{how}.")


@sandbox.command("timeout")
@click.argument("sandbox_id", callback=sandbox_ids)
@click.argument("seconds", type=click.IntRange(min=0))
@connection_options
@pass_state
def set_timeout(state: CliState, sandbox_id: str, seconds: int) -> None:
    """Make a sandbox expire SECONDS from now, replacing its deadline.

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
