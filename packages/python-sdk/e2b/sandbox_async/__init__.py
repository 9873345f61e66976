"""The sandbox classes, one flavour of them: the async modules are hand-written, the sync ones derived.

codegen writes each module of the sync package from the async module of the same name, by a table of
substitutions (codegen/generation/unasync.py; docs/maintainers/codegen.md, "Twins"): edit the async
modules, then run `nox -s codegen`.
"""
