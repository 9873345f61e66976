"""`e2b-local-api`: serve the local API with uvicorn."""

from __future__ import annotations

import argparse
import resource
import sys
from collections.abc import Sequence
from pathlib import Path

from e2b_local_api.app import create_app
from e2b_local_api.control.auth import DEV_API_KEY, AuthConfig
from e2b_local_api.dataplane.routing import Router
from e2b_local_api.dataplane.server import Server
from e2b_local_api.http.body_limit import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY_BYTES
from e2b_local_api.http.heap import keep_freed_heap
from e2b_local_api.http.http_protocol import DEFAULT_HEADER_TIMEOUT, DEFAULT_KEEP_ALIVE_TIMEOUT, server_config
from e2b_local_api.runtime import isolation
from e2b_local_api.runtime.registry import Runtimes


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="e2b-local-api",
        description="Serve the E2B sandbox API (the sandboxes, snapshots and templates operations) and, on the "
        "same port, each sandbox's envd: its commands run in bubblewrap (or, with --no-isolation, as plain "
        "processes), its files in a folder under --state.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=3000, help="port to bind (default 3000)")
    parser.add_argument(
        "--api-key",
        action="append",
        dest="api_keys",
        metavar="KEY",
        help=f"accept this X-API-Key; repeat for several (default: {DEV_API_KEY})",
    )
    parser.add_argument(
        "--any-api-key",
        action="store_true",
        help="accept any non-empty X-API-Key instead",
    )
    parser.add_argument(
        "--header-timeout",
        type=_positive_float,
        default=DEFAULT_HEADER_TIMEOUT,
        metavar="SECONDS",
        help=f"close connections whose request headers take longer (default {DEFAULT_HEADER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--keep-alive-timeout",
        type=_positive_float,
        default=DEFAULT_KEEP_ALIVE_TIMEOUT,
        metavar="SECONDS",
        help="close kept-alive connections idle for longer; keep clients' pool expiry below it "
        f"(default {DEFAULT_KEEP_ALIVE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--body-timeout",
        type=_positive_float,
        default=DEFAULT_BODY_TIMEOUT,
        metavar="SECONDS",
        help=f"answer 408 to request bodies that take longer (default {DEFAULT_BODY_TIMEOUT:g}); envd's: a /files "
        "upload that long without a byte, a Connect call's one message (deadline_exceeded), client streams never",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        metavar="N",
        help=f"answer 413 to larger request bodies (default {DEFAULT_MAX_BODY_BYTES})",
    )
    # runtime: where sandboxes keep their files
    parser.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="keep sandboxes' and snapshots' folders under DIR (default: a private temporary folder)",
    )
    parser.add_argument(
        "--keep-state",
        action="store_true",
        help="leave the folders of killed sandboxes, and the temporary state folder, in place at exit",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="never use bubblewrap, even where it works: run each sandbox's commands as plain processes of this "
        "server's user (the host's root, if the server is root), whatever user they ask for, in the sandbox's "
        "folder with host paths, seeing the host's files and processes, on the host's network; only the kill of "
        "a sandbox's process tree is enforced. For local testing where bubblewrap cannot create namespaces "
        "(a container's default seccomp profile, Ubuntu's apparmor_restrict_unprivileged_userns). Default: off, "
        "and without bubblewrap data-plane calls are refused, since unisolated sandboxes are not faithful",
    )
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    return parser.parse_args(argv)


def _positive_float(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value!r}")
    return number


def auth_config(args: argparse.Namespace) -> AuthConfig:
    keys = frozenset(args.api_keys or [DEV_API_KEY])
    return AuthConfig(keys=keys, accept_any=bool(args.any_api_key))


def raise_descriptor_limit() -> None:
    """Lift the soft limit on open descriptors to the hard one: each connection, stream and watcher of every
    sandbox holds a descriptor, and a common soft default, 1024, is about what one sandbox may hold open
    (dataplane/routing.py's MAX_OPEN_REQUESTS)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # The kernel refuses an infinite soft limit for descriptors: its own ceiling instead.
    ceiling = int(Path("/proc/sys/fs/nr_open").read_text()) if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    raise_descriptor_limit()
    keep_freed_heap()  # files move through the server in large buffers: see http/heap.py
    # runtime: say at start whether sandboxes can run processes here, and how isolated they are.
    found = isolation.without_isolation() if args.no_isolation else isolation.probe()
    print(f"e2b-local-api: {found.describe()}", file=sys.stderr)
    runtimes = Runtimes(found, args.state, keep_state=args.keep_state)
    app = create_app(
        auth_config(args),
        max_body_bytes=args.max_body_bytes,
        body_timeout=args.body_timeout,
        host=args.host,
        runtimes=runtimes,
    )
    config = server_config(
        Router(app, runtimes, body_timeout=args.body_timeout),
        host=args.host,
        port=args.port,
        header_timeout=args.header_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
        log_level=args.log_level,
    )
    Server(config, runtimes).run()  # runtime: its exit signal ends the sandboxes' streams first
