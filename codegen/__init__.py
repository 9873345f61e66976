"""The code generation pipeline: `python -m codegen generate | check | bump | rebuild-runtime`.

Read it top down; data flows one way (`pipeline.py` names the steps):

    upstream/     source -> fetch at the pin (the lock, the base revision vouch)
    openapi/      spec bytes -> validated document -> filtered to the SDK
    contract.py   what the SDK requires of the spec (spec/contract.yml)
    generation/   generators, overlays, format, stamp -> one in-memory tree
    tree/         write it over the tree all or nothing, or compare with it
    api_changes/  what changed for SDK users (bump's report)
    commands/     one module per verb: the pipeline with its own last step
    cli.py        the command line; config.py, messages.py: settings, and how a run speaks

It stands on toolkit/ (problems, paths, the journaled write, the cache folder). Each folder's
`__init__.py` lists the modules other parts may import; no module imports from a part above it
(tests/codegen/test_layers.py).
"""

import time

# When this process began loading codegen.  A source file modified after it may not be the code
# that runs, whenever its module is imported: such a run records nothing (codegen/generation/inputs.py).
LOADED_NS = time.time_ns()
