"""Request bodies to the server's values: what each field becomes, and a 400 naming the field for bad ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from e2b_local_api.control import bodies
from e2b_local_api.http.errors import ApiError
from e2b_local_api.state.network import DENY_ALL
from e2b_local_api.state.sandbox_config import IamToken, Lifecycle, VolumeMount

JSON = "application/json"


def _raw(body: object) -> bytes:
    return json.dumps(body).encode()


def test_a_create_keeps_every_field() -> None:
    request = bodies.create(
        _raw(
            {
                "templateID": "base",
                "timeout": 120,
                "autoPause": True,
                "autoResume": {"enabled": True},
                "secure": True,
                "allow_internet_access": False,
                "network": {"allowOut": ["1.1.1.1"], "allowPublicTraffic": False, "maskRequestHost": "x.example.com"},
                "metadata": {"team": "a"},
                "envVars": {"FOO": "bar"},
                "iam": {"tokens": {"aws": {"audience": "sts.amazonaws.com", "tokenType": "JWT-SVID"}}},
                "volumeMounts": [{"name": "vol1", "path": "/data"}],
            }
        ),
        JSON,
    )
    config = request.config
    assert (request.template, request.timeout) == ("base", 120)
    assert config.lifecycle == Lifecycle(pause_on_timeout=True, pause_memory=True, auto_resume=True)
    assert (config.secure, config.allow_internet_access) == (True, False)
    assert config.network is not None and config.network.deny_out == (DENY_ALL,)
    assert config.network.allow_public_traffic is False and config.network.mask_request_host == "x.example.com"
    assert (dict(config.metadata), dict(config.env_vars)) == ({"team": "a"}, {"FOO": "bar"})
    assert dict(config.iam_tokens) == {"aws": IamToken("sts.amazonaws.com", "JWT-SVID")}
    assert config.volume_mounts == (VolumeMount("vol1", "/data"),)


def test_a_minimal_create_takes_the_spec_defaults() -> None:
    request = bodies.create(_raw({"templateID": "base"}), JSON)
    assert request.timeout == 15 and request.config.lifecycle == Lifecycle()
    assert request.config.network is None and request.config.allow_internet_access is None


def test_the_fingerprint_is_of_the_json_value() -> None:
    one = bodies.create(b'{"templateID": "base", "timeout": 5}', JSON)
    two = bodies.create(b'{"timeout":5,"templateID":"base"}', JSON)
    assert one.fingerprint == two.fingerprint != bodies.create(_raw({"templateID": "base"}), JSON).fingerprint


Parse = Callable[[bytes, str | None], Any]

BAD_BODIES: list[tuple[Parse, object, str]] = [
    (
        bodies.create,
        {"templateID": "base", "autoPauseMemory": False, "autoResume": {"enabled": True}},
        "autoPauseMemory",
    ),
    (bodies.create, {"templateID": "base", "network": {"denyOut": ["10.0.0.0/33"]}}, "network.denyOut"),
    (bodies.create, {"templateID": "base", "network": {"allowOut": ["no such host"]}}, "network.allowOut"),
    (bodies.create, {"templateID": "base", "network": {"allowOut": None}}, "network.allowOut: must not be null"),
    (bodies.create, {"templateID": "base", "network": {"egressProxy": {"address": "p"}}}, "network.egressProxy"),
    (bodies.create, {"templateID": "base", "autoResume": {"enabled": "yes"}}, "autoResume.enabled"),
    (bodies.create, {"templateID": "base", "envVars": {"A": 1}}, "envVars"),
    # No process could start with these: a variable past Linux's MAX_ARG_STRLEN, or all of them past one request.
    (bodies.create, {"templateID": "base", "envVars": {"BIG": "a" * 150_000}}, "envVars: argument list too long"),
    (
        bodies.create,
        {"templateID": "base", "envVars": {f"V{i}": "a" * 100_000 for i in range(3)}},
        "envVars: argument list too long: the environment variables take",
    ),
    (bodies.create, {"templateID": "base", "volumeMounts": [{"name": "v", "path": "data"}]}, "volumeMounts.0.path"),
    (
        bodies.create,
        {"templateID": "base", "volumeMounts": [{"name": "v", "path": "/d"}, {"name": "w", "path": "/d"}]},
        "volumeMounts.1.path",
    ),
    (bodies.create, {"templateID": "base", "iam": {"tokens": {"t": {"audience": "a"}}}}, "iam.tokens.t.tokenType"),
    (bodies.fork, {"count": 21}, "count: "),  # 20 by the spec; one shape's model allows 100, the server does not
    (bodies.fork, {"count": 0}, "count"),
    (bodies.fork, {"timeout": -1}, "timeout"),
    (bodies.fork, {"count": "2"}, "count"),
    (bodies.refresh, {"duration": 3601}, "duration"),
    (bodies.refresh, {"duration": -1}, "duration"),
    (bodies.connect, {"timeout": 10, "memory": "no"}, "memory"),
    (bodies.connect, {"timeout": None}, "timeout"),
    (bodies.snapshot, {"name": "Not OK"}, "name"),
    (bodies.snapshot, {"memory": 0}, "memory"),
    (bodies.network_update, {"denyOut": ["example.com"]}, "denyOut: 'example.com'"),
    (bodies.network_update, {"allow_internet_access": "no"}, "allow_internet_access"),
    (bodies.network_update, {"rules": {"a b": []}}, "rules"),
]


@pytest.mark.parametrize(("parse", "body", "named"), BAD_BODIES)
def test_bad_bodies_are_400s_naming_the_field(parse: Parse, body: object, named: str) -> None:
    with pytest.raises(ApiError) as refused:
        parse(_raw(body), JSON)
    assert (refused.value.status, refused.value.error_code) == (400, "invalid_request")
    assert named in refused.value.message


def test_a_connect_without_timeout_leaves_the_deadline_and_memory_defaults_to_true() -> None:
    # The released SDK's `sbx.connect()` sends `{}`.
    assert bodies.connect(b"{}", JSON) == (0, True)
    assert bodies.connect(_raw({"timeout": 30, "memory": False}), JSON) == (30, False)
    with pytest.raises(ApiError, match="request body is required"):
        bodies.connect(b"", JSON)


def test_optional_bodies_and_their_defaults() -> None:
    assert bodies.fork(b"", None) == (15, 1)
    assert bodies.fork(b"{}", JSON) == (15, 1)
    assert bodies.refresh(b"", None) is None
    assert bodies.pause(b"", None) == (True, False)
    assert bodies.snapshot(b"{}", JSON) == (None, True)
    assert bodies.snapshot(_raw({"name": "local/snap:default", "memory": False}), JSON) == ("snap", False)


def test_a_network_update_may_clear_everything_or_deny_all() -> None:
    assert bodies.network_update(b"{}", JSON).view() == {}
    assert bodies.network_update(_raw({"allow_internet_access": False}), JSON).deny_out == (DENY_ALL,)
    proxy = bodies.network_update(_raw({"egressProxy": None}), JSON)  # nullable in the spec
    assert proxy.egress_proxy is None


def test_the_fork_count_bound_is_the_servers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # One spec shape's model allows 100 forks; the bound holds whatever the model says.
    monkeypatch.setattr(bodies, "MAX_FORKS", 3)
    with pytest.raises(ApiError, match="count: must be between 1 and 3, got 4"):
        bodies.fork(_raw({"count": 4}), JSON)
