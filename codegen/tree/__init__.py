"""The files on disk: reading without following symlinks, writing all or nothing, locks, the cache folder.

Modules other parts of codegen may import (the rest are this folder's own):

- `cache_folder`: where codegen keeps its caches (never inside the project)
- `file_lock`: exclusive locks that say who holds them
- `read`: a file's bytes, never through a symlink
- `staged`: what a run produced, as the tree will hold it
- `transaction`: many files swapped into place as one journaled change
- `write`: the last step: write the staged output over the tree, or compare with it
"""

__all__ = ["cache_folder", "file_lock", "read", "staged", "transaction", "write"]
