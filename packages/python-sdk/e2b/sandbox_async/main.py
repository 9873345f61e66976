"""`AsyncSandbox`: the sandbox lifecycle over the generated API client.

Only I/O is here: what both flavours decide alike (bodies, checks, results) is in
`e2b._sandbox_logic` and `e2b._options`; the client and the status check in `e2b._http`;
each method's class form (id first) in `e2b._class_method_variant`.  Adding an operation: its
entry in spec/operations.yml, one method here (docs/maintainers/codegen.md, "Adding an operation").
"""

from __future__ import annotations

import datetime
import warnings
from collections.abc import Mapping
from typing import Any, Self, Unpack

from e2b import _sandbox_logic as logic
from e2b._class_method_variant import deprecated_alias, dual, sandbox_method
from e2b._config import DEFAULT_SANDBOX_TIMEOUT, DEFAULT_TEMPLATE, ApiParams, ConnectionConfig, check_settings
from e2b._exceptions import NotFoundException, SandboxException, SandboxNotFoundException
from e2b._http import async_call as _call
from e2b._options import (
    SandboxIamOpts,
    SandboxLifecycle,
    SandboxListOrder,
    SandboxNetworkOpts,
    SandboxNetworkUpdate,
    SandboxOnResume,
    SandboxQuery,
    SnapshotMode,
)
from e2b._results import SandboxInfo, SandboxMetrics, SandboxPauseResult, SnapshotInfo

# The generated names are used as they are: each operation's module and expected statuses, by its name in
# spec/operations.yml (`ops`, `logic.expected`), and the request models. One the spec renames or drops
# fails mypy here, which bump's check of the hand-written code runs.
from e2b.api import operations as ops
from e2b.api.client import models as _models

# The data plane (issue 43): commands, files, pty, is_running, get_host and the file URLs.
from e2b.sandbox_async.dataplane import AsyncDataPlane
from e2b.sandbox_async.paginator import AsyncSandboxPaginator, AsyncSnapshotPaginator

__all__ = ["AsyncSandbox"]


class AsyncSandbox(AsyncDataPlane):
    """A sandbox in the E2B cloud, and the control-plane calls on it.

    Most calls come in two forms: on an instance (`sbx.pause()`) and on the
    class with the sandbox id first (`AsyncSandbox.pause(sandbox_id)`). Every call
    accepts the connection settings of `ApiParams` as keywords (on an instance
    they override the settings it was created with); any other unknown
    keyword raises `TypeError` before a request is sent.
    `async with AsyncSandbox.create() as sbx:` kills the sandbox at the end of the block.
    """

    def __init__(
        self,
        sandbox_id: str,
        *,
        template_id: str | None = None,
        envd_version: str | None = None,
        envd_access_token: str | None = None,
        traffic_access_token: str | None = None,
        sandbox_domain: str | None = None,
        connection_config: ConnectionConfig | None = None,
    ) -> None:
        """Wrap an existing sandbox id; use `create()` or `connect()` to get one.

        Raises:
            InvalidArgumentException: `sandbox_id` is empty or cannot be an id (a "/", "?",
                "#", whitespace or a control character); nothing is sent.
        """
        self.sandbox_id = logic.sandbox_id(sandbox_id)
        """The sandbox's id."""
        self.template_id = template_id
        """The id of the template it was started from, when known."""
        self.envd_version = envd_version
        """The version of envd, the guest agent in the sandbox, when known."""
        self.envd_access_token = envd_access_token
        """The token for envd's API in the sandbox, when the sandbox is secured."""
        self.traffic_access_token = traffic_access_token
        """The token that reaching the sandbox through its proxy takes, when one is required."""
        self.sandbox_domain = sandbox_domain
        """The base domain the sandbox's traffic is served on, when known."""
        self.connection_config = connection_config or ConnectionConfig()
        """The connection settings its calls use; a call's keywords override them."""

    def __repr__(self) -> str:
        """The class and the sandbox id."""
        return f"AsyncSandbox(sandbox_id={self.sandbox_id!r})"

    async def __aenter__(self) -> Self:
        """The sandbox itself, for the block."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Kill the sandbox at the end of the block, however it ends."""
        await self.kill()

    def _opts(self, opts: Mapping[str, Any]) -> ConnectionConfig:
        return self.connection_config.merged(**opts)

    @classmethod
    def _from_created(cls, created: logic.Created, config: ConnectionConfig) -> Self:
        return cls(
            created.sandbox_id,
            template_id=created.template_id,
            envd_version=created.envd_version,
            envd_access_token=created.envd_access_token,
            traffic_access_token=created.traffic_access_token,
            sandbox_domain=created.sandbox_domain,
            connection_config=config,
        )

    @classmethod
    async def create(
        cls,
        template: str | None = None,
        timeout: int | None = None,
        metadata: Mapping[str, str] | None = None,
        envs: Mapping[str, str] | None = None,
        secure: bool | None = None,
        allow_internet_access: bool | None = None,
        *,
        network: SandboxNetworkOpts | None = None,
        iam: SandboxIamOpts | None = None,
        lifecycle: SandboxLifecycle | None = None,
        volume_mounts: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        **opts: Unpack[ApiParams],
    ) -> Self:
        """Create and start a sandbox from a template or a snapshot.

        Args:
            template: template id or alias, or a snapshot id (default "base").
            timeout: seconds until the sandbox's deadline (default 300).
            metadata: labels to find it by later (`list(query=SandboxQuery(metadata=...))`).
            envs: environment variables for its processes.
            secure: require an access token for every call to the sandbox itself.
            allow_internet_access: False denies all egress.
            network: egress rules, proxy and public traffic (`SandboxNetworkOpts`).
            iam: workload identity tokens (`SandboxIamOpts`).
            lifecycle: what happens at the deadline, e.g. `{"on_timeout": "pause", "auto_resume": True}`.
            volume_mounts: `{mount path: volume name}`.
            idempotency_key: sent as `Idempotency-Key` (one is made when absent) and reused
                on every retry of this call, so a retried create never starts a second sandbox.
            **opts: connection settings (`ApiParams`).

        Raises:
            InvalidArgumentException: a value the API would refuse; nothing was sent.
            NotFoundException: no such template or snapshot.
        """
        config = ConnectionConfig(**opts)
        body = logic.create_body(
            DEFAULT_TEMPLATE if template is None else template,
            DEFAULT_SANDBOX_TIMEOUT if timeout is None else timeout,
            metadata=metadata,
            envs=envs,
            secure=secure,
            allow_internet_access=allow_internet_access,
            network=network,
            lifecycle=lifecycle,
            volume_mounts=volume_mounts,
            iam=iam,
        )
        headers = logic.idempotency_headers(idempotency_key)
        if config.debug:
            return cls(logic.DEBUG_SANDBOX_ID, connection_config=config)
        async with _call(config, logic.expected("createSandbox"), headers) as client:
            response = await ops.create_sandbox.asyncio_detailed(client=client, body=_models.NewSandbox.from_dict(body))
        return cls._from_created(logic.created(logic.wire(response.parsed)), config)

    @sandbox_method
    async def connect(
        self,
        timeout: int | None = None,
        *,
        on_resume: SandboxOnResume = "restore",
        **opts: Unpack[ApiParams],
    ) -> AsyncSandbox:
        """Connect to the sandbox, resuming it first if it is paused; returns it.

        Args:
            timeout: seconds from now until it expires (default 300); a later deadline is kept.
            on_resume: how a paused sandbox resumes. "restore" (the API's default)
                continues its processes; "reboot" cold-boots it from the
                snapshot's disk state, which recovers a sandbox whose forced
                snapshot's memory does not resume.
            **opts: connection settings (`ApiParams`).
        """
        config = self._opts(opts)
        body = logic.connect_body(DEFAULT_SANDBOX_TIMEOUT if timeout is None else timeout, on_resume)
        if config.debug:
            return self
        async with _call(config, logic.expected("connectSandbox")) as client:
            response = await ops.connect_sandbox.asyncio_detailed(
                self.sandbox_id, client=client, body=_models.ConnectSandbox.from_dict(body)
            )
        created = logic.created(logic.wire(response.parsed))
        self.template_id = created.template_id or self.template_id
        self.envd_version = created.envd_version
        self.sandbox_domain = created.sandbox_domain or self.sandbox_domain
        # A sandbox connected to by id (`Sandbox.connect(id)`) learns its envd token here, as from a create.
        self.envd_access_token = created.envd_access_token or self.envd_access_token
        self.traffic_access_token = created.traffic_access_token or self.traffic_access_token
        return self

    @sandbox_method
    async def kill(self, **opts: Unpack[ApiParams]) -> bool:
        """Kill the sandbox and discard it, its pause snapshot included.

        Returns:
            True if it was killed, False if the API said there is no such sandbox
            (its `sandbox_not_found`).

        Raises:
            UnexpectedResponseException: a 404 that is not the API's (a wrong API URL, a
                proxy): the sandbox may still be running.
        """
        config = self._opts(opts)
        if config.debug:
            return True
        async with _call(config, logic.expected("killSandbox")) as client:
            try:
                await ops.kill_sandbox.asyncio_detailed(self.sandbox_id, client=client)
            except SandboxNotFoundException:
                return False
        return True

    @sandbox_method
    async def get_info(self, **opts: Unpack[ApiParams]) -> SandboxInfo:
        """What the API reports about the sandbox.

        Raises:
            SandboxNotFoundException: no such sandbox.
        """
        async with _call(self._opts(opts), logic.expected("getSandbox")) as client:
            response = await ops.get_sandbox.asyncio_detailed(self.sandbox_id, client=client)
        return logic.sandbox_info(logic.wire(response.parsed), detail=True)

    @sandbox_method
    async def get_metrics(
        self,
        start: datetime.datetime | None = None,
        end: datetime.datetime | None = None,
        **opts: Unpack[ApiParams],
    ) -> list[SandboxMetrics]:
        """The sandbox's resource usage samples between `start` and `end` (both optional), oldest first."""
        config = self._opts(opts)
        params = logic.metrics_params(start, end)
        if config.debug:
            return []
        async with _call(config, logic.expected("getSandboxMetrics")) as client:
            response = await ops.get_sandbox_metrics.asyncio_detailed(self.sandbox_id, client=client, **params)
        return logic.metrics(logic.wire_list(response.parsed))

    @sandbox_method
    async def set_timeout(self, timeout: int, **opts: Unpack[ApiParams]) -> None:
        """Make the sandbox expire `timeout` seconds from now.

        Each call replaces the previous deadline, shorter or longer.
        """
        config = self._opts(opts)
        body = _models.SandboxTimeoutRequest.from_dict(logic.timeout_body(timeout))
        async with _call(config, logic.expected("setSandboxTimeout")) as client:
            await ops.set_sandbox_timeout.asyncio_detailed(self.sandbox_id, client=client, body=body)

    @sandbox_method
    async def update_network(self, network: SandboxNetworkUpdate, **opts: Unpack[ApiParams]) -> None:
        """Replace the running sandbox's egress configuration; a key left out is cleared (`SandboxNetworkUpdate`)."""
        config = self._opts(opts)
        body = _models.SandboxNetworkUpdateConfig.from_dict(logic.network_update_body(network))
        async with _call(config, logic.expected("updateSandboxNetwork")) as client:
            await ops.update_sandbox_network.asyncio_detailed(self.sandbox_id, client=client, body=body)

    @sandbox_method
    async def fork(
        self, timeout: int | None = None, count: int | None = None, **opts: Unpack[ApiParams]
    ) -> list[AsyncSandbox | SandboxException]:
        """Checkpoint the running sandbox in place and start `count` (1-20, default 1) sandboxes from it.

        Returns:
            One entry per fork, in order: the new sandbox, or the exception that kept it from starting.
        """
        config = self._opts(opts)
        body = _models.SandboxForkRequest.from_dict(logic.fork_body(timeout, count))
        async with _call(config, logic.expected("forkSandbox")) as client:
            response = await ops.fork_sandbox.asyncio_detailed(self.sandbox_id, client=client, body=body)
        return [
            result if isinstance(result, SandboxException) else type(self)._from_created(result, config)
            for result in logic.fork_results(logic.wire_list(response.parsed))
        ]

    @sandbox_method
    async def create_snapshot(
        self,
        name: str | None = None,
        *,
        mode: SnapshotMode | None = None,
        **opts: Unpack[ApiParams],
    ) -> SnapshotInfo:
        """Take a persistent snapshot of the sandbox; `create(snapshot.snapshot_id)` starts sandboxes from it.

        Args:
            name: a name to find it by; a snapshot that has it already gets a new build.
            mode: "full" (memory and filesystem, the API's default) or "filesystem".
        """
        config = self._opts(opts)
        body = _models.SandboxSnapshotRequest.from_dict(logic.snapshot_body(name, mode))
        async with _call(config, logic.expected("createSnapshot")) as client:
            response = await ops.create_snapshot.asyncio_detailed(self.sandbox_id, client=client, body=body)
        return logic.snapshot_info(logic.wire(response.parsed))

    def _snapshots_of_this(
        self,
        limit: int | None = None,
        next_token: str | None = None,
        name: str | None = None,
        **opts: Unpack[ApiParams],
    ) -> AsyncSnapshotPaginator:
        """The snapshots taken of this sandbox, as a paginator; no request until `next_items()`."""
        return AsyncSandbox._snapshots(self.sandbox_id, limit, next_token, name, **self._opts(opts).as_params())

    @staticmethod
    def _snapshots(
        sandbox_id: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
        name: str | None = None,
        **opts: Unpack[ApiParams],
    ) -> AsyncSnapshotPaginator:
        """The team's snapshots (of `sandbox_id` only, if given), as a paginator; no request until `next_items()`.

        Args:
            sandbox_id: only snapshots of this sandbox.
            limit: at most this many per page (1-100).
            next_token: start from this cursor (a paginator's `next_token`).
            name: only snapshots with this name or id.
        """
        params, token = logic.snapshot_params(sandbox_id, limit, next_token, name)
        return AsyncSnapshotPaginator(params, ConnectionConfig(**opts), token)

    list_snapshots = dual(_snapshots_of_this, _snapshots)
    """The snapshots as a paginator: this sandbox's (`sbx.list_snapshots()`), or the team's (class form).

    The class form takes `sandbox_id` (only that sandbox's), `limit` (1-100 per page), `next_token`
    and `name`; the instance form the same but `sandbox_id`. No request until `next_items()`.
    """

    @classmethod
    async def delete_snapshot(cls, snapshot_id: str, **opts: Unpack[ApiParams]) -> bool:
        """Delete a snapshot; sandboxes created from it keep running.

        Returns:
            True if it was deleted, False if the API said there is no such snapshot.

        Raises:
            UnexpectedResponseException: a 404 that is not the API's (a wrong API URL, a proxy).
        """
        config = ConnectionConfig(**opts)
        template_id = logic.snapshot_id(snapshot_id)
        async with _call(config, logic.expected("deleteTemplate")) as client:
            try:
                await ops.delete_template.asyncio_detailed(template_id, client=client)
            except NotFoundException:
                return False
        return True

    @sandbox_method
    async def pause(
        self,
        keep_memory: bool | None = None,
        *,
        mode: SnapshotMode | None = None,
        force: bool | None = None,
        **opts: Unpack[ApiParams],
    ) -> SandboxPauseResult:
        """Pause the sandbox: snapshot it and stop it; `connect()` resumes it.

        Options left at None are not sent, so the API's defaults apply (no force, a full snapshot).

        Args:
            keep_memory: deprecated, use `mode`: False is "filesystem", True is "full".
            mode: "full" snapshots memory and filesystem (processes continue on
                resume); "filesystem" the disk only (resuming cold-boots from disk).
            force: skip the guest-agent health check a normal pause runs first, so
                that a sandbox whose agent does not answer can still be paused.
                Only with a full snapshot. A forced snapshot's memory may not
                resume: `connect(on_resume="reboot")` then cold-boots the sandbox
                from the snapshot's disk state.
            **opts: connection settings (`ApiParams`), e.g. `request_timeout`.

        Returns:
            SandboxPauseResult: `paused` is False when the sandbox was already
            paused; `forced` is what the API did (a forced request that joined a
            normal pause in flight reports False). Always truthy: read `.paused`.

        Raises:
            SandboxPauseRefusedException: the API refused after exactly one request
                (a refusal is never retried); the sandbox keeps running. The API's
                message names why: the guest agent did not answer (pass
                `force=True`), the node is too busy, or a forced pause could not
                be pinned to the sandbox's node (retry later). A `ServiceBusyException`.
            InvalidArgumentException: e.g. `force=True` with `mode="filesystem"`.
            SandboxNotFoundException: no such sandbox.
        """
        config = self._opts(opts)
        if keep_memory is not None:
            warnings.warn(logic.KEEP_MEMORY_WARNING, DeprecationWarning, stacklevel=2)
        body = _models.SandboxPauseRequest.from_dict(logic.pause_body(keep_memory=keep_memory, mode=mode, force=force))
        async with _call(config, logic.expected("pauseSandbox")) as client:
            response = await ops.pause_sandbox.asyncio_detailed(self.sandbox_id, client=client, body=body)
        return logic.pause_result(response.status_code, response.parsed)

    beta_pause = deprecated_alias(pause, logic.BETA_PAUSE_WARNING)
    """Deprecated: `pause()`, which it calls (with a `DeprecationWarning`)."""

    # Last in the class body: below it, `list` would name this method, not the builtin.
    @classmethod
    def list(
        cls,
        query: SandboxQuery | None = None,
        limit: int | None = None,
        next_token: str | None = None,
        order: SandboxListOrder | None = None,
        **opts: Unpack[ApiParams],
    ) -> AsyncSandboxPaginator:
        """The team's sandboxes as a paginator; no request until `next_items()`.

        Args:
            query: filters (`SandboxQuery`: metadata, state, started_after, template).
            limit: at most this many per page (1-100; the API's default is 100).
            next_token: start from this cursor (a paginator's `next_token`).
            order: "desc" (newest first, the API's default) or "asc".
            **opts: connection settings (`ApiParams`).
        """
        check_settings(opts)
        params, token = logic.list_params(query, limit, next_token, order)
        return AsyncSandboxPaginator(params, ConnectionConfig(**opts), token)
