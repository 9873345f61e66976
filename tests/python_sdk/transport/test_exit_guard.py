"""The exit hook that lets pyqwest's threads leave Python before the interpreter finalizes."""

from __future__ import annotations

import _thread
import asyncio
import atexit
import os
import threading
from pathlib import Path

import pyqwest._runtime
import pytest
from e2b import ConnectionConfig
from e2b._transport import _exit_guard
from e2b.sandbox.envd_endpoint import SandboxEndpoint
from e2b.sandbox_async.envd_client import EnvdClient


def _foreign_thread_waiting_on(lock: _thread.LockType) -> tuple[int, threading.Event]:
    """A thread `threading` did not start (as pyqwest's are), inside Python until `lock` is released."""
    started = _thread.allocate_lock()
    started.acquire()
    gone = threading.Event()
    ident: list[int] = []

    def body() -> None:
        ident.append(_thread.get_ident())
        started.release()
        with lock:
            pass
        gone.set()

    _thread.start_new_thread(body, ())
    started.acquire()
    return ident[0], gone


# The test threads' Python is entered in this folder, as pyqwest's is in pyqwest's: only the threads
# entered there are waited for (pytest-xdist's own foreign thread, in Python for good, is not).
HERE = (str(Path(__file__).parent) + os.sep,)


def test_a_reporting_thread_is_waited_for_until_it_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    # No deadline that could end the wait first: it ends because the thread left.
    monkeypatch.setattr(_exit_guard, "MOST_WAIT", 3600.0)
    lock = _thread.allocate_lock()
    lock.acquire()
    ident, gone = _foreign_thread_waiting_on(lock)
    assert ident in _exit_guard.reporting_threads(HERE)
    lock.release()
    _exit_guard.wait_for_reporting_threads(HERE)
    assert ident not in _exit_guard.foreign_threads_in_python()
    gone.wait()


def test_a_reporting_thread_that_never_leaves_does_not_hold_the_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_exit_guard, "MOST_WAIT", 0.01)
    lock = _thread.allocate_lock()
    lock.acquire()
    ident, gone = _foreign_thread_waiting_on(lock)
    try:
        _exit_guard.wait_for_reporting_threads(HERE)  # returns although the thread is still there
        assert ident in _exit_guard.reporting_threads(HERE)
    finally:
        lock.release()
        gone.wait()


def test_a_foreign_thread_entered_elsewhere_is_not_waited_for() -> None:
    lock = _thread.allocate_lock()
    lock.acquire()
    ident, gone = _foreign_thread_waiting_on(lock)
    try:
        assert ident in _exit_guard.foreign_threads_in_python()
        assert ident not in _exit_guard.reporting_threads((str(Path(pytest.__file__).parent) + os.sep,))
    finally:
        lock.release()
        gone.wait()


def test_threads_threading_started_are_not_foreign() -> None:
    lock = threading.Lock()
    lock.acquire()
    thread = threading.Thread(target=lock.acquire, daemon=True)
    thread.start()
    try:
        assert thread.ident not in _exit_guard.foreign_threads_in_python()
        assert threading.main_thread().ident not in _exit_guard.foreign_threads_in_python()
    finally:
        lock.release()
        thread.join()


def test_pyqwests_hand_over_is_python_entered_in_the_folders_waited_for() -> None:
    folders = _exit_guard._pyqwest_folders()
    # pyqwest's Rust threads enter Python in its runtime's call_soon_threadsafe, which calls asyncio's.
    assert pyqwest._runtime.__file__.startswith(folders)
    assert asyncio.base_events.__file__.startswith(folders)
    assert not __file__.startswith(folders)


def test_the_envd_client_installs_the_hook_once_when_it_makes_its_connect_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(_exit_guard, "_installed", False)
    endpoint = SandboxEndpoint.of(
        "sbxtest",
        sandbox_domain=None,
        envd_version="0.6.4",
        envd_access_token=None,
        traffic_access_token=None,
        config=ConnectionConfig(api_key="e2b_test"),
    )
    client = EnvdClient(endpoint)
    assert registered == []
    client._connect_client()
    EnvdClient(endpoint)._connect_client()
    assert registered == [_exit_guard.wait_for_reporting_threads]
