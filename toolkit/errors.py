"""Problems the pipeline reports, as values, and the one exception that carries them.

How it works, and why: docs/maintainers/design.md, "toolkit/errors.py".
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.printable import printable

EXIT_OK = 0
EXIT_DRIFT = 1
EXIT_CANNOT_RUN = 2
EXIT_HANDWRITTEN = 3


@dataclass(frozen=True)
class Problem:
    """One thing that is wrong, said so that a maintainer knows what to do."""

    message: str
    where: str | None = None  # "spec/openapi.yml:123", a JSON pointer, a path
    remedy: str | None = None
    detail: tuple[str, ...] = ()  # lines shown under the message (a tool's last output lines)

    def render(self) -> str:
        """One line per field, each escaped: what came from data cannot add lines or controls."""
        message, where = printable(self.message), printable(self.where or "")
        lines = [f"{where}: {message}" if where else message]
        lines += [f"    {printable(line)}" for line in self.detail]
        if self.remedy:
            lines.append(f"  -> {printable(self.remedy)}")
        return "\n".join(lines)


class ToolError(Exception):
    """A stage failed; nothing has been written.  Carries one or more problems."""

    def __init__(self, *problems: Problem, exit_code: int = EXIT_CANNOT_RUN) -> None:
        if not problems:
            raise ValueError("ToolError needs at least one problem")
        self.problems = problems
        self.exit_code = exit_code
        super().__init__("\n".join(p.render() for p in problems))
