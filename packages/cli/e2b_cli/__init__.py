"""The `e2b` command: create, list, inspect, pause, resume and kill E2B sandboxes; their timeout, metrics, snapshots.

`e2b_cli.launcher:run` is the console script; `e2b_cli.main.main` runs the
command and returns its exit status; `e2b_cli.main.cli` is the click group
(what tests invoke). Exit statuses are in `e2b_cli.errors.ExitStatus`.
"""

__version__ = "3.0.0"
