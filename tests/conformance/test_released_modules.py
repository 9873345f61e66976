"""e2b 2.63.0's module paths here: each carried one offers what 2.x defines there and this SDK has.

`released_modules.py`, run by the released virtualenv's interpreter, lists the
public names each of 2.x's modules defines. A module is carried when this SDK
has at least one of them, as a thin re-export of the same objects as `e2b`'s;
one with none is listed in NOT_CARRIED with the reason, which the users' guide
gives too (docs/users/sdk.md, "What else differs from 2.63.0").
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
from pathlib import Path

import e2b
import pytest
from e2b import _options, _results

from tests.conformance.test_released_sdk import clean_env, released_python  # noqa: F401  (a fixture)

SCRIPT = Path(__file__).with_name("released_modules.py")
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "users" / "sdk.md"

# 2.x's modules this SDK carries at the same path (besides the data plane's, tests/python_sdk/test_public_api.py).
CARRIED = ("e2b.exceptions", "e2b.connection_config", "e2b.sandbox.sandbox_api")
# 2.x's modules that define nothing this SDK has, and why.
NOT_CARRIED = {
    "e2b.paginator": "PaginatorBase, the base class of 2.x's paginators; here they share e2b._sandbox_logic.PageCursor",
    "e2b.sandbox.main": "SandboxBase and SandboxOpts, 2.x's internals of the Sandbox classes",
    "e2b.sandbox_async.sandbox_api": "SandboxApi, 2.x's base class of AsyncSandbox; its methods are AsyncSandbox's",
    "e2b.sandbox_sync.sandbox_api": "SandboxApi, 2.x's base class of Sandbox; its methods are Sandbox's",
    "e2b.sandbox.network": "ALL_TRAFFIC: the network options are data only, a rule names its addresses",
    "e2b.sandbox.iam": "the IAM token placeholders and their check, which this SDK does not have",
    "e2b.sandbox.utils": "class_method_variant, 2.x's decorator; here e2b._class_method_variant, private",
    "e2b.sandbox_async.utils": "OutputHandler, generic in 2.x (OutputHandler[Stdout]); here a callback is any callable",
    "e2b.sandbox_domains": "E2B's own domains, where envd is reached; here e2b.sandbox.envd_endpoint's, internal",
    "e2b.api.metadata": "the SDK's default headers; e2b.api is generated here, and the headers are private",
    "e2b.client": "E2B, 2.x's client of sandboxes, templates, volumes and secrets, three of which are not here",
    "e2b.io_utils": "2.x's chunking of uploads, private here (e2b.sandbox.filesystem.filesystem)",
    "e2b.retry": "2.x's retry transports, RetryableTransport(transport, retries); here private, with a policy",
}
# What this SDK has: `e2b`'s names, and the option and result types `e2b` does not export (as 2.x's
# `e2b` does not: SandboxOnTimeoutPause and SandboxOnTimeoutKill).
PROVIDED = {*e2b.__all__, *_options.__all__, *_results.__all__}


@pytest.fixture(scope="module")
def released(released_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str] | None]:  # noqa: F811
    done = subprocess.run(
        [str(released_python), "-I", str(SCRIPT), *CARRIED, *NOT_CARRIED],
        capture_output=True,
        text=True,
        cwd=tmp_path_factory.mktemp("modules"),
        env=clean_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize("module", CARRIED)
def test_a_carried_module_offers_what_2x_defines_there_and_this_sdk_has(
    released: dict[str, list[str] | None], module: str
) -> None:
    names = released[module]
    assert names is not None, f"2.63.0 has no {module}"
    expected = sorted(set(names) & PROVIDED)
    carried = importlib.import_module(module)
    # Nothing more: a name 2.x's module does not define is imported from `e2b`.
    assert sorted(carried.__all__) == expected
    for name in expected:
        source = e2b if name in e2b.__all__ else _options if name in _options.__all__ else _results
        assert getattr(carried, name) is getattr(source, name), name


@pytest.mark.parametrize("module", NOT_CARRIED)
def test_a_module_not_carried_defines_nothing_this_sdk_has(released: dict[str, list[str] | None], module: str) -> None:
    names = released[module]
    assert names is not None, f"2.63.0 has no {module}"
    assert set(names) & PROVIDED == set()
    assert importlib.util.find_spec(module) is None


def test_the_guide_names_each_module_carried_or_not() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    assert [module for module in (*CARRIED, *NOT_CARRIED) if f"`{module}`" not in guide] == []
