"""What the envd apps need of a sandbox, and how they find it from a request's headers.

The runtime's sandbox object satisfies `SandboxView`; the router passes a
`Lookup` that reads the `E2b-Sandbox-Id` header. A lookup raises
`SandboxGone` for an unknown or dead sandbox: the apps answer 502 "... was not
found", as E2B's proxy does, which the released SDK maps to its
not-running exception.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Literal, Protocol

SANDBOX_ID_HEADER = "e2b-sandbox-id"
ACCESS_TOKEN_HEADER = "x-access-token"

State = Literal["running", "paused", "gone"]


class SandboxView(Protocol):
    """One sandbox, as the filesystem and /files apps use it (the runtime owns it)."""

    @property
    def sandbox_id(self) -> str: ...
    @property
    def root(self) -> Path:  # the host folder that is the sandbox's `/`
        ...
    @property
    def access_token(self) -> str | None:  # the envd access token; None: an unsecured sandbox
        ...
    @property
    def env_vars(self) -> Mapping[str, str]:  # the create's envVars, what every process gets
        ...
    @property
    def secure(self) -> bool: ...
    @property
    def id_offset(self) -> int:  # host id of id 0 inside when the server maps ids (a root server); else 0
        ...

    @property
    def state(self) -> State: ...

    async def wait_not_running(self) -> None:
        """Return once the sandbox is paused or gone (at once if it already is)."""
        ...

    def pids(self) -> Iterable[int]:
        """Host pids of the sandbox's processes, for /metrics (empty when none run)."""
        ...


class SandboxGone(Exception):
    """No running sandbox by that id: unknown, killed or timed out."""

    def __init__(self, sandbox_id: str) -> None:
        super().__init__(f"The sandbox {sandbox_id} was not found")
        self.sandbox_id = sandbox_id


Lookup = Callable[[Mapping[str, str]], SandboxView]
"""Headers (lower-case names) to the sandbox they name; raises `SandboxGone`."""
