"""What a command is waiting for, said on stderr: the SDK's retries.

The SDK logs each re-send of a busy answer on the `e2b.retries` logger (see
docs/users/retries.md); here one handler turns those records into a
line on stderr for the length of one command, unless `--quiet`.
"""

from __future__ import annotations

import click

__all__ = ["RETRY_LOGGER", "announce_retries", "quiet_option"]

RETRY_LOGGER = "e2b.retries"


def announce_retries(ctx: click.Context) -> None:
    """Print every SDK retry on stderr until `ctx` closes."""
    import logging  # here, not at import: `e2b --help` does not need it

    class _StderrLine(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                click.echo(self.format(record), err=True)
            except (OSError, ValueError):
                pass  # a closed stderr must not fail the command it only narrates

    logger = logging.getLogger(RETRY_LOGGER)
    handler = _StderrLine(logging.INFO)
    previous = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)  # the SDK skips building records nobody wants

    def detach() -> None:
        logger.removeHandler(handler)
        logger.setLevel(previous)

    ctx.call_on_close(detach)


def _quiet(ctx: click.Context, _param: click.Parameter, quiet: bool) -> None:
    if not quiet and not ctx.resilient_parsing:
        announce_retries(ctx)


quiet_option = click.option(
    "--quiet",
    "-q",
    is_flag=True,
    default=False,
    expose_value=False,
    callback=_quiet,
    help="Do not announce retries of busy answers on stderr.",
)
