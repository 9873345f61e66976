"""The `e2b` command and its single top-level error handler.

`e2b_cli.launcher` is the console script: it runs `main()` below, after
setting up what must exist before click is imported (Ctrl-C handling).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import click

from e2b_cli import __version__
from e2b_cli.errors import CliError, CliUsageError, ClosedPipe, ExitStatus, exit_status_help, to_cli_error
from e2b_cli.progress import quiet_option, retried
from e2b_cli.sandbox import sandbox
from e2b_cli.settings import CliState, connection_options
from e2b_cli.stdio import OutputError

__all__ = ["E2BGroup", "cli", "main"]

EPILOG = f"""{exit_status_help()}

\b
With --json, a failure is printed on stdout as
  {{"error": {{"status": 503, "error_code": "...", "message": "..."}}}}
(status and error_code are null when the API did not answer).

\b
Environment: E2B_API_KEY, E2B_API_URL, E2B_DOMAIN (as the SDK), NO_COLOR.

\b
Examples:
  export E2B_API_KEY=e2b_...
  ID=$(e2b sandbox create -d)
  e2b sandbox exec "$ID" -- uname -a
  e2b sandbox connect "$ID"
  e2b sandbox list --state running --metadata team=qa
  e2b sandbox metrics "$ID"
  SNAP=$(e2b sandbox snapshot create "$ID")
  e2b sandbox pause "$ID" --force
"""


class E2BGroup(click.Group):
    """The root group: every failure below it is turned into a `CliError` here, and only here."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        # --help and --version write while the arguments are parsed, before invoke().
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:
            raise ClosedPipe() from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort, click.UsageError):
            raise  # --help/--version, and click's usage errors (2): stderr, with the usage line
        except Exception as error:
            state = ctx.find_object(CliState) or CliState()
            if state.debug and not isinstance(error, CliError):
                import traceback  # only --debug shows one

                traceback.print_exc()
            api_url, request_timeout = _where(state)
            converted = to_cli_error(
                error,
                api_url=api_url,
                request_timeout=request_timeout,
                elapsed=time.monotonic() - state.started,
                sandbox_ids=state.sandbox_ids,
                retried=retried(ctx),
            )
            converted.as_json = state.as_json
            raise converted from error


def _where(state: CliState) -> tuple[str | None, float | None]:
    """The API URL and request timeout a failure is worded with; None when the settings themselves are wrong."""
    try:
        config = state.config()
    except Exception:  # the handler words the failure it has, whatever the settings are
        return None, None
    return config.api_url, config.request_timeout


@click.group(cls=E2BGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="e2b")
@connection_options
@quiet_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Manage E2B sandboxes from a terminal or a script."""
    ctx.ensure_object(CliState)


cli.add_command(sandbox)


def main(args: Sequence[str] | None = None) -> int:
    """Run the `e2b` command; return its exit status (an `ExitStatus`).

    click runs in non-standalone mode so that this is the one place that
    prints a failure and picks the status (pip's way).
    """
    try:
        result = cli.main(args=args, prog_name="e2b", standalone_mode=False)
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
    except click.ClickException as error:
        if isinstance(error, ClosedPipe):
            return _closed_pipe()
        if isinstance(error, click.UsageError) and _asks_for_json(sys.argv[1:] if args is None else args):
            # The arguments could not be read, --json among them: a script still gets JSON.
            usage = CliUsageError(error.format_message())
            usage.as_json = True
            error = usage
        return _show(error)
    except click.Abort:  # click's word for a KeyboardInterrupt or EOF it caught
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        return _closed_pipe()
    except OutputError as error:  # outside a command: --help, --version, the last flush
        return _show(to_cli_error(error, api_url=None, request_timeout=None))
    return result if isinstance(result, int) else ExitStatus.OK


def _show(error: click.ClickException) -> int:
    """Print `error` where it goes; return its exit status, which says it when it cannot be printed."""
    try:
        error.show()
        sys.stdout.flush()
    except BrokenPipeError:
        return _closed_pipe()
    except OSError:  # stderr closed or failing (`2>&-`): the status is all that is left to say it
        pass
    return error.exit_code


def _asks_for_json(args: Sequence[str]) -> bool:
    options = list(args)
    return "--json" in (options[: options.index("--")] if "--" in options else options)


def _closed_pipe() -> int:
    """Nothing more can be written to stdout; keep Python from complaining about it at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return ExitStatus.CLOSED_PIPE


__all__ += ["CliError", "ExitStatus"]
