"""`e2b-local-api`: serve the local API with uvicorn."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import uvicorn

from e2b_local_api.app import create_app
from e2b_local_api.auth import DEV_API_KEY, AuthConfig


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="e2b-local-api",
        description="Serve an in-memory E2B sandbox API (spec: the `sandboxes` operations).",
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
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    return parser.parse_args(argv)


def auth_config(args: argparse.Namespace) -> AuthConfig:
    keys = frozenset(args.api_keys or [DEV_API_KEY])
    return AuthConfig(keys=keys, accept_any=bool(args.any_api_key))


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    app = create_app(auth_config(args))
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
