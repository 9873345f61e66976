"""A sandbox's network settings: checked when given, kept, shown back without secrets.

Nothing is enforced here; entries are checked as the cloud would (a bad one is a 400 naming it),
and `allow_internet_access: false` is stored as `0.0.0.0/0` in `denyOut`.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/state/network.py".
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from e2b_local_api.http.errors import bad_request
from e2b_local_api.http.validation import unwrap

DENY_ALL = "0.0.0.0/0"

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$", re.IGNORECASE)


@dataclass(frozen=True)
class EgressProxy:
    address: str
    username: str | None = None
    password: str | None = None


@dataclass(frozen=True)
class NetworkConfig:
    """`None` fields were not given: the answer leaves them out (or shows the spec's default)."""

    allow_public_traffic: bool | None = None
    mask_request_host: str | None = None
    allow_out: tuple[str, ...] | None = None
    deny_out: tuple[str, ...] | None = None
    rules: Mapping[str, list[dict[str, Any]]] | None = None
    egress_proxy: EgressProxy | None = None

    @property
    def denies_all(self) -> bool:
        return self.deny_out is not None and DENY_ALL in self.deny_out

    def with_egress(self, egress: NetworkConfig) -> NetworkConfig:
        """These settings with the egress part (allow, deny, rules, proxy) replaced by `egress`'s."""
        return replace(
            self,
            allow_out=egress.allow_out,
            deny_out=egress.deny_out,
            rules=egress.rules,
            egress_proxy=egress.egress_proxy,
        )

    def view(self) -> dict[str, Any]:
        """The spec's SandboxNetworkConfig, password left out."""
        shown: dict[str, Any] = {}
        if self.allow_public_traffic is not None:
            shown["allowPublicTraffic"] = self.allow_public_traffic
        if self.mask_request_host is not None:
            shown["maskRequestHost"] = self.mask_request_host
        if self.allow_out is not None:
            shown["allowOut"] = list(self.allow_out)
        if self.deny_out is not None:
            shown["denyOut"] = list(self.deny_out)
        if self.rules is not None:
            shown["rules"] = {domain: [dict(r) for r in rules] for domain, rules in self.rules.items()}
        if self.egress_proxy is not None:
            proxy = {"address": self.egress_proxy.address}
            if self.egress_proxy.username is not None:
                proxy["username"] = self.egress_proxy.username
            shown["egressProxy"] = proxy
        return shown


def network_config(model: BaseModel | None, *, allow_internet_access: bool | None, field: str) -> NetworkConfig | None:
    """A create request's `network` (SandboxNetworkConfig) or a network update (SandboxNetworkUpdateConfig).

    Fields are read by name with getattr: an update has no `allowPublicTraffic`
    or `maskRequestHost`, and the spec shapes' models differ in how they wrap
    values. `field` prefixes the names in error messages (`network.` or "").
    """
    if model is None and allow_internet_access is not False:
        return None
    allow_out = _entries(getattr(model, "allowOut", None), f"{field}allowOut", domains=True)
    deny_out = _entries(getattr(model, "denyOut", None), f"{field}denyOut", domains=False)
    if allow_internet_access is False and DENY_ALL not in (deny_out or ()):
        deny_out = (*(deny_out or ()), DENY_ALL)
    return NetworkConfig(
        allow_public_traffic=_optional(getattr(model, "allowPublicTraffic", None), bool),
        mask_request_host=_optional(getattr(model, "maskRequestHost", None), str),
        allow_out=allow_out,
        deny_out=deny_out,
        rules=_rules(getattr(model, "rules", None), f"{field}rules"),
        egress_proxy=_proxy(getattr(model, "egressProxy", None), f"{field}egressProxy"),
    )


def _optional(value: object, kind: type[Any]) -> Any:
    value = unwrap(value)
    return value if isinstance(value, kind) else None


def _entries(values: object, field: str, *, domains: bool) -> tuple[str, ...] | None:
    if values is None:
        return None
    assert isinstance(values, list)
    for entry in values:
        if not is_ip_or_cidr(entry) and not (domains and is_domain(entry)):
            expected = "a CIDR block, an IP address or a domain name" if domains else "a CIDR block or an IP address"
            raise bad_request(f"{field}: {entry!r} is not {expected}")
    return tuple(values)


def is_ip_or_cidr(entry: str) -> bool:
    """`10.0.0.0/8`, `8.8.8.8`, `2001:db8::/32`; host bits may be set (`10.1.2.3/8`), as most firewalls accept."""
    try:
        ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return False
    return True


def is_domain(entry: str) -> bool:
    """A host name, optionally with a leading `*.` wildcard; its last label is not all digits (`1.2.3` is no IP)."""
    name = entry.removeprefix("*.")
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        return False
    return not labels[-1].isdigit()


def _rules(value: object, field: str) -> dict[str, list[dict[str, Any]]] | None:
    value = unwrap(value)
    if value is None:
        return None
    assert isinstance(value, dict)
    rules: dict[str, list[dict[str, Any]]] = {}
    for domain, items in value.items():
        if not is_domain(domain):
            raise bad_request(f"{field}: {domain!r} is not a domain name")
        rules[domain] = [item.model_dump(mode="json", exclude_none=True) for item in items]
    return rules


def _proxy(value: object, field: str) -> EgressProxy | None:
    if value is None:
        return None
    assert isinstance(value, BaseModel)
    address = getattr(value, "address", "")
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise bad_request(f"{field}.address: expected host:port with a port from 1 to 65535, got {address!r}")
    return EgressProxy(address, getattr(value, "username", None), getattr(value, "password", None))
