"""Versions: X.Y.Z only, the next one for a semver level, and the compatible range.

The pre-1.0 rule (as Cargo's): while a package is 0.y.z the minor number is
its major, so a breaking change gives 0.(y+1).0 and a feature or a fix gives
0.y.(z+1).  Leaving 0.x is a decision, not a fragment: edit the version to
1.0.0 by hand in its own pull request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from release.errors import Problem, ReleaseError
from toolkit.changelog import Level

_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str, *, where: str | None = None) -> Version:
        match = _VERSION.fullmatch(text)
        if not match:
            raise ReleaseError(
                Problem(
                    f"version {text!r} is not MAJOR.MINOR.PATCH",
                    where=where,
                    remedy="the release tools only handle plain X.Y.Z versions; write one",
                )
            )
        return cls(*(int(part) for part in match.groups()))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def bump(self, level: Level) -> Version:
        if self.major == 0:  # the pre-1.0 rule
            if level == "major":
                return Version(0, self.minor + 1, 0)
            return Version(0, self.minor, self.patch + 1)
        if level == "major":
            return Version(self.major + 1, 0, 0)
        if level == "minor":
            return Version(self.major, self.minor + 1, 0)
        return Version(self.major, self.minor, self.patch + 1)

    @property
    def series(self) -> tuple[int, ...]:
        """What must stay equal for two versions to be compatible: the major (the minor before 1.0)."""
        return (self.major,) if self.major else (0, self.minor)

    @property
    def next_series(self) -> str:
        """The first incompatible version, as an upper bound: '3' for 2.x, '0.3' for 0.2.x."""
        return str(self.major + 1) if self.major else f"0.{self.minor + 1}"
