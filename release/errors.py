"""The one exception of the release tools: problems as values, as in toolkit.errors.

Exit statuses: 0 success (also a release with nothing to release), 1 the
check's verdict is "no" (a change without a fragment), 2 bad input or a step
that failed; nothing has been written.
"""

from __future__ import annotations

from toolkit.errors import EXIT_DRIFT, Problem, ToolError

EXIT_MISSING_FRAGMENT = EXIT_DRIFT

__all__ = ["EXIT_MISSING_FRAGMENT", "Problem", "ReleaseError"]


class ReleaseError(ToolError):
    """A release step refused or failed before anything was written."""
