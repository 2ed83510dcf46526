"""Load generators behind one interface: each measures one cell into its directory and says what its
raw files mean. The runner and the report pick one by a cell's `loadgen` and never by name; a load
generator imports this core, labbench/plugins.py imports it and registers it here.

A load generator module defines a LoadGen with:
  name          the LOADGEN value (probe is chosen by a scenario, never by LOADGEN)
  open_loop     True when it sends at a rate, whatever the server does (no connections, no wrk -t)
  has_ceiling   True when a calibration cell of the same load gives the cell a % of ceiling
  output        the raw file its progress and errors go to, relative to the cell directory
  fields        its own keys of its cells: under its name in results.json ("vegeta": {...}), absent
                from other generators' cells; results.csv has a column for each
  measure(lab, cell, d, url, app)  -> (None or the reason it failed, the `measured` dict)
  figures(record, d)               -> its figures for results.json, from its raw files
  summary(rec)                     -> the figures part of a progress line, or None for the default
  section(run, ctx)                -> results.md text of its own (eg, open vs closed loop), or ""
"""


class LoadGen:
    """The defaults every load generator starts from; each module overrides what differs."""
    name = ""
    selectable = True        # LOADGEN takes it
    open_loop = False
    timed = True             # runs for DURATION (the run's "measured" time)
    profiled = False         # PROFILE=1 profiles the app over its window
    not_profiled = ""        # why not, when it is not: said on the cell's line rather than nothing
    has_ceiling = False
    output = ""
    fields = ()

    def summary(self, rec):
        return None


def jvm_figures(jvm0, jvm1):
    """The app's CPU and its compiler threads' over a window, from /stats' jvm object read before
    and after it (issue 26): the cell's JIT share and load ms/req come from these. {} when either
    read had none."""
    if not (jvm0 and jvm1):
        return {}
    return {"jvm_cpu_ms": jvm1["cpuMs"] - jvm0["cpuMs"], "jvm_compiler_cpu_ms": jvm1["compilerCpuMs"] - jvm0["compilerCpuMs"]}


# The registry, filled by labbench/plugins.py (register).
ALL = []
BY_NAME = {}
SELECTABLE = []         # what LOADGEN takes


def register(gen):
    if gen.name not in BY_NAME:
        ALL.append(gen)
        BY_NAME[gen.name] = gen
        SELECTABLE[:] = [g.name for g in ALL if g.selectable]


def get(name):
    return BY_NAME[name or "wrk"]
