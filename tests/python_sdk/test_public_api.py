"""The names `e2b` exports."""

from __future__ import annotations

import subprocess
import sys

import e2b
import pytest


def test_all_is_sorted_and_lists_exactly_the_public_names() -> None:
    for name in e2b.__all__:
        getattr(e2b, name)  # the lazy ones land in the module's namespace
    public = {name for name in vars(e2b) if not name.startswith("_")} - {"api"}
    assert e2b.__all__ == sorted(e2b.__all__, key=lambda n: (not n.isupper(), n))
    assert set(e2b.__all__) == public
    assert set(e2b.__all__) <= set(dir(e2b))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Sandboxx'"):
        e2b.Sandboxx  # noqa: B018


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
    )
    return set(out.stdout.split())


def test_import_e2b_leaves_the_http_stack_for_first_use() -> None:
    heavy = {"httpx", "pyqwest", "attr", "e2b.api.client", "e2b.api.sandbox_sync"}
    assert _modules_after("import e2b") & heavy == set()
    assert _modules_after("from e2b import SandboxException, ConnectionConfig") & heavy == set()
    # The sandbox classes need httpx and the generated client, but not pyqwest until a call.
    loaded = _modules_after("from e2b import Sandbox")
    assert {"httpx", "e2b.api.sandbox_sync"} <= loaded
    assert "pyqwest" not in loaded


def test_the_sandbox_classes_load_an_operation_and_its_models_on_its_first_call() -> None:
    loaded = _modules_after("from e2b import Sandbox, AsyncSandbox")
    operations = {m for m in loaded if m.startswith("e2b.api.client.api.")}
    models = {m for m in loaded if m.startswith("e2b.api.client.models.")}
    assert operations == set()
    # What e2b._sandbox_logic itself reads (the listing's order and states), not all 36.
    assert models == {"e2b.api.client.models.order_direction", "e2b.api.client.models.sandbox_state"}
    listed = _modules_after(
        "from e2b.api import sandbox_sync\nsandbox_sync.list_sandboxes.sync_detailed  # the listing's module, read"
    )
    assert {m for m in listed if m.startswith("e2b.api.client.api.")} == {
        "e2b.api.client.api.sandboxes",  # its package
        "e2b.api.client.api.sandboxes.list_sandboxes",
    }


def test_the_generated_models_resolve_on_first_read() -> None:
    from e2b.api.client import models

    assert set(models.__all__) <= set(dir(models))
    assert models.NewSandbox.__module__ == "e2b.api.client.models.new_sandbox"
    from e2b.api.client.models import ConnectSandbox  # `from ... import` goes through the same hook

    assert ConnectSandbox is models.ConnectSandbox
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchModel'"):
        getattr(models, "NoSuchModel")  # noqa: B009 (mypy, too, says it has no such attribute)


def test_the_issue_imports() -> None:
    from e2b import (  # noqa: F401
        SANDBOX_PAUSE_REFUSED_ERROR_CODE,
        AsyncSandbox,
        Sandbox,
        SandboxPauseRefusedException,
        SandboxPauseResult,
        ServiceBusyException,
    )

    assert SANDBOX_PAUSE_REFUSED_ERROR_CODE == "sandbox_pause_refused"


def test_public_classes_present_themselves_as_e2b() -> None:
    for name in e2b.__all__:
        obj = getattr(e2b, name)
        if isinstance(obj, type):
            assert obj.__module__ == "e2b", name
