"""Sandbox records as the spec's response models.

Building the generated model validates the response; dumping with
`exclude_none` leaves optional fields out instead of sending `null` for
fields the spec does not declare nullable.
"""

from __future__ import annotations

from pydantic import BaseModel
from starlette.responses import JSONResponse

from e2b_local_api.store import DOMAIN, ENVD_VERSION, SandboxRecord
from e2b_local_api.wire.models import (
    CPUCount,
    ListedSandbox,
    MemoryMB,
    Sandbox,
    SandboxDetail,
    SandboxMetadata,
)


def json_response(
    content: BaseModel | list[BaseModel], status: int = 200, headers: dict[str, str] | None = None
) -> JSONResponse:
    if isinstance(content, list):
        body: object = [item.model_dump(mode="json", exclude_none=True) for item in content]
    else:
        body = content.model_dump(mode="json", exclude_none=True)
    return JSONResponse(body, status_code=status, headers=headers)


def sandbox(record: SandboxRecord) -> Sandbox:
    return Sandbox(
        sandboxID=record.sandbox_id,
        templateID=record.template_id,
        envdVersion=ENVD_VERSION,
        envdAccessToken=record.envd_access_token,
        domain=DOMAIN,
    )


def listed(record: SandboxRecord) -> ListedSandbox:
    return ListedSandbox(
        sandboxID=record.sandbox_id,
        templateID=record.template_id,
        state=record.state,
        startedAt=record.started_at,
        endAt=record.end_at,
        cpuCount=CPUCount(record.cpu_count),
        memoryMB=MemoryMB(record.memory_mb),
        metadata=SandboxMetadata(dict(record.metadata)),
    )


def detail(record: SandboxRecord) -> SandboxDetail:
    return SandboxDetail(
        **listed(record).model_dump(),
        envdVersion=ENVD_VERSION,
        envdAccessToken=record.envd_access_token,
        domain=DOMAIN,
    )
