"""envd's API for every sandbox: processes, files, watchers, and the /files, /health, /envs, /metrics endpoints.

It stands on `runtime/`, `state/`, `http/` and `wire/`, never on `control/`.
"""
