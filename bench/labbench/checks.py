"""How a setting's text is checked: the helpers settings.py and every scenario's parse() share.
A wrong value raises UsageError: main prints ERROR + the usage and exits 2 (nothing has started);
a wrong machine raises Fatal: ERROR, exit 1."""
import re

COUNT = re.compile(r"[1-9][0-9]{0,6}")
DURATION = re.compile(r"[1-9][0-9]{0,5}[smh]?")


class UsageError(Exception):
    """A setting is wrong: main prints ERROR + the usage and exits 2 (nothing has started)."""


class Fatal(Exception):
    """Something in the environment is wrong: main prints ERROR + this, exit 1."""


def is_virtual(threads):
    """THREADS value "vN": virtual threads on N carrier threads (docs/traps.md #11, #16, #17)."""
    return threads.startswith("v")


def seconds_of(duration):
    """Seconds in a wrk-style duration: 10 -> 10, 10s -> 10, 2m -> 120, 1h -> 3600."""
    unit = duration[-1]
    n = int(duration.rstrip("smh"))
    return n * {"m": 60, "h": 3600}.get(unit, 1)


def split_list(text):
    """Lists: "a b", "a,b" and "a, b" all work."""
    return text.replace(",", " ").split()


def counts(name, text):
    """Every value a positive integer, at least one."""
    values = split_list(text)
    if not values:
        raise UsageError(f"{name} is empty")
    for v in values:
        if not COUNT.fullmatch(v):
            raise UsageError(f"{name}: '{v}' is not a positive integer")
    return [int(v) for v in values]


def count(name, text, empty_ok=""):
    if not COUNT.fullmatch(text):
        raise UsageError(f"{name}: '{text}' is not a positive integer{empty_ok}")
    return int(text)


def known(name, text, known_values, what):
    values = split_list(text)
    if not values:
        raise UsageError(f"{name} is empty")
    for v in values:
        if v not in known_values:
            raise UsageError(f"unknown {what} '{v}' in {name} (known: {' '.join(known_values)})")
    return values
