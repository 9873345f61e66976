"""Sandbox records as the spec's response models.

Building the generated model validates the response; dumping with
`exclude_none` leaves optional fields out instead of sending `null` for
fields the spec does not declare nullable.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.responses import JSONResponse

from e2b_local_api.store import DOMAIN, ENVD_VERSION, SandboxRecord
from e2b_local_api.wire.models import ListedSandbox, Sandbox, SandboxDetail

M = TypeVar("M", bound=BaseModel)


def json_response(
    content: BaseModel | list[BaseModel], status: int = 200, headers: dict[str, str] | None = None
) -> JSONResponse:
    if isinstance(content, list):
        body: object = [item.model_dump(mode="json", exclude_none=True) for item in content]
    else:
        body = content.model_dump(mode="json", exclude_none=True)
    return JSONResponse(body, status_code=status, headers=headers)


# Required by the runtime's spec shape, absent from this repository's: the
# server knows every field either shape asks for, and each model takes its own.
CLIENT_ID = "local"
DISK_SIZE_MB = 1024


def _fields(record: SandboxRecord) -> dict[str, Any]:
    return {
        "sandboxID": record.sandbox_id,
        "templateID": record.template_id,
        "clientID": CLIENT_ID,
        "state": record.state,
        "startedAt": record.started_at,
        "endAt": record.end_at,
        "cpuCount": record.cpu_count,
        "memoryMB": record.memory_mb,
        "diskSizeMB": DISK_SIZE_MB,
        "metadata": dict(record.metadata),
        "envdVersion": ENVD_VERSION,
        "envdAccessToken": record.envd_access_token,
        "domain": DOMAIN,
    }


def _shaped(model: type[M], record: SandboxRecord) -> M:
    """The spec's model of a sandbox, from the fields that model declares."""
    return model.model_validate({k: v for k, v in _fields(record).items() if k in model.model_fields})


def sandbox(record: SandboxRecord) -> Sandbox:
    return _shaped(Sandbox, record)


def listed(record: SandboxRecord) -> ListedSandbox:
    return _shaped(ListedSandbox, record)


def detail(record: SandboxRecord) -> SandboxDetail:
    return _shaped(SandboxDetail, record)
