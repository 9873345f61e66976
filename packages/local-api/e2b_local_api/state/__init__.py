"""What the server remembers: sandboxes, their settings and lifecycle, snapshots, templates, listings.

It stands on `http/` (errors, validation) and `wire/`; no routes here.
"""
