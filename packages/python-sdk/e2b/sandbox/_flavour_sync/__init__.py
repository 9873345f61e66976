"""The sync flavour's hand-written half: what `e2b.sandbox_sync` does its own way.

The twin of `e2b.sandbox._flavour_async`, module by module, with the same names but for the
`Async` prefix: the sync twins codegen derives import this package where their async sources
import that one.
"""
