"""e2b._class_method_variant: one name, an instance form and a class form."""

from __future__ import annotations

import warnings

import pytest
from e2b import ApiParams, AsyncSandbox, ConnectionConfig, Sandbox
from e2b._class_method_variant import deprecated_alias, sandbox_method
from typing_extensions import Unpack


class Thing:
    def __init__(self, sandbox_id: str, *, connection_config: ConnectionConfig | None = None) -> None:
        self.sandbox_id = sandbox_id
        self.connection_config = connection_config or ConnectionConfig()

    @sandbox_method
    def greet(self, greeting: str = "hello", *, loud: bool = False, **opts: Unpack[ApiParams]) -> str:
        """Greet this thing."""
        config = self.connection_config.merged(**opts)
        text = f"{greeting} {self.sandbox_id} at {config.api_url}"
        return text.upper() if loud else text

    hail = deprecated_alias(greet, "hail() is deprecated; call greet()")


def test_the_class_form_takes_the_id_first_and_the_connection_settings_apart() -> None:
    assert Thing("a", connection_config=ConnectionConfig(api_url="http://x")).greet("hi") == "hi a at http://x"
    assert Thing.greet("b", loud=True, api_url="http://y") == "HELLO B AT HTTP://Y"
    # The id may be passed by name, as the hand-written class forms allowed.
    assert Thing.greet(sandbox_id="c", greeting="yo", api_url="http://z") == "yo c at http://z"  # type: ignore[call-arg]


def test_the_class_form_resolves_settings_as_a_new_config_would(clean_env: None) -> None:
    # Not the defaults merged with the options: a domain or debug given on the class moves the URL.
    assert Thing.greet("b", domain="example.dev") == "hello b at https://api.example.dev"
    assert Thing.greet("b", debug=True) == "hello b at http://localhost:3000"


def test_both_forms_share_the_one_docstring() -> None:
    assert Thing("a").greet.__doc__ == "Greet this thing."
    assert Thing.greet.__doc__ == "Greet this thing."


@pytest.mark.parametrize("form", ["class", "instance"])
def test_deprecated_alias_warns_at_the_callers_line_and_calls_the_original(form: str, clean_env: None) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = Thing.hail("b", loud=True, api_url="http://y") if form == "class" else Thing("a").hail("hi")
    assert result == ("HELLO B AT HTTP://Y" if form == "class" else "hi a at https://api.e2b.app")
    (warning,) = caught
    assert warning.category is DeprecationWarning
    assert str(warning.message) == "hail() is deprecated; call greet()"
    assert warning.filename == __file__


def test_deprecated_alias_keeps_the_originals_docstring() -> None:
    expected = "Deprecated: hail() is deprecated; call greet().\n\nGreet this thing."
    assert Thing.hail.__doc__ == Thing("a").hail.__doc__ == expected


@pytest.mark.parametrize("cls", [Sandbox, AsyncSandbox])
def test_the_sandbox_methods_have_both_forms_documented(cls: type[Sandbox] | type[AsyncSandbox]) -> None:
    for name in ("connect", "kill", "get_info", "set_timeout", "pause", "beta_pause"):
        assert getattr(cls, name).__doc__, name
        assert getattr(cls("x"), name).__doc__ == getattr(cls, name).__doc__, name
    doc = cls.pause.__doc__ or ""
    assert "force" in doc and 'on_resume="reboot"' in doc and "pinned" in doc
