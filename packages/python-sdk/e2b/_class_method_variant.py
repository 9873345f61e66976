"""A method that is also callable on the class, with the sandbox id first.

`sbx.pause(force=True)` and `Sandbox.pause(sandbox_id, force=True)` are one
name with two signatures. A plain descriptor would erase both for type
checkers; this one is generic over both functions, and its overloaded
`__get__` gives each access the signature it has, so mypy checks both forms.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["class_method_variant"]

S = TypeVar("S")
IP = ParamSpec("IP")
IR = TypeVar("IR")
CP = ParamSpec("CP")
CR = TypeVar("CR")


class _Dual(Generic[S, IP, IR, CP, CR]):
    def __init__(self, on_instance: Callable[Concatenate[S, IP], IR], on_class: Callable[CP, CR]) -> None:
        self._on_instance = on_instance
        # In a class body the class form is still a staticmethod object.
        self._on_class: Callable[CP, CR] = getattr(on_class, "__func__", on_class)
        self.__doc__ = on_instance.__doc__

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> Callable[CP, CR]: ...

    @overload
    def __get__(self, obj: S, owner: type[Any] | None = None) -> Callable[IP, IR]: ...

    def __get__(self, obj: S | None, owner: type[Any] | None = None) -> Callable[CP, CR] | Callable[IP, IR]:
        if obj is None:
            return self._on_class
        bound: Callable[IP, IR] = functools.partial(self._on_instance, obj)
        return functools.update_wrapper(bound, self._on_instance)


def class_method_variant(
    on_class: Callable[CP, CR],
) -> Callable[[Callable[Concatenate[S, IP], IR]], _Dual[S, IP, IR, CP, CR]]:
    """Decorate the instance form; `on_class` is what the class attribute calls."""

    def decorate(on_instance: Callable[Concatenate[S, IP], IR]) -> _Dual[S, IP, IR, CP, CR]:
        return _Dual(on_instance, on_class)

    return decorate
