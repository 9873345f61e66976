"""Codegen's cache folder: where it is (`E2B_CODEGEN_CACHE`, else the user cache dir), never inside the project.

It holds the cached bare repositories (codegen/upstream/fetch.py), the generation
records and the validator's verdicts (codegen/generation/cache.py) and the
generators' private scratch folders (codegen/generation/generators.py).  Inside the
project, a commit could fill it: a committed entry would then decide a local
check, so such a folder is refused.  This module imports nothing heavy: the
generate verb finds the folder before the pipeline's imports.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir

from codegen.config import Project
from codegen.errors import CodegenError, Problem
from codegen.printable import printable

CACHE_ENV = "E2B_CODEGEN_CACHE"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or user_cache_dir("e2b-codegen"))


def cache_root(project: Project) -> Path:
    """The cache folder, resolved; refused (exit 2) when it is the project or inside it."""
    folder = cache_dir().resolve()
    if os.pathsep in str(folder):
        # The generators' PATH starts with a folder in there: a separator would split it in two.
        raise CodegenError(
            Problem(
                f"the codegen cache {printable(str(folder))} has {os.pathsep!r} in its path, which the "
                f"generators' PATH cannot hold: point {CACHE_ENV} at a folder without it"
            )
        )
    if folder.is_relative_to(project.root.resolve()):
        raise CodegenError(
            Problem(
                f"the codegen cache {folder} is inside the project, where a commit could fill it: "
                f"point {CACHE_ENV} at a folder outside the repository, or unset it"
            )
        )
    return folder
