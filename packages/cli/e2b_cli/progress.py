"""What a command is waiting for, said on stderr: the SDK's retries.

The SDK logs each re-send of a busy answer on the `e2b.retries` logger (see
docs/users/retries.md); here one handler turns those records into a
line on stderr for the length of one command, unless `--quiet`, and counts
them either way: a failure's hint says the request was retried only when it
was (`retried`).
"""

from __future__ import annotations

import click

__all__ = ["RETRY_LOGGER", "announce_retries", "quiet_option", "retried"]

RETRY_LOGGER = "e2b.retries"
_COUNT = "e2b_cli.retried"  # the key in the command's `ctx.meta`, which its subcommands share


def announce_retries(ctx: click.Context, *, say: bool = True) -> None:
    """Count every SDK retry until `ctx` closes, and print each on stderr when `say`."""
    import logging  # here, not at import: `e2b --help` does not need it

    ctx.meta[_COUNT] = 0

    class _StderrLine(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            ctx.meta[_COUNT] = ctx.meta.get(_COUNT, 0) + 1
            if not say:
                return
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


def retried(ctx: click.Context) -> int:
    """How many times the SDK re-sent a request of this command so far (0 if nothing counted)."""
    count = ctx.meta.get(_COUNT, 0)
    return count if isinstance(count, int) else 0


def _quiet(ctx: click.Context, _param: click.Parameter, quiet: bool) -> None:
    if not ctx.resilient_parsing:
        announce_retries(ctx, say=not quiet)


quiet_option = click.option(
    "--quiet",
    "-q",
    is_flag=True,
    default=False,
    expose_value=False,
    callback=_quiet,
    help="Do not announce retries of busy answers on stderr.",
)
