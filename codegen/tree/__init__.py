"""The generated files on disk: what a run produced, written over the tree or compared with it.

Modules other parts of codegen may import (the rest are this folder's own):

- `file_lock`: exclusive locks that say who holds them
- `staged`: what a run produced, as the tree will hold it
- `write`: the last step: write the staged output over the tree, or compare with it
"""

__all__ = ["file_lock", "staged", "write"]
