"""`python -m e2b_cli`: the same as the `e2b` console script."""

from e2b_cli.launcher import run

run()
