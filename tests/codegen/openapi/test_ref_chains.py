"""RefChains: where a chain of aliases leads, each reference followed once however many share its chain."""

from __future__ import annotations

from typing import Any

import pytest

import codegen.openapi.ref_chains as ref_chains
from codegen.openapi.ref_chains import Lead, RefChains


def schemas(**nodes: Any) -> dict[str, Any]:
    return {"components": {"schemas": nodes}}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def pointer(name: str) -> str:
    return f"#/components/schemas/{name}"


def test_a_reference_to_a_schema_is_one_hop() -> None:
    chains = RefChains(schemas(A={"type": "string"}))
    assert chains.lead(pointer("A")) == Lead(hops=1, end=pointer("A"))


def test_a_chain_counts_its_hops_to_the_schema_it_ends_at() -> None:
    chains = RefChains(schemas(A=ref("B"), B=ref("C"), C={"type": "object"}))
    assert chains.lead(pointer("A")) == Lead(hops=3, end=pointer("C"))
    assert chains.lead(pointer("B")) == Lead(hops=2, end=pointer("C"))


def test_a_cycle_is_shown_from_where_each_reference_enters_it() -> None:
    chains = RefChains(schemas(Tail=ref("A"), A=ref("B"), B=ref("A")))
    assert chains.lead(pointer("A")).cycle_text() == f"{pointer('A')} -> {pointer('B')} -> {pointer('A')}"
    assert chains.lead(pointer("B")).cycle_text() == f"{pointer('B')} -> {pointer('A')} -> {pointer('B')}"
    # A reference that leads into the cycle enters it at A.
    assert chains.lead(pointer("Tail")).cycle_text() == chains.lead(pointer("A")).cycle_text()
    assert chains.lead(pointer("Tail")).cycle is chains.lead(pointer("B")).cycle  # one tuple for all of them


def test_a_broken_chain_is_said_once_and_not_followed_again() -> None:
    chains = RefChains(schemas(A=ref("B"), B=ref("Nowhere")))
    assert chains.lead(pointer("A")).broken and chains.lead(pointer("B")).broken
    assert chains.lead("#/nope").broken and chains.lead("https://elsewhere/x").broken


def test_a_long_cycle_is_shown_by_its_ends() -> None:
    names = [f"S{i}" for i in range(1_000)]
    chains = RefChains(schemas(**{name: ref(after) for name, after in zip(names, names[1:] + names[:1], strict=True)}))
    text = chains.lead(pointer("S0")).cycle_text()
    assert text.startswith(f"{pointer('S0')} -> {pointer('S1')} -> {pointer('S2')} -> ... -> {pointer('S999')}")
    assert text.endswith(f"{pointer('S0')} (1,000 references)")


def test_every_reference_is_followed_once_however_long_the_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 aliases in a row: leads for all of them cost 3,000 steps, not 3,000 walks of 3,000."""
    length = 3_000
    data = schemas(**{f"S{i}": ref(f"S{i + 1}") for i in range(length)}, **{f"S{length}": {"type": "string"}})
    steps: list[str] = []
    real = RefChains._alias_target

    def counted(self: RefChains, reference: str) -> str | None:
        steps.append(reference)
        return real(self, reference)

    monkeypatch.setattr(RefChains, "_alias_target", counted)
    chains = RefChains(data)
    leads = [chains.lead(pointer(f"S{i}")) for i in range(length + 1)]
    assert len(steps) == length + 1
    assert leads[0] == Lead(hops=length + 1, end=pointer(f"S{length}"))
    assert leads[0].hops > ref_chains.MAX_HOPS
