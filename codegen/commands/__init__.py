"""One module per verb of `python -m codegen`: each runs the pipeline and ends in its own last step.

Modules other parts of codegen may import (`handwritten`, bump's check of this repository's code, is internal):

- `generate`: `generate`: write the result over the tree, all or nothing
- `check`: `check`: compare with the tree, write nothing
- `bump`: `bump <ref>`: move the pin, regenerate, report the API change
"""

__all__ = ["bump", "check", "generate"]
