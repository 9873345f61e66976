"""Network settings: which egress entries are accepted, what is shown back, what an update replaces."""

from __future__ import annotations

import pytest
from e2b_local_api.http.errors import ApiError
from e2b_local_api.state.network import DENY_ALL, EgressProxy, NetworkConfig, is_domain, is_ip_or_cidr, network_config
from e2b_local_api.wire.models import SandboxNetworkConfig


@pytest.mark.parametrize("entry", ["10.0.0.0/8", "8.8.8.8", "0.0.0.0/0", "10.1.2.3/8", "2001:db8::/32", "::1"])
def test_ip_addresses_and_cidr_blocks(entry: str) -> None:
    assert is_ip_or_cidr(entry)


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "1.2.3", "256.1.1.1", "example.com", "", "10.0.0.0/", "1.2.3.4/x"])
def test_not_ip_addresses(entry: str) -> None:
    assert not is_ip_or_cidr(entry)


@pytest.mark.parametrize("entry", ["example.com", "*.example.com", "a-b.example.co.uk", "localhost", "x1.io"])
def test_domain_names(entry: str) -> None:
    assert is_domain(entry)


@pytest.mark.parametrize(
    "entry", ["1.2.3", "-a.com", "a..com", "a b.com", "*", "*.", "ex_ample.com", "a" * 64 + ".com", ""]
)
def test_not_domain_names(entry: str) -> None:
    assert not is_domain(entry)


def _config(**fields: object) -> NetworkConfig | None:
    return network_config(SandboxNetworkConfig.model_validate(fields), allow_internet_access=None, field="network.")


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"denyOut": ["example.com"]}, "network.denyOut: 'example.com' is not a CIDR block or an IP address"),
        ({"denyOut": ["10.0.0.0/33"]}, "network.denyOut: '10.0.0.0/33'"),
        ({"allowOut": ["not a host"]}, "network.allowOut: 'not a host' is not a CIDR block, an IP address or a domain"),
        ({"rules": {"bad domain": []}}, "network.rules: 'bad domain' is not a domain name"),
        ({"egressProxy": {"address": "proxy"}}, "network.egressProxy.address: expected host:port"),
        ({"egressProxy": {"address": "proxy:99999"}}, "network.egressProxy.address"),
    ],
)
def test_bad_entries_are_400s_naming_the_field_and_entry(fields: dict[str, object], named: str) -> None:
    with pytest.raises(ApiError) as refused:
        _config(**fields)
    assert (refused.value.status, refused.value.error_code) == (400, "invalid_request")
    assert named in refused.value.message


def test_the_view_never_shows_the_proxy_password() -> None:
    config = _config(egressProxy={"address": "proxy.example.com:1080", "username": "u", "password": "secret"})
    assert config is not None and config.egress_proxy == EgressProxy("proxy.example.com:1080", "u", "secret")
    assert config.view()["egressProxy"] == {"address": "proxy.example.com:1080", "username": "u"}
    assert "secret" not in repr(config.view())


def test_no_internet_access_is_deny_all_once() -> None:
    assert network_config(None, allow_internet_access=None, field="") is None
    denied = network_config(None, allow_internet_access=False, field="")
    assert denied is not None and denied.deny_out == (DENY_ALL,) and denied.denies_all
    model = SandboxNetworkConfig.model_validate({"denyOut": ["10.0.0.0/8", DENY_ALL]})
    again = network_config(model, allow_internet_access=False, field="")
    assert again is not None and again.deny_out == ("10.0.0.0/8", DENY_ALL)


def test_an_update_replaces_the_egress_part_only() -> None:
    current = NetworkConfig(
        allow_public_traffic=False,
        mask_request_host="${PORT}-x.example.com",
        allow_out=("1.1.1.1",),
        deny_out=(DENY_ALL,),
        rules={"api.example.com": [{"transform": {"headers": {"X": "1"}}}]},
        egress_proxy=EgressProxy("p:1"),
    )
    updated = current.with_egress(NetworkConfig(allow_out=("8.8.8.8",)))
    assert updated.view() == {
        "allowPublicTraffic": False,
        "maskRequestHost": "${PORT}-x.example.com",
        "allowOut": ["8.8.8.8"],
    }
