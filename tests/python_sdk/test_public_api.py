"""The names `e2b` exports."""

from __future__ import annotations

import e2b


def test_all_is_sorted_and_lists_exactly_the_public_names() -> None:
    public = {name for name in vars(e2b) if not name.startswith("_")} - {"api"}
    assert e2b.__all__ == sorted(e2b.__all__, key=lambda n: (not n.isupper(), n))
    assert set(e2b.__all__) == public


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
