"""The `e2b` command and its single top-level error handler."""

from __future__ import annotations

from typing import Any

import click

from e2b_cli import __version__
from e2b_cli.errors import CliError, ExitStatus, to_cli_error
from e2b_cli.progress import quiet_option
from e2b_cli.sandbox import sandbox
from e2b_cli.settings import CliState, connection_options

__all__ = ["E2BGroup", "cli", "main"]

EPILOG = """\b
Exit status:
  0  success (pausing a sandbox that is already paused included)
  1  the API said no (refused pause, unknown sandbox, rejected API key,
     busy, rate limited), or no answer came (network failure, timeout)
  2  usage error: unknown command or option, bad value, no API key

\b
Environment: E2B_API_KEY, E2B_API_URL, E2B_DOMAIN (as the SDK), NO_COLOR.

\b
Examples:
  export E2B_API_KEY=e2b_...
  e2b sandbox list
  e2b sandbox pause sbx_123 --force
"""


class E2BGroup(click.Group):
    """The root group: every failure below it is turned into a `CliError` here, and only here."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors (2) and already-decided CliErrors
        except Exception as error:
            state = ctx.find_object(CliState) or CliState()
            if state.debug:
                raise
            config = state.config()
            raise to_cli_error(error, api_url=config.api_url, request_timeout=config.request_timeout) from error


@click.group(cls=E2BGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="e2b")
@connection_options
@quiet_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Manage E2B sandboxes from a terminal or a script."""
    ctx.ensure_object(CliState)


cli.add_command(sandbox)


def main() -> None:
    """The console script: exits with an `ExitStatus`."""
    cli.main(prog_name="e2b")


__all__ += ["CliError", "ExitStatus"]
