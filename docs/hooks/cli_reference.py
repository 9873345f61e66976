"""An mkdocs hook: a click command's reference, shaped as its `--help` reads.

A page line `::: click-reference` followed by `:module:`, `:command:` and `:prog_name:` lines
becomes every command's usage, help, options, epilog and subcommands. Help texts follow click's
paragraphs: a `\\b` paragraph keeps its lines (a code block, its "Title:" line above it), any
other is prose. mkdocs-click, used before, dropped the `\\b` marks (examples ran together into one
paragraph) and every epilog (the exit statuses).
"""

from __future__ import annotations

import importlib
import inspect
import re
import textwrap
from collections.abc import Iterator
from typing import Any

import click

DIRECTIVE = re.compile(r"^::: click-reference\n((?:    :\w+: \S+\n?)+)", flags=re.M)
SETTING = re.compile(r"^    :(\w+): (\S+)$", flags=re.M)
NO_REWRAP = "\b"  # click's mark: the paragraph it starts keeps its lines as written


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each `::: click-reference` block of a page with the commands' Markdown."""
    return DIRECTIVE.sub(lambda found: "\n".join(_reference(dict(SETTING.findall(found.group(1))))) + "\n", markdown)


def _reference(settings: dict[str, str]) -> Iterator[str]:
    missing = {"module", "command", "prog_name"} - settings.keys()
    if missing:
        raise ValueError(f"::: click-reference needs {', '.join(sorted(missing))}")
    command = getattr(importlib.import_module(settings["module"]), settings["command"])
    if not isinstance(command, click.Command):
        raise ValueError(f"::: click-reference: {settings['module']}.{settings['command']} is not a click command")
    yield from command_docs(command, settings["prog_name"], depth=2)


def command_docs(command: click.Command, name: str, depth: int, parent: click.Context | None = None) -> Iterator[str]:
    """One command's section (a heading of `depth`), then its subcommands' one level deeper."""
    # A context as click builds one for `--help`, without parsing anything (no callback runs).
    ctx = command.context_class(command, info_name=name, parent=parent, **command.context_settings)
    # The anchor is the command path (#e2b-sandbox-list), the contents' label the name alone.
    anchor = re.sub(r"[^a-z0-9]+", "-", ctx.command_path.lower()).strip("-")
    yield f"{'#' * depth} {ctx.command_path} {{ #{anchor} data-toc-label='{name}' }}"
    yield ""
    # In `--help`'s order: usage, help, options, epilog.
    formatter = ctx.make_formatter()
    formatter.write_usage(ctx.command_path, " ".join(command.collect_usage_pieces(ctx)), prefix="")
    yield from _block("**Usage:**", formatter.getvalue().strip())
    yield from help_markdown(command.help or "")
    formatter = ctx.make_formatter()
    click.Command.format_options(command, ctx, formatter)  # the options alone, not a group's commands
    options = formatter.getvalue().splitlines()[1:]  # below its "Options:" line
    if options:
        yield from _block("**Options:**", "\n".join(options))
    yield from help_markdown(command.epilog or "")
    group = command.commands if isinstance(command, click.Group) else {}
    subcommands = [group[name] for name in sorted(group) if not group[name].hidden]
    if subcommands:
        yield "**Subcommands:**"
        yield ""
        for sub in subcommands:
            path = f"{anchor}-{sub.name}"
            yield f"- [{sub.name}](#{path}): {sub.get_short_help_str(limit=200)}"
        yield ""
    for sub in subcommands:
        yield from command_docs(sub, sub.name or "", depth + 1, parent=ctx)


def help_markdown(text: str) -> Iterator[str]:
    """Help text as click shows it: prose paragraphs, and each `\\b` paragraph's lines kept."""
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        lines = paragraph.splitlines()
        if not lines:
            continue
        if lines[0].strip() != NO_REWRAP:
            yield from (line.strip() for line in lines)
            yield ""
            continue
        lines = lines[1:]
        body = lines[1:]
        if len(lines) == 1:
            yield lines[0]
            yield ""
        elif lines[0].endswith(":") and all(line[:1].isspace() for line in body if line.strip()):
            # "Examples:" and the commands indented below it: a heading line and a code block.
            yield from _block(f"**{lines[0]}**", textwrap.dedent("\n".join(body)))
        else:
            yield from _block("", "\n".join(lines))


def _block(title: str, text: str) -> Iterator[str]:
    """`title` as a paragraph, then `text` in a fenced block longer than any backtick run in it."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    if title:
        yield title
        yield ""
    yield f"{fence}text"
    yield text
    yield fence
    yield ""
