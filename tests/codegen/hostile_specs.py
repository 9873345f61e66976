"""Small hostile specs that used to hang codegen for minutes (issue 31, point 7), built from the project's spec.

Each is this repository's spec with components added, built in code from a
fixed seed so that every run tests the same bytes.
"""

from __future__ import annotations

import itertools
import random

SCHEMAS = "  schemas:\n"
NEW_SANDBOX = "    NewSandbox:\n      type: object\n      required:\n        - templateID\n      properties:\n"


def _with_schemas(spec: str, block: str) -> str:
    assert spec.count(SCHEMAS) == 1
    return spec.replace(SCHEMAS, SCHEMAS + block)


def _name(rng: random.Random, index: int) -> str:
    return "".join(rng.choice("abcdefghijklmnop") for _ in range(6)) + str(index)


def ref_chain(spec: str, length: int = 3_000, seed: int = 31) -> str:
    """`length` schemas, each only a `$ref` to the next (about 180 KB), the last a string."""
    rng = random.Random(seed)
    names = [f"Chain{_name(rng, i)}" for i in range(length + 1)]
    block = "".join(
        f"    {name}:\n      $ref: '#/components/schemas/{after}'\n" for name, after in itertools.pairwise(names)
    )
    return _with_schemas(spec, block + f"    {names[-1]}:\n      type: string\n")


def object_graph(spec: str, depth: int = 16, width: int = 3, seed: int = 31) -> str:
    """`depth` levels of objects whose `width` properties are arrays of the next level, used by createSandbox.

    About 2 KB per level of width 3; `width ** depth` places below the request body.  The deepest
    level comes first, so that openapi-python-client's models (which it builds in order) are
    linked all the way down, as in the hang the issue reports.
    """
    rng = random.Random(seed)
    levels = [f"Level{_name(rng, i)}" for i in range(depth)]
    block = []
    for index in reversed(range(depth)):
        block.append(f"    {levels[index]}:\n      type: object\n      properties:\n")
        for k in range(width):
            if index + 1 == depth:
                block.append(f"        {_name(rng, k)}:\n          type: string\n")
            else:
                items = f"#/components/schemas/{levels[index + 1]}"
                block.append(
                    f"        {_name(rng, k)}:\n          type: array\n          items:\n            $ref: '{items}'\n"
                )
    text = _with_schemas(spec, "".join(block))
    assert text.count(NEW_SANDBOX) == 1
    return text.replace(
        NEW_SANDBOX, NEW_SANDBOX + f"        graph:\n          $ref: '#/components/schemas/{levels[0]}'\n"
    )


def many_schemas(spec: str, count: int = 20_000, seed: int = 31) -> str:
    """`count` small schemas (about 650 KB for 20,000: far under the 5 MiB cap)."""
    rng = random.Random(seed)
    block = "".join(f"    S{_name(rng, i)}:\n      type: string\n" for i in range(count))
    return _with_schemas(spec, block)


def big_integer(spec: str, digits: int = 5_000) -> tuple[str, int]:
    """NewSandbox gains an integer property whose default has `digits` digits; the text, and that line."""
    assert spec.count(NEW_SANDBOX) == 1
    default = "7" * digits
    text = spec.replace(
        NEW_SANDBOX, NEW_SANDBOX + f"        big:\n          type: integer\n          default: {default}\n"
    )
    return text, text[: text.index(default)].count("\n") + 1


def big_enum(spec: str, values: int = 200_000) -> tuple[str, int]:
    """A string schema with a `values`-value enum (about 3 MB), a property of NewSandbox; the text, and a line.

    The line is that of value number MAX_SEQUENCE_ITEMS + 1, where the reader stops.
    """
    from codegen.openapi.plain_yaml import MAX_SEQUENCE_ITEMS

    assert spec.count(NEW_SANDBOX) == 1
    # The items at their key's indentation, as YAML allows: the fewest bytes per value.
    block = "    Flavour:\n      type: string\n      enum:\n" + "".join(f"      - f{i:06d}\n" for i in range(values))
    text = _with_schemas(spec, block).replace(
        NEW_SANDBOX, NEW_SANDBOX + "        flavour:\n          $ref: '#/components/schemas/Flavour'\n"
    )
    first = text.index("      - f000000\n")
    return text, text[:first].count("\n") + 1 + MAX_SEQUENCE_ITEMS
