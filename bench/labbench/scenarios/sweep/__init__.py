"""The sweep (`make sweep`, `./bench.sh sweep`, or any run with SWEEP set): how far each model
scales. A planner of call cells: each variant (app[@container]:threads) runs at every level of SWEEP
as wrk -c, on one JVM per variant reused upward through the levels and warmed up again at each,
with a calibration cell per level. It
owns its settings, its plan, the machine-limit fallback of its default, the knee per variant, the
memory per 1,000 in flight, its report section and its charts."""
import dataclasses

from ... import catalog, db, settings
from ...checks import UsageError, counts
from ...knobs import setting
from ...report import charts
from ...variants import parse_variants
from .. import Scenario
from . import report
from .report import CHARTS

# Settings the sweep sets itself: it runs CONNECTIONS over SWEEP for each variant, the call scenario, wrk only.
NOT_IN_SWEEP = {"APPS": "SWEEP_VARIANTS", "CONTAINERS": "SWEEP_CONTAINER or app@container in SWEEP_VARIANTS",
                "THREADS": "SWEEP_VARIANTS", "CONNECTIONS": "SWEEP", "SCENARIO": "", "LOADGEN": "", "REPEAT": ""}
# --threads takes at most this many (LabConfig.MAX_THREADS): the "conns" variant's largest level.
MAX_APP_THREADS = 10000
def sweep_environ(environ, n_cores):
    """The sweep's own matrix as the ordinary settings: CONNECTIONS = SWEEP, wrk -t = cores unless
    set; a setting the sweep replaces must not be set (it would be silently ignored)."""
    for name, instead in NOT_IN_SWEEP.items():
        value = environ.get(name)
        if value and value != {"SCENARIO": "call", "LOADGEN": "wrk", "REPEAT": "1"}.get(name):
            what = f"set {instead} instead" if instead else f"the sweep runs {settings.CORE_DEFAULTS[name].split()[0]} only"
            raise UsageError(f"{name}={value}: the sweep sets {name} itself ({what})")
    v = settings.raw_values(environ)
    if v["SWEEP_CONTAINER"] not in ("jetty", "tomcat"):
        raise UsageError(f"SWEEP_CONTAINER: '{v['SWEEP_CONTAINER']}' is not jetty or tomcat "
                         f"(netty runs {' '.join(catalog.apps_on('netty'))} only: app@netty:N in SWEEP_VARIANTS)")
    levels = counts("SWEEP", v["SWEEP"])
    if len(set(levels)) != len(levels):
        raise UsageError(f"SWEEP: a level is there twice ({v['SWEEP']})")
    variants = parse_variants(v["SWEEP_VARIANTS"], v["SWEEP_CONTAINER"])
    if any(x.threads == "conns" for x in variants) and max(levels) > MAX_APP_THREADS:
        raise UsageError(f"SWEEP: {max(levels)} connections: a 'conns' variant would need --threads {max(levels)}, "
                         f"more than the apps take (1..{MAX_APP_THREADS})")
    env = dict(environ, CONNECTIONS=" ".join(map(str, sorted(levels))),
               WRK_THREADS=environ.get("WRK_THREADS") or str(n_cores),
               APPS=" ".join(dict.fromkeys(x.app for x in variants)),
               CONTAINERS=" ".join(dict.fromkeys(x.container for x in variants)),
               THREADS=" ".join(dict.fromkeys(x.threads for x in variants if x.threads != "conns")) or "1")
    return env, variants


def draw_charts(run_dir):
    charts.draw("charts.py", run_dir, "charts")


class Sweep(Scenario):
    name = "sweep"
    selectable = False          # chosen by `./bench.sh sweep` or SWEEP, not by SCENARIO
    settings = (
        setting("SWEEP", "100 500 1000 2000 5000 10000", "the sweep's connection levels; each must fit this machine's "
                "limits (file descriptors: ~2 per connection in the app; ephemeral ports)", "list"),
        setting("SWEEP_VARIANTS", catalog.default_variants("sweep"),
                "the sweep's variants, `app[@container]:threads[:client]` (threads `N`, `vN` or `conns`: a pool as large "
                "as the level; client `jdk` by default)", "list"),
        setting("SWEEP_CONTAINER", "jetty", "the container of every sweep variant without `@container` (`jetty` or "
                "`tomcat`)"),
    )
    heading = ("The sweep (`make sweep`, `./bench.sh sweep`, or any run with SWEEP set): how far each model scales. Each "
               "variant runs at every level of SWEEP as wrk -c (one app reused upward, warmed up at each level), with a "
               "calibration cell per level; wrk -t = this machine's cores unless WRK_THREADS is set. It replaces APPS, "
               "CONTAINERS, THREADS, CONNECTIONS (and needs SCENARIO=call, LOADGEN=wrk, REPEAT=1)")

    def selected(self, argv, environ):
        return argv == [self.name] or bool(environ.get("SWEEP"))

    def environ(self, environ, n_cores):
        return sweep_environ(environ, n_cores)

    def with_drivers(self, s):
        """BACKEND=postgres: each variant once per DB driver its app has (through DB_DRIVER). A
        variant of another HTTP client has no meaning without an HTTP call: the default's are
        dropped, one you named is an error. Apps without a driver (none) are an error too."""
        out = []
        for v in s.variants:
            if v.client != catalog.DEFAULT_CLIENT:
                if s.raw.get("SWEEP_VARIANTS") != self.defaults["SWEEP_VARIANTS"]:
                    raise UsageError(f"SWEEP_VARIANTS: '{v.id}': with BACKEND=postgres there is no outbound HTTP "
                                     f"client to pick")
                continue
            drivers = db.drivers_of(s, v.app)
            if not drivers:
                raise UsageError(f"SWEEP_VARIANTS: '{v.id}': no DB driver left for {v.app} "
                                 f"(it has: {', '.join(catalog.APPS[v.app].dbs) or 'none'})")
            out += [dataclasses.replace(v, db_driver=d) for d in drivers]
        return out

    def plan(self, s, make):
        """For each variant, each SWEEP level (s.connections) with each wrk -t, in that order; the
        variants' combinations were checked when SWEEP_VARIANTS was parsed."""
        return [make(v.app, v.container, v.threads_at(conns), wt, conns, v.id, v.client, db_driver=v.db_driver)
                for v in s.variants for conns in s.connections for wt in s.wrk_threads]

    def fit_limits(self, environ, s, error, held):
        """The default sweep asks for 10,000 connections; where this machine's file limit cannot hold
        them (eg, a container's hard ulimit -n of 20,000 that root may not raise), it runs the largest
        level the limit holds instead and says so. A SWEEP you set fails: (levels, note) or None."""
        if environ.get("SWEEP") or held < 1000:
            return None
        return (sorted({min(level, held) for level in s.connections}),
                f"SWEEP level {max(s.connections)} runs as {held}: {error}")

    def meta_values(self, s):
        return {"mode": self.name, "sweep": " ".join(map(str, s.connections)),
                "sweep_variants": " ".join(v.id for v in s.variants), "sweep_container": s.raw["SWEEP_CONTAINER"],
                **{f"variant_label.{v.id}": v.label for v in s.variants}}

    def meta(self, meta):
        if meta.get("mode") == self.name:
            meta["sweep"] = [int(v) for v in meta.get("sweep", "").split()]
            meta["sweep_variants"] = meta.get("sweep_variants", "").split()
        labels = {k[len("variant_label."):]: meta.pop(k) for k in list(meta) if k.startswith("variant_label.")}
        if labels:
            meta["variant_labels"] = labels

    def verdict(self, run):
        """The sweep's answer first: each variant's % of the ceiling per level, and its knee."""
        return report.verdict(run)

    def environment_rows(self, meta):
        labels = meta.get("variant_labels") or {}
        return [("sweep levels (wrk -c)", " ".join(map(str, meta.get("sweep") or []))),
                ("sweep variants", "; ".join(f"`{v}` ({labels.get(v, v)})" for v in meta.get("sweep_variants") or [])),
                ("sweep container (variants without @container)", meta.get("sweep_container", "?"))]

    def sections(self, run, ctx):
        return [(10, report.sweep_section(run, ctx.charts))]

    def charts(self, run_dir, run, draw=False):
        if draw and any(c["status"] == "ok" for c in run["cells"]):
            draw_charts(run_dir)
        return [(n, title) for n, title in CHARTS if (run_dir / "charts" / f"{n}.png").exists()]

    def closing_lines(self, run):
        return ["== knee per variant (the first level below 95 % of its ceiling, or with errors):"] + [
            f"   {line}" for line in report.knee_lines(run)]

    def starting_lines(self, s):
        return ([f"== sweep: {len(s.variants)} variants x {len(s.connections)} levels "
                 f"({' '.join(map(str, s.connections))} connections), wrk -t{' -t'.join(map(str, s.wrk_threads))}; "
                 f"one app per variant, reused from level to level and warmed up at each"]
                + [f"   {v.id:28s} {v.label}" for v in s.variants])


SCENARIO = Sweep()
