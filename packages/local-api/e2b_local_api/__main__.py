"""`python -m e2b_local_api`: the same as the `e2b-local-api` console script."""

from e2b_local_api.launcher import run

run()
