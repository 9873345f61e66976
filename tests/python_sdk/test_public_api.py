"""The names `e2b` exports."""

from __future__ import annotations

import subprocess
import sys

import e2b
import pytest


def test_all_is_sorted_and_lists_exactly_the_public_names() -> None:
    for name in e2b.__all__:
        getattr(e2b, name)  # the lazy ones land in the module's namespace
    # The subpackages (api, the data plane's, the envd client) and 2.x's module paths are attributes
    # once imported, not exports.
    public = {name for name in vars(e2b) if not name.startswith("_")} - {
        "api",
        "connection_config",
        "envd",
        "exceptions",
        "sandbox",
        "sandbox_async",
        "sandbox_sync",
    }
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
    heavy = {"httpx", "pyqwest", "attr", "e2b.api.client", "e2b.sandbox_sync.main"}
    assert _modules_after("import e2b") & heavy == set()
    assert _modules_after("from e2b import SandboxException, ConnectionConfig") & heavy == set()
    # The sandbox classes need httpx and the generated client, but not pyqwest until a call.
    loaded = _modules_after("from e2b import Sandbox")
    assert {"httpx", "e2b.sandbox_sync.main"} <= loaded
    assert "pyqwest" not in loaded


def test_import_e2b_leaves_the_data_plane_for_first_use() -> None:
    """envd's generated modules bring protobuf-py and connectrpc: not one of them for an `import e2b`."""
    data_plane = ("protobuf", "connectrpc", "e2b.envd")

    def loaded(code: str) -> set[str]:
        return {m for m in _modules_after(code) if m.split(".")[0] in data_plane or m.startswith("e2b.envd")}

    assert loaded("import e2b") == set()
    assert loaded("from e2b import Sandbox, AsyncSandbox") == set()
    # The rule can fail: the generated client does load them.
    assert {"protobuf", "connectrpc", "e2b.envd.process.process_connect"} <= loaded(
        "import e2b.envd.process.process_connect"
    )


def test_the_sandbox_classes_load_an_operation_and_its_models_on_its_first_call() -> None:
    loaded = _modules_after("from e2b import Sandbox, AsyncSandbox")
    operations = {m for m in loaded if m.startswith("e2b.api.client.api.")}
    models = {m for m in loaded if m.startswith("e2b.api.client.models.")}
    assert operations == set()
    # What e2b._sandbox_logic itself reads (the listing's order and states), not all 36.
    assert models == {"e2b.api.client.models.order_direction", "e2b.api.client.models.sandbox_state"}
    listed = _modules_after(
        "from e2b.sandbox_sync import paginator\npaginator.ops.list_sandboxes.sync_detailed  # the listing's, read"
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
        # Stdout, Stderr and PtyOutput are aliases of str and bytes, as in e2b 2.x.
        if isinstance(obj, type) and obj.__module__ != "builtins":
            assert obj.__module__ == "e2b", name


def test_the_sandbox_classes_live_at_the_released_sdk_s_module_paths() -> None:
    """`e2b` 2.x users import them from these modules too: the same objects as `e2b`'s."""
    from e2b.sandbox_async.main import AsyncSandbox
    from e2b.sandbox_async.paginator import AsyncSandboxPaginator, AsyncSnapshotPaginator
    from e2b.sandbox_sync.main import Sandbox
    from e2b.sandbox_sync.paginator import SandboxPaginator, SnapshotPaginator

    assert (AsyncSandbox, AsyncSandboxPaginator, AsyncSnapshotPaginator) == (
        e2b.AsyncSandbox,
        e2b.AsyncSandboxPaginator,
        e2b.AsyncSnapshotPaginator,
    )
    assert (Sandbox, SandboxPaginator, SnapshotPaginator) == (e2b.Sandbox, e2b.SandboxPaginator, e2b.SnapshotPaginator)


def test_the_exceptions_settings_and_options_live_at_the_released_sdk_s_module_paths() -> None:
    """2.x's `e2b.exceptions`, `e2b.connection_config` and `e2b.sandbox.sandbox_api` re-export `e2b`'s objects.

    tests/conformance/test_released_modules.py checks each module's names against 2.63.0's.
    """
    from e2b import connection_config, exceptions
    from e2b.exceptions import TimeoutException
    from e2b.sandbox import sandbox_api

    assert TimeoutException is e2b.TimeoutException
    for module in (exceptions, connection_config, sandbox_api):
        assert module.__all__ == sorted(module.__all__)
        for name in module.__all__:
            assert getattr(module, name) is getattr(e2b, name, getattr(module, name)), (module.__name__, name)
    assert {"SandboxOnTimeoutKill", "SandboxOnTimeoutPause"} <= set(sandbox_api.__all__) - set(e2b.__all__)


def test_2x_s_module_paths_stay_cheap() -> None:
    """Like `import e2b`: none of them loads httpx, pyqwest or the generated client."""
    heavy = {"httpx", "pyqwest", "attr", "e2b.api.client", "e2b.sandbox_sync.main"}
    code = "import e2b.exceptions, e2b.connection_config, e2b.sandbox.sandbox_api"
    assert _modules_after(code) & heavy == set()


def test_the_data_plane_s_names_live_at_the_released_sdk_s_module_paths() -> None:
    """The handles differ by flavour (hand-written under e2b.sandbox._flavour_*); 2.x's paths re-export them."""
    from e2b.sandbox.commands.command_handle import PtySize
    from e2b.sandbox.filesystem.filesystem import EntryInfo, FileType, WriteEntry, WriteInfo
    from e2b.sandbox_async.commands.command_handle import AsyncCommandHandle
    from e2b.sandbox_async.commands.command_input_handle import AsyncCommandInputHandle
    from e2b.sandbox_async.dataplane import AsyncDataPlane
    from e2b.sandbox_async.filesystem.watch_handle import AsyncWatchHandle
    from e2b.sandbox_sync.commands.command_handle import CommandHandle
    from e2b.sandbox_sync.dataplane import DataPlane
    from e2b.sandbox_sync.filesystem.watch_handle import WatchHandle

    assert (PtySize, EntryInfo, FileType, WriteEntry, WriteInfo) == (
        e2b.PtySize,
        e2b.EntryInfo,
        e2b.FileType,
        e2b.WriteEntry,
        e2b.WriteInfo,
    )
    assert (AsyncCommandHandle, AsyncCommandInputHandle, AsyncWatchHandle) == (
        e2b.AsyncCommandHandle,
        e2b.AsyncCommandInputHandle,
        e2b.AsyncWatchHandle,
    )
    assert (CommandHandle, WatchHandle) == (e2b.CommandHandle, e2b.WatchHandle)
    # The sync handle is the polling one, the async one a stream to callbacks, as in 2.x.
    assert hasattr(WatchHandle, "get_new_events") and not hasattr(AsyncWatchHandle, "get_new_events")
    assert issubclass(e2b.Sandbox, DataPlane)
    assert issubclass(e2b.AsyncSandbox, AsyncDataPlane)
