"""The data plane's lane: envd's files synced at the pin, and what must hold before anything is generated from them.

Modules other parts of codegen may import (the rest are this folder's own):

- `synced`: the envd files at the pin, their lock (spec/envd.lock.json), missing and extra files
- `protos`: the protos parsed by the pinned protoc, behind bounds and an import fence
- `contract`: the data-plane entries of spec/contract.yml (services, RPCs, envd.yaml operations)
- `lane`: the lane's step in the pipeline: protos, envd.yaml and contract, all before generating

bump's report on the envd files is codegen/api_changes/envd_files.py's.
"""

__all__ = ["contract", "lane", "protos", "synced"]
