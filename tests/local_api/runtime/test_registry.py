"""Which sandboxes get a network: none when internet access is off or all egress denied."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from e2b_local_api.runtime.registry import internet_allowed
from e2b_local_api.state.network import NetworkConfig


@dataclass
class Config:
    allow_internet_access: bool | None = None
    network: NetworkConfig | None = None


@pytest.mark.parametrize(
    ("config", "allowed"),
    [
        (Config(), True),
        (Config(allow_internet_access=True), True),
        (Config(allow_internet_access=False), False),
        (Config(network=NetworkConfig(deny_out=("0.0.0.0/0",))), False),
        # Finer egress rules are not enforced: the sandbox keeps the host's network.
        (Config(network=NetworkConfig(deny_out=("10.0.0.0/8",))), True),
        (Config(network=NetworkConfig(allow_out=("1.1.1.1",))), True),
    ],
)
def test_internet_allowed(config: Config, allowed: bool) -> None:
    assert internet_allowed(config) is allowed
