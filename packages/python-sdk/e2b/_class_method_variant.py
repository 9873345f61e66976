"""A method that is also callable on the class, with the sandbox id first.

`sbx.pause(force=True)` and `Sandbox.pause(sandbox_id, force=True)`: one name, two signatures that
mypy checks both. `sandbox_method` derives the class form from the instance form, `dual` pairs two
functions written apart, `deprecated_alias` gives a method a second, deprecated name.

How it works, and why: docs/maintainers/packages.md, "packages/python-sdk/e2b/_class_method_variant.py".
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from e2b._config import ApiParams, ConnectionConfig

__all__ = ["deprecated_alias", "dual", "sandbox_method"]

S = TypeVar("S")
IP = ParamSpec("IP")
IR = TypeVar("IR")
CP = ParamSpec("CP")
CR = TypeVar("CR")

_CONNECTION_SETTINGS = frozenset(ApiParams.__annotations__)


def _class_signature(on_instance: Callable[..., Any]) -> inspect.Signature:
    """What help() and inspect show for a class form: the instance form's parameters, the sandbox id for `self`."""
    signature = inspect.signature(on_instance)
    sandbox_id = inspect.Parameter("sandbox_id", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="str")
    return signature.replace(parameters=[sandbox_id, *list(signature.parameters.values())[1:]])


class _Dual(Generic[S, IP, IR, CP, CR]):
    def __init__(self, on_instance: Callable[Concatenate[S, IP], IR], on_class: Callable[CP, CR] | None) -> None:
        self._on_instance = on_instance
        # In a class body the class form is still a staticmethod object.
        self._on_class: Callable[CP, CR] | None = getattr(on_class, "__func__", on_class)
        self.__doc__ = on_instance.__doc__

    def __set_name__(self, owner: type[S], name: str) -> None:
        if self._on_class is not None:
            return
        on_instance = self._on_instance

        def on_class(sandbox_id: str, *args: Any, **kwargs: Any) -> IR:
            opts = {key: kwargs.pop(key) for key in list(kwargs) if key in _CONNECTION_SETTINGS}
            instance = cast(Any, owner)(sandbox_id, connection_config=ConnectionConfig(**opts))
            return on_instance(instance, *args, **kwargs)

        on_class.__doc__ = on_instance.__doc__
        on_class.__signature__ = _class_signature(on_instance)  # type: ignore[attr-defined]
        self._on_class = cast(Callable[CP, CR], on_class)

    def call_on_class(self, *args: CP.args, **kwargs: CP.kwargs) -> CR:
        assert self._on_class is not None, "used before its class was created"
        return self._on_class(*args, **kwargs)

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> Callable[CP, CR]: ...

    @overload
    def __get__(self, obj: S, owner: type[Any] | None = None) -> Callable[IP, IR]: ...

    def __get__(self, obj: S | None, owner: type[Any] | None = None) -> Callable[CP, CR] | Callable[IP, IR]:
        if obj is None:
            assert self._on_class is not None, "used before its class was created"
            return self._on_class
        bound: Callable[IP, IR] = functools.partial(self._on_instance, obj)
        return functools.update_wrapper(bound, self._on_instance)


def sandbox_method(on_instance: Callable[Concatenate[S, IP], IR]) -> _Dual[S, IP, IR, Concatenate[str, IP], IR]:
    """Decorate the instance form; the class form takes the sandbox id first."""
    return _Dual(on_instance, None)


def dual(on_instance: Callable[Concatenate[S, IP], IR], on_class: Callable[CP, CR]) -> _Dual[S, IP, IR, CP, CR]:
    """One name for two functions written apart: when the class form is not "the id first"."""
    return _Dual(on_instance, on_class)


def deprecated_alias(target: _Dual[S, IP, IR, CP, CR], message: str) -> _Dual[S, IP, IR, CP, CR]:
    """`target`, both forms, under another name that warns `message` at each call."""

    def on_instance(self: S, /, *args: IP.args, **kwargs: IP.kwargs) -> IR:
        # stacklevel 2: the caller's line (the bound form is a partial, which adds no frame).
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return target._on_instance(self, *args, **kwargs)

    def on_class(*args: CP.args, **kwargs: CP.kwargs) -> CR:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return target.call_on_class(*args, **kwargs)

    on_instance.__doc__ = on_class.__doc__ = f"Deprecated: {message}.\n\n{target.__doc__ or ''}"
    on_instance.__signature__ = inspect.signature(target._on_instance)  # type: ignore[attr-defined]
    on_class.__signature__ = _class_signature(target._on_instance)  # type: ignore[attr-defined]
    return _Dual(on_instance, on_class)
