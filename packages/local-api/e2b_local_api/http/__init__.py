"""HTTP hardening and request plumbing below every API: errors, validation, guards, limits, faults, counts.

No routes here; it stands on the generated `wire/` only.
"""
