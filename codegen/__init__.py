"""The code generation pipeline: `python -m codegen generate | check | bump | rebuild-runtime`.

Data flows one way, top down (`pipeline.py` names the steps): `upstream/` fetches the spec at the
pin; `openapi/` reads, validates and filters it; `contract.py` says what the SDK requires of it;
`generation/` generates, renders the overlays, formats and stamps one in-memory tree; `tree/`
writes it over the repository or compares with it; `api_changes/` says what changed for SDK users;
`commands/` has one module per verb, and `cli.py` the command line. It stands on toolkit/.
Each folder's `__init__.py` lists what other parts may import; no module imports from a part above
it (tests/codegen/test_layers.py).
"""

import time

# When this process began loading codegen.  A source file modified after it may not be the code
# that runs, whenever its module is imported: such a run records nothing (codegen/generation/inputs.py).
LOADED_NS = time.time_ns()
