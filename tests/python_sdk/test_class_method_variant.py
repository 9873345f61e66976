"""e2b._class_method_variant: one name, an instance form and a class form."""

from __future__ import annotations

from e2b import Sandbox
from e2b._class_method_variant import class_method_variant


class Thing:
    def __init__(self, name: str) -> None:
        self.name = name

    @staticmethod
    def _cls_greet(name: str, *, loud: bool = False) -> str:
        """Greet `name`."""
        return name.upper() if loud else name

    @class_method_variant(_cls_greet)
    def greet(self, *, loud: bool = False) -> str:
        """Greet this thing."""
        return Thing._cls_greet(self.name, loud=loud)


def test_both_forms() -> None:
    assert Thing("a").greet(loud=True) == "A"
    assert Thing.greet("b") == "b"


def test_each_form_keeps_its_docstring() -> None:
    assert Thing("a").greet.__doc__ == "Greet this thing."
    assert Thing.greet.__doc__ == "Greet `name`."


def test_the_sandbox_methods_have_both_forms_documented() -> None:
    for name in ("connect", "kill", "get_info", "set_timeout", "pause", "beta_pause"):
        assert getattr(Sandbox, name).__doc__, name
        assert getattr(Sandbox("x"), name).__doc__, name
    for doc in (Sandbox.pause.__doc__ or "", Sandbox("x").pause.__doc__ or ""):
        assert "force" in doc and 'on_resume="reboot"' in doc and "pinned" in doc
