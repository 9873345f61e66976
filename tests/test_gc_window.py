"""tests/gc_window.py: why a test that interrupts its own main thread needs it, and that it holds."""

from __future__ import annotations

import gc
import signal
import sys

import pytest

from .gc_window import no_collection
from .signal_dispositions import default_dispositions


def _survivors() -> list[list[object]]:
    # Kept alive, so that each allocation counts towards the next collection (a freed one counts back).
    return [[] for _ in range(10 * gc.get_threshold()[0])]


def test_a_ctrl_c_handled_in_a_gc_callback_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    lost: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: lost.append(unraisable.exc_type))

    def interrupted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            signal.raise_signal(signal.SIGINT)  # its handler raises here, inside the callback

    with default_dispositions():
        gc.callbacks.append(interrupted)
        try:
            gc.collect(0)  # returns: the KeyboardInterrupt went to sys.unraisablehook
        finally:
            gc.callbacks.remove(interrupted)
    assert lost == [KeyboardInterrupt]


def test_in_the_window_no_collection_runs_a_gc_callback() -> None:
    phases: list[str] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        phases.append(phase)

    assert gc.isenabled()
    gc.callbacks.append(callback)
    try:
        with no_collection():
            inside = _survivors()
            assert phases == []
        outside = _survivors()
        assert phases, "the same allocations outside the window collect"
    finally:
        gc.callbacks.remove(callback)
    assert gc.isenabled() and len(inside) == len(outside)


def test_a_collector_disabled_before_stays_so() -> None:
    gc.disable()
    try:
        with no_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
