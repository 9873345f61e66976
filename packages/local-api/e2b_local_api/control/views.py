"""Records as the spec's response models.

Building the generated model validates the response; dumping with
`exclude_none` leaves optional fields out instead of sending `null` for
fields the spec does not declare nullable.

Each view knows every field any spec shape asks for (the runtime's shape
requires more of a Template, for one) and gives each model the fields it
declares: the same code answers whichever shape the wire models were
generated from.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel
from starlette.responses import JSONResponse

from e2b_local_api.state.metrics import Sample
from e2b_local_api.state.snapshots import SnapshotRecord
from e2b_local_api.state.store import DOMAIN, ENVD_VERSION, SandboxRecord, TemplateInfo
from e2b_local_api.wire.models import (
    ListedSandbox,
    Sandbox,
    SandboxDetail,
    SandboxForkResult,
    SandboxMetric,
    SnapshotInfo,
    Template,
)

M = TypeVar("M", bound=BaseModel)

CLIENT_ID = "local"  # deprecated in the spec, still required
# The user a template "was created by", for the shape that requires one: the server itself.
LOCAL_USER = {"id": str(uuid.UUID(int=0)), "email": "local@localhost"}


def json_response(
    content: BaseModel | list[BaseModel], status: int = 200, headers: dict[str, str] | None = None
) -> JSONResponse:
    if isinstance(content, list):
        body: object = [item.model_dump(mode="json", exclude_none=True) for item in content]
    else:
        body = content.model_dump(mode="json", exclude_none=True)
    return JSONResponse(body, status_code=status, headers=headers)


def _shaped(model: type[M], fields: Mapping[str, Any]) -> M:
    """The spec's model, from the fields that model declares."""
    return model.model_validate({k: v for k, v in fields.items() if k in model.model_fields and v is not None})


def _sandbox_fields(record: SandboxRecord) -> dict[str, Any]:
    config = record.config
    lifecycle = config.lifecycle
    return {
        "sandboxID": record.sandbox_id,
        "templateID": record.template_id,
        "alias": record.alias,
        "clientID": CLIENT_ID,
        "state": record.state,
        "startedAt": record.started_at,
        "endAt": record.end_at,
        "cpuCount": record.cpu_count,
        "memoryMB": record.memory_mb,
        "diskSizeMB": record.disk_size_mb,
        "metadata": dict(config.metadata),
        "envdVersion": ENVD_VERSION,
        "envdAccessToken": record.envd_access_token,
        "trafficAccessToken": record.traffic_access_token,
        "domain": DOMAIN,
        "allowInternetAccess": config.allow_internet_access,
        "network": config.network.view() if config.network is not None else None,
        "lifecycle": {
            "onTimeout": "pause" if lifecycle.pause_on_timeout else "kill",
            "autoResume": lifecycle.auto_resume,
        },
        "volumeMounts": [{"name": m.name, "path": m.path} for m in config.volume_mounts] or None,
    }


def sandbox(record: SandboxRecord) -> Sandbox:
    return _shaped(Sandbox, _sandbox_fields(record))


def listed(record: SandboxRecord) -> ListedSandbox:
    return _shaped(ListedSandbox, _sandbox_fields(record))


def detail(record: SandboxRecord) -> SandboxDetail:
    return _shaped(SandboxDetail, _sandbox_fields(record))


def fork_result(record: SandboxRecord) -> SandboxForkResult:
    return SandboxForkResult.model_validate({"sandbox": sandbox(record)})


def metric(sample: Sample) -> SandboxMetric:
    return _shaped(
        SandboxMetric,
        {
            "timestamp": sample.time,
            "timestampUnix": sample.timestamp,
            "cpuCount": sample.cpu_count,
            "cpuUsedPct": sample.cpu_used_pct,
            "memUsed": sample.mem_used,
            "memTotal": sample.mem_total,
            "memCache": sample.mem_cache,
            "diskUsed": sample.disk_used,
            "diskTotal": sample.disk_total,
        },
    )


def snapshot_info(snapshot: SnapshotRecord) -> SnapshotInfo:
    return _shaped(SnapshotInfo, {"snapshotID": snapshot.snapshot_id, "names": snapshot.names})


def template(info: TemplateInfo) -> Template:
    spawned, last_spawned = info.spawns or (0, None)
    return _shaped(
        Template,
        {
            "templateID": info.template_id,
            "buildID": info.build_id,
            "public": info.public,
            "aliases": info.aliases,
            "names": info.names,
            "cpuCount": info.cpu_count,
            "memoryMB": info.memory_mb,
            "diskSizeMB": info.disk_size_mb,
            "createdAt": info.created_at,
            "updatedAt": info.updated_at,
            "createdBy": LOCAL_USER,
            "lastSpawnedAt": last_spawned or info.created_at,
            "spawnCount": spawned,
            "buildCount": info.build_count,
            "envdVersion": ENVD_VERSION,
            "buildStatus": "ready",
        },
    )
