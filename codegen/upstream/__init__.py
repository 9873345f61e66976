"""Where the spec comes from and what vouches for it: the fetch, the lock, the base revision, the history.

Modules other parts of codegen may import (the rest are this folder's own):

- `base_revision`: the lock and [tool.codegen] at the base revision
- `fetch`: the spec at the pinned commit, through a cached bare repository
- `history`: `rebuild-runtime`: the upstream's history rebuilt offline
- `spec_lock`: spec/openapi.lock.json: where the tracked spec came from
"""

__all__ = ["base_revision", "fetch", "history", "spec_lock"]
