"""The generate, overlays, format and stamp steps: the code generators, the jinja overlays, the no-change cache.

Modules other parts of codegen may import (`overlays` and `python_source`, the jinja side, are internal):

- `cache`: the no-change check's records and the validator's verdicts
- `generators`: openapi-python-client and datamodel-code-generator, hermetic, side by side
- `inputs`: every input a run reads, read once
- `protoc`: envd's protos through protoc and its plugins, into the SDK's and the server's envd folders
- `stage`: everything generated, as one in-memory tree
"""

__all__ = ["cache", "generators", "inputs", "protoc", "stage"]
