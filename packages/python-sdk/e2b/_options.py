"""What the sandbox calls accept beyond plain values, and the checks that turn it into the API's JSON.

Every `*_wire` function returns wire data (the API's field names) or raises
`InvalidArgumentException` naming the field and what it allows, so a bad
value never reaches the API and nothing is silently left out: a key these
options do not know is an error too.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from e2b._exceptions import InvalidArgumentException, brief
from e2b._results import SandboxState

__all__ = [
    "SandboxEgressProxyOpts",
    "SandboxIamOpts",
    "SandboxIamToken",
    "SandboxLifecycle",
    "SandboxListOrder",
    "SandboxNetworkOpts",
    "SandboxNetworkRule",
    "SandboxNetworkTransform",
    "SandboxNetworkUpdate",
    "SandboxOnResume",
    "SandboxOnTimeout",
    "SandboxOnTimeoutKill",
    "SandboxOnTimeoutPause",
    "SandboxQuery",
    "SnapshotMode",
]

SnapshotMode = Literal["full", "filesystem"]
"""What a snapshot keeps: "full" memory and filesystem, "filesystem" the disk only (resuming cold-boots)."""
SandboxOnResume = Literal["restore", "reboot"]
"""How a paused sandbox comes back: "restore" its memory, or "reboot" it from the snapshot's disk."""
SandboxListOrder = Literal["asc", "desc"]
"""Listing order by start time: "desc" (newest first, the API's default) or "asc"."""

MAX_FORK_COUNT = 20  # the spec's SandboxForkRequest.count maximum
MAX_PAGE = 100  # the spec's `limit` maximum
MAX_IDEMPOTENCY_KEY = 255  # the spec's Idempotency-Key maxLength


@dataclass
class SandboxQuery:
    """Filters for `Sandbox.list()`: every one given must match."""

    metadata: dict[str, str] | None = None
    """Only sandboxes whose metadata has all these pairs."""
    state: list[SandboxState] | None = None
    """Only sandboxes in one of these states."""
    started_after: datetime.datetime | None = None
    """Only sandboxes started at or after this time; a naive datetime is local time."""
    template: str | None = None
    """Only sandboxes started from this template (identifier or alias)."""


class SandboxOnTimeoutPause(TypedDict):
    """`on_timeout` that pauses the sandbox at its deadline, with the snapshot kind."""

    action: Literal["pause"]
    mode: NotRequired[SnapshotMode]
    """The snapshot kind: "full" (the API's default) or "filesystem"."""
    keep_memory: NotRequired[bool]
    """Deprecated: `mode`. False is "filesystem", True is "full"."""


class SandboxOnTimeoutKill(TypedDict):
    """`on_timeout` that kills the sandbox at its deadline."""

    action: Literal["kill"]


SandboxOnTimeout = Literal["pause", "kill"] | SandboxOnTimeoutPause | SandboxOnTimeoutKill
"""What happens at the sandbox's deadline: "pause" (a full snapshot), "kill", or one of the two dicts."""


class SandboxLifecycle(TypedDict):
    """What happens at the sandbox's deadline, and whether traffic resumes it when paused."""

    on_timeout: SandboxOnTimeout
    """Pause or kill the sandbox at its deadline."""
    auto_resume: NotRequired[bool]
    """Resume the paused sandbox when traffic reaches it (the API's default: False)."""


class SandboxNetworkTransform(TypedDict, total=False):
    """Headers set on matching egress requests."""

    headers: dict[str, str]
    """Headers to set on matching requests, replacing a header of the same name."""


class SandboxNetworkRule(TypedDict, total=False):
    """A transform for egress requests to one domain."""

    transform: SandboxNetworkTransform
    """What is changed in matching requests before they are forwarded."""


class SandboxEgressProxyOpts(TypedDict):
    """A SOCKS5 proxy for egress TCP, as `host:port`."""

    address: str
    """The proxy as `host:port`, e.g. "proxy.example.com:1080"."""
    username: NotRequired[str]
    """The SOCKS5 username (RFC 1929), at most 255 bytes."""
    password: NotRequired[str]
    """The SOCKS5 password (RFC 1929), at most 255 bytes; the API never returns it."""


class SandboxNetworkOpts(TypedDict, total=False):
    """A sandbox's network at creation (`Sandbox.create(network=...)`)."""

    allow_out: list[str]
    """Allowed egress destinations: CIDR blocks, IP addresses or domain names; they win over `deny_out`."""
    deny_out: list[str]
    """Denied egress destinations: CIDR blocks or IP addresses (no domain names)."""
    rules: dict[str, list[SandboxNetworkRule]]
    """Transforms of egress requests, by domain; a domain listed here is not thereby allowed."""
    egress_proxy: SandboxEgressProxyOpts
    """A SOCKS5 proxy that egress TCP goes through, after `allow_out` and `deny_out` are applied."""
    allow_public_traffic: bool
    """Whether the sandbox's URLs answer without authentication."""
    mask_request_host: str
    """The host mask used for the sandbox's requests."""


class SandboxNetworkUpdate(TypedDict, total=False):
    """A running sandbox's new egress configuration (`update_network`); a key left out is cleared."""

    allow_out: list[str]
    """Allowed egress destinations: CIDR blocks, IP addresses or domain names; they win over `deny_out`."""
    deny_out: list[str]
    """Denied egress destinations: CIDR blocks or IP addresses."""
    rules: dict[str, list[SandboxNetworkRule]]
    """Transforms of egress requests, by domain."""
    egress_proxy: SandboxEgressProxyOpts
    """A SOCKS5 proxy that egress TCP goes through."""
    allow_internet_access: bool
    """False denies all egress, as `deny_out=["0.0.0.0/0"]` does."""


class SandboxIamToken(TypedDict):
    """One workload token: its audience and kind."""

    audience: str
    """The token's audience, kept exactly as given."""
    token_type: str
    """The kind of workload token."""


class SandboxIamOpts(TypedDict, total=False):
    """Workload identity: tokens by a name the caller chooses."""

    tokens: dict[str, SandboxIamToken]
    """The workload tokens, by name; a non-empty map turns workload identity on."""


def _fail(field: str, allowed: str, value: object) -> InvalidArgumentException:
    return InvalidArgumentException(f"{field} must be {allowed} (got {value!r})")


def _known_keys(field: str, value: object, keys: Mapping[str, str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(field, "a dict", value)
    unknown = sorted(str(key) for key in value if key not in keys)
    if unknown:
        raise InvalidArgumentException(
            f"{field}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(keys)}"
        )
    return value


def integer(field: str, value: object, *, low: int = 0, high: int | None = None) -> int:
    """An int within [low, high]; bools are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
        raise _fail(field, bound, value)
    return value


def optional_bool(field: str, value: object) -> bool | None:
    """A bool, or None for "not passed": 1 and "yes" are mistakes, not truths."""
    if value is not None and not isinstance(value, bool):
        raise _fail(field, "a bool", value)
    return value


def choice(field: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise _fail(field, "one of " + ", ".join(map(repr, allowed)), value)
    return value


def string_map(field: str, value: object) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _fail(field, "a dict of str to str", value)
    return {_utf8(f"{field} key", k): _utf8(f"{field}[{k!r}]", v) for k, v in value.items()}


def _utf8(field: str, value: str) -> str:
    """`value`, if it can be sent: a lone surrogate (from a bad decode) has no UTF-8 form."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentException(
            f"{field} holds a character that has no UTF-8 form (a lone surrogate, {brief(value)}): "
            "decode the text it came from with errors='replace' or fix it"
        ) from None
    return value


def text(field: str, value: object, *, max_length: int | None = None) -> str:
    if not isinstance(value, str) or not value or (max_length is not None and len(value) > max_length):
        limit = "" if max_length is None else f" of at most {max_length} characters"
        raise _fail(field, f"a non-empty str{limit}", value)
    return _utf8(field, value)


# A sandbox id is one segment of a request's path. The client percent-encodes it, but no id the
# API gives holds these: a "/" or "%" is a path or an id encoded twice, "?" and "#" a URL pasted
# whole; "." and ".." are refused too, as the dot segments URL handling removes.
_NOT_IN_A_SANDBOX_ID = frozenset("/?#%\\")
# A snapshot id is sent percent-encoded as one segment and may name a team and a tag
# (team/name:tag), so "/" is its own; "?" and "#" are in no name the API gives.
_NOT_IN_A_SNAPSHOT_ID = frozenset("?#")


def _unprintable(char: str) -> bool:
    # Separators (spaces, line breaks) and control, format or unassigned characters (category C*).
    return char.isspace() or unicodedata.category(char)[0] in "CZ"


def _path_id(field: str, value: object, refused: frozenset[str], kind: str) -> str:
    if not isinstance(value, str):
        raise _fail(field, "a str", value)
    if not value:
        raise InvalidArgumentException(f"{field} must not be empty: pass the {kind}")
    wrong = next((char for char in value if char in refused or _unprintable(char)), None)
    if wrong is not None or value in (".", ".."):
        what = f"it holds {wrong!r}" if wrong is not None else "it is a dot segment"
        raise InvalidArgumentException(f"{field} {brief(value)} cannot be a {kind}: {what}; pass the id alone")
    return _utf8(field, value)


def sandbox_id(field: str, value: object) -> str:
    """A sandbox id that can be sent as one path segment, or `InvalidArgumentException`."""
    return _path_id(field, value, _NOT_IN_A_SANDBOX_ID, "sandbox id")


def snapshot_id(field: str, value: object) -> str:
    """A snapshot id (`team/name:tag` forms included), or `InvalidArgumentException`."""
    return _path_id(field, value, _NOT_IN_A_SNAPSHOT_ID, "snapshot id")


def _string_list(field: str, value: object) -> list[str]:
    if isinstance(value, str) or not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise _fail(field, "a list of str", value)
    return list(value)


_DOMAIN = re.compile(
    r"(\*\.)?([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
)


def _is_address(entry: str) -> bool:
    try:
        ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return False
    return True


def _destinations(field: str, value: object, *, domains: bool) -> list[str]:
    entries = _string_list(field, value)
    for entry in entries:
        if _is_address(entry) or (domains and _DOMAIN.fullmatch(entry)):
            continue
        kind = "CIDR blocks, IP addresses or domain names" if domains else "CIDR blocks or IP addresses"
        raise _fail(f"{field} entry", kind, entry)
    return entries


def _rules_wire(field: str, value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(field, "a dict of domain to a list of rules", value)
    wire: dict[str, Any] = {}
    for domain, rules in value.items():
        if not isinstance(domain, str) or not _DOMAIN.fullmatch(domain):
            raise _fail(f"{field} key", "a domain name", domain)
        if not isinstance(rules, list | tuple):
            raise _fail(f"{field}[{domain!r}]", "a list of rules", rules)
        wire[domain] = []
        for rule in rules:
            rule = _known_keys(f"{field}[{domain!r}] rule", rule, {"transform": ""})
            if "transform" not in rule:
                wire[domain].append({})
                continue
            transform = _known_keys(f"{field}[{domain!r}] transform", rule["transform"], {"headers": ""})
            headers = string_map(f"{field}[{domain!r}] transform headers", transform.get("headers", {}))
            wire[domain].append({"transform": {"headers": headers}})
    return wire


def _proxy_wire(field: str, value: object) -> dict[str, Any]:
    proxy = _known_keys(field, value, {"address": "", "username": "", "password": ""})
    if "address" not in proxy:
        raise InvalidArgumentException(f"{field} needs an address, as host:port")
    wire = {"address": text(f"{field} address", proxy["address"])}
    for key in ("username", "password"):
        if key in proxy:
            wire[key] = text(f"{field} {key}", proxy[key], max_length=255)
    return wire


_NETWORK_KEYS = {
    "allow_out": "allowOut",
    "deny_out": "denyOut",
    "rules": "rules",
    "egress_proxy": "egressProxy",
    "allow_public_traffic": "allowPublicTraffic",
    "mask_request_host": "maskRequestHost",
}
_UPDATE_KEYS = {
    "allow_out": "allowOut",
    "deny_out": "denyOut",
    "rules": "rules",
    "egress_proxy": "egressProxy",
    "allow_internet_access": "allow_internet_access",
}


def _network(field: str, value: object, keys: Mapping[str, str]) -> dict[str, Any]:
    options = _known_keys(field, value, keys)
    wire: dict[str, Any] = {}
    for key, item in options.items():
        name = f"{field}[{key!r}]"
        if key == "allow_out":
            wire[keys[key]] = _destinations(name, item, domains=True)
        elif key == "deny_out":
            wire[keys[key]] = _destinations(name, item, domains=False)
        elif key == "rules":
            wire[keys[key]] = _rules_wire(name, item)
        elif key == "egress_proxy":
            wire[keys[key]] = _proxy_wire(name, item)
        elif key in ("allow_public_traffic", "allow_internet_access"):
            if not isinstance(item, bool):  # present: None is no more a bool here than 1 is
                raise _fail(name, "a bool", item)
            wire[keys[key]] = item
        else:
            wire[keys[key]] = text(name, item)
    return wire


def network_wire(network: object) -> dict[str, Any]:
    """`SandboxNetworkOpts` as the create body's `network`."""
    return _network("network", network, _NETWORK_KEYS)


def network_update_wire(network: object) -> dict[str, Any]:
    """`SandboxNetworkUpdate` as the network update body."""
    return _network("network", network, _UPDATE_KEYS)


def snapshot_memory(field: str, mode: object, keep_memory: object = None) -> bool | None:
    """The API's `memory` flag for a snapshot kind; None leaves the API's default (a full snapshot)."""
    if mode is not None and keep_memory is not None:
        raise InvalidArgumentException(f"pass {field} or the deprecated keep_memory, not both")
    if mode is None:
        return optional_bool("keep_memory", keep_memory)
    return choice(field, mode, ("full", "filesystem")) == "full"


def lifecycle_wire(lifecycle: object) -> dict[str, Any]:
    """`SandboxLifecycle` as the create body's autoPause, autoPauseMemory and autoResume."""
    options = _known_keys("lifecycle", lifecycle, {"on_timeout": "", "auto_resume": ""})
    raw = options.get("on_timeout")
    pause_opts: Mapping[str, Any] = {}
    if isinstance(raw, Mapping):
        pause_opts = _known_keys('lifecycle["on_timeout"]', raw, {"action": "", "mode": "", "keep_memory": ""})
        action = choice('lifecycle["on_timeout"]["action"]', pause_opts.get("action"), ("pause", "kill"))
    elif raw is not None:
        action = choice('lifecycle["on_timeout"]', raw, ("pause", "kill"))
    else:
        action = None
    if action != "pause" and ("mode" in pause_opts or "keep_memory" in pause_opts):
        raise InvalidArgumentException('lifecycle["on_timeout"]: mode is only allowed with the "pause" action')
    memory = snapshot_memory('lifecycle["on_timeout"]["mode"]', pause_opts.get("mode"), pause_opts.get("keep_memory"))
    auto_resume = optional_bool('lifecycle["auto_resume"]', options.get("auto_resume"))
    if auto_resume and action != "pause":
        raise InvalidArgumentException('lifecycle["auto_resume"] can be True only when on_timeout is "pause"')
    if auto_resume and memory is False:
        raise InvalidArgumentException(
            'lifecycle["auto_resume"] cannot be True with mode "filesystem": a filesystem snapshot '
            "is resumed only by connect(), never by traffic"
        )
    wire: dict[str, Any] = {}
    if action is not None:
        wire["autoPause"] = action == "pause"
    if action == "pause" and memory is not None:
        wire["autoPauseMemory"] = memory
    if auto_resume is not None:
        wire["autoResume"] = {"enabled": auto_resume}
    return wire


def iam_wire(iam: object) -> dict[str, Any]:
    options = _known_keys("iam", iam, {"tokens": ""})
    tokens = options.get("tokens", {})
    if not isinstance(tokens, Mapping):
        raise _fail('iam["tokens"]', "a dict of name to token", tokens)
    wire: dict[str, Any] = {}
    for name, token in tokens.items():
        field = f'iam["tokens"][{name!r}]'
        token = _known_keys(field, token, {"audience": "", "token_type": ""})
        if "audience" not in token or "token_type" not in token:
            raise InvalidArgumentException(f"{field} needs audience and token_type")
        wire[text(f"{field} name", name)] = {
            "audience": text(f"{field} audience", token["audience"]),
            "tokenType": text(f"{field} token_type", token["token_type"]),
        }
    return {"tokens": wire}


def volume_mounts_wire(mounts: object) -> list[dict[str, str]]:
    """`{path: volume}` as the API's mount list; a volume is its name or an object with a `name`."""
    if not isinstance(mounts, Mapping):
        raise _fail("volume_mounts", "a dict of mount path to volume", mounts)
    wire = []
    for path, volume in mounts.items():
        name = volume if isinstance(volume, str) else getattr(volume, "name", None)
        wire.append({"name": text(f"volume_mounts[{path!r}]", name), "path": text("volume_mounts path", path)})
    return wire


def states_wire(states: object) -> list[str] | None:
    if states is None:
        return None
    if isinstance(states, str) or not isinstance(states, list | tuple | set | frozenset):
        raise _fail("query.state", "a list of SandboxState", states)
    allowed = tuple(member.value for member in SandboxState)
    # No states means no filter: the API refuses an empty `state=`.
    return [choice("query.state entry", getattr(s, "value", s), allowed) for s in states] or None


def started_after_wire(value: object) -> datetime.datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime.datetime):
        raise _fail("query.started_after", "a datetime", value)
    return in_range("query.started_after", value).astimezone()  # a naive datetime is local time


def in_range(field: str, value: datetime.datetime) -> datetime.datetime:
    """`value`, if it has a Unix time and a local time: datetime(1, 1, 1) at +14:00 has neither."""
    try:
        value.timestamp()
        value.astimezone()
    except (OverflowError, ValueError, OSError):  # OSError: some platforms' localtime out of its range
        raise InvalidArgumentException(
            f"{field} {value.isoformat()} is out of range: it has no UTC or local time within datetime's years 1-9999"
        ) from None
    return value


def query_fields(query: object) -> SandboxQuery:
    if query is None:
        return SandboxQuery()
    if not isinstance(query, SandboxQuery):
        raise _fail("query", "a SandboxQuery", query)
    if query.metadata is not None:
        string_map("query.metadata", query.metadata)
    if query.template is not None:
        text("query.template", query.template)
    return query
