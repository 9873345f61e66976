"""The control-plane API: the spec's public routes, their bodies and views, API-key auth, `/_local/`.

It stands on `state/`, `http/` and `wire/`, never on `dataplane/`.
"""
