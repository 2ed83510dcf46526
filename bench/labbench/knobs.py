"""The bench's settings, once: one Setting per environment variable (its default, what it sets, how
`make compare` names a change of it). The common ones are here; each scenario declares its own
(Scenario.settings) and the registry adds them in its order. --help (settings.usage), the table in
docs/settings.md (tested), the defaults and compare's settings paragraph are all made from it.
"""
import re
import textwrap
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Setting:
    name: str
    default: str
    what: str                      # what it sets, in Markdown (docs/settings.md; --help shows it plain)
    compare: str = ""              # make compare: "list" (narrowed, widened or changed), "value", "quiet"
                                   # (named only when it changed), "" (not compared)
    meta: str = ""                 # compare: meta.txt's key, when it is not the name in lower case
    known: Optional[Callable] = None   # --help: its known values (a list), eg, the apps of the catalog


def setting(name, default, what, compare="", meta="", known=None):
    return Setting(name, default, what, compare, meta, known)


def plain(markdown):
    """A Markdown text for a terminal: `code` without its backticks, [text](link) as its text."""
    return re.sub(r"\[([^]]+)\]\([^)]+\)", r"\1", markdown).replace("`", "")


def markdown(groups):
    """docs/settings.md's tables: one per group, under its heading, a row per setting."""
    out = []
    for heading, rows in groups:
        title, _, more = (heading or "Every run").partition(": ")     # "SCENARIO=fanout: each app timed ..."
        out += [f"### {title}", ""] + ([more[0].upper() + more[1:] + ".", ""] if more else [])
        out += ["| variable | default | what it sets |", "|---|---|---|"]
        out += [f"| `{s.name}` | {f'`{s.default}`' if s.default else '(empty)'} | {s.what} |" for s in rows]
        out.append("")
    return "\n".join(out)


def usage_lines(groups, values, width=100):
    """--help's settings: each variable with its current value, then what it sets, wrapped; a
    heading line before each scenario's own."""
    out = []
    for heading, rows in groups:
        if heading:
            out += textwrap.wrap(plain(heading) + ":", width)
        for s in rows:
            value = values.get(s.name, s.default)
            out.append(f'  {s.name}="{value}"' if " " in value or not value else f"  {s.name}={value}")
            text = plain(s.what) + (f"; known: {' '.join(s.known())}" if s.known else "")
            out += textwrap.wrap(text, width, initial_indent=" " * 8, subsequent_indent=" " * 8)
    return out
