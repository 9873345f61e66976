"""Connection settings: flags first, then the SDK's environment variables.

`--api-key`, `--api-url`, `--domain` and `--request-timeout` match the SDK's
`ApiParams`; whatever is not given on the command line is left to the SDK,
which reads `E2B_API_KEY`, `E2B_API_URL` and `E2B_DOMAIN` itself, so the CLI
and a program using the SDK always agree. The flags are accepted before the
command (`e2b --api-key K sandbox list`) and after it (`e2b sandbox list
--api-key K`); the later one wins.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import click
from e2b import ApiParams, ConnectionConfig, InvalidArgumentException, _options
from e2b._config import DEFAULT_REQUEST_TIMEOUT, MAX_REQUEST_TIMEOUT

from e2b_cli.errors import CliUsageError, missing_api_key

if TYPE_CHECKING:  # httpx costs most of a command's start-up; the SDK loads it when a call is made
    import httpx

__all__ = ["CliState", "check_api_url", "connection_options", "json_option", "sandbox_ids", "snapshot_id"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class CliState:
    """What the options of one invocation set; `ctx.obj` of every command.

    `transport` is never set from the command line: tests put an
    `httpx.MockTransport` here (`CliRunner().invoke(cli, args, obj=CliState(transport=...))`).
    """

    api_key: str | None = None
    api_url: str | None = None
    domain: str | None = None
    request_timeout: float | None = None
    debug: bool = False
    transport: httpx.BaseTransport | None = None
    # What the top-level handler needs to word a failure: the output format,
    # the ids the command was given, and when its latest API call started
    # (the command's start until it makes one).
    as_json: bool = False
    sandbox_ids: tuple[str, ...] = ()
    started: float = field(default_factory=time.monotonic)

    def start_call(self) -> None:
        """An API call starts now: a timeout is reported with the time since."""
        self.started = time.monotonic()

    def params(self) -> ApiParams:
        """The SDK's connection options; unset ones are left to its environment defaults."""
        params = ApiParams()
        if self.api_key is not None:
            params["api_key"] = self.api_key
        if self.api_url is not None:
            params["api_url"] = self.api_url
        if self.domain is not None:
            params["domain"] = self.domain
        if self.request_timeout is not None:
            params["request_timeout"] = self.request_timeout
        if self.transport is not None:
            params["transport"] = self.transport
        return params

    def api_url_setting(self) -> str:
        """The API URL the SDK will use (the flag, `E2B_API_URL`, else derived from the domain), unchecked."""
        url = self.api_url or os.environ.get("E2B_API_URL")
        if url:
            return url
        # Nothing names a URL: the SDK derives it from the domain (and E2B_DEBUG), a URL it accepts.
        params = self.params()
        params["api_url"] = None
        return ConnectionConfig(**params).api_url

    def config(self) -> ConnectionConfig:
        """The settings as the SDK resolves them (environment included).

        Raises:
            CliError: a malformed API URL (exit status 2), which the SDK would
                refuse as an invalid argument.
        """
        check_api_url(self.api_url_setting())
        return ConnectionConfig(**self.params())

    def api_params(self) -> ApiParams:
        """`params()`, after checking that there is an API key to send and a URL to send it to.

        Raises:
            CliError: no key from `--api-key` or `E2B_API_KEY`, or a malformed
                API URL (exit status 2).
        """
        config = self.config()
        if not config.api_key and not config.debug:
            raise missing_api_key()
        return self.params()


def check_api_url(url: str) -> None:
    """A usage error unless `url` is `http(s)://HOST[:PORT][/PATH]`.

    `notaurl` or `ftp://x` are a value to fix, not a network failure to retry.
    """
    from urllib.parse import urlsplit  # httpx imports it anyway, but not `e2b --help`

    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        valid = False
    if not valid:
        raise CliUsageError(
            f"invalid API URL {url!r}: expected http:// or https:// and a host, e.g. https://api.e2b.app",
            "Fix --api-url or E2B_API_URL (or --domain / E2B_DOMAIN, from which it is derived).",
        )


def _setter(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def store(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        # Absent options leave what an outer command (or the environment) set.
        if value is None or value is False:
            return
        setattr(ctx.ensure_object(CliState), name, value)

    return store


def connection_options(f: F) -> F:
    """Add the connection flags and `--debug` to a command."""
    options = [
        click.option(
            "--api-key",
            metavar="KEY",
            expose_value=False,
            callback=_setter("api_key"),
            help="Your team's API key [env: E2B_API_KEY].",
        ),
        click.option(
            "--api-url",
            metavar="URL",
            expose_value=False,
            callback=_setter("api_url"),
            help="The API's URL [env: E2B_API_URL; default: https://api.DOMAIN].",
        ),
        click.option(
            "--domain",
            metavar="DOMAIN",
            expose_value=False,
            callback=_setter("domain"),
            help="The E2B domain [env: E2B_DOMAIN; default: e2b.app].",
        ),
        click.option(
            "--request-timeout",
            metavar="SECONDS",
            type=click.FloatRange(min=0, max=MAX_REQUEST_TIMEOUT),
            expose_value=False,
            callback=_setter("request_timeout"),
            help=(
                "Give up on an API call after this long, retries included; "
                f"0 means no limit [default: {DEFAULT_REQUEST_TIMEOUT:g}]."
            ),
        ),
        click.option(
            "--debug",
            is_flag=True,
            default=False,
            expose_value=False,
            callback=_setter("debug"),
            help="Show the traceback of a failure.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def json_option(help_text: str) -> Callable[[F], F]:
    """`--json`: the command's result, and its failure, as JSON on stdout."""

    def remember(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        if value:
            ctx.ensure_object(CliState).as_json = True
        return value

    return click.option("--json", "as_json", is_flag=True, callback=remember, help=help_text)


def sandbox_ids(ctx: click.Context, param: click.Parameter, value: str | tuple[str, ...]) -> Any:
    """Argument callback: check the ids (the SDK's rule), and remember them for the command's error messages.

    An empty id or one with a "/", "?", "#" or a control character is a usage
    error (exit status 2) before any request: sent, it would name another path.
    """
    ids = (value,) if isinstance(value, str) else tuple(value)
    for sandbox_id in ids:
        _checked_id(param, _options.sandbox_id, sandbox_id)
    ctx.ensure_object(CliState).sandbox_ids = ids
    return value


def snapshot_id(_ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Argument callback: a snapshot id the SDK can send (`team/name:tag` included), else a usage error."""
    return _checked_id(param, _options.snapshot_id, value)


def _checked_id(param: click.Parameter, check: Callable[[str, object], str], value: str) -> str:
    try:
        return check("the id", value)
    except InvalidArgumentException as error:
        # The SDK's message shows the id as a Python repr: escaped, safe on a terminal.
        raise click.BadParameter(f"{error.message}.", param=param) from None
