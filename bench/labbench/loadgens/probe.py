"""One request at a time: what the write-ups timed (a scenario asks for it; LOADGEN never does).
The scenario gives the requests (Scenario.probes); each is timed by the client's wall clock, and
the app's own answer (ok=, wall_ms=) is kept. A fire-and-forget app answers before its work is done
(its answer says pending=): once the work can have ended, one more request fetches its "previous:"
line, which says when it did."""
import json
import time

from .. import web
from . import LoadGen
from ..report.fmt import f_lat, num, read_json


def measure(lab, cell, d, probes, app):
    """probes: [{"n", "ms", "path", "limit_s", "settle_s", "followup"}] from the scenario. Writes
    probe.json and stats.json; None, or why not."""
    results = []
    for p in probes:
        url = lab.url(lab.s.app_port, p["path"])
        print(f"  $ GET {url}")
        t0 = time.monotonic()
        try:
            code, body = web.http(url, timeout=p["limit_s"])
        except OSError as e:
            results.append({"n": p["n"], "error": f"no answer within {p['limit_s']:.0f} s: {getattr(e, 'reason', e)}"})
            continue
        row = {"n": p["n"], "ms": p["ms"], "status": code, "client_ms": round((time.monotonic() - t0) * 1000, 1),
               "answer": body.decode(errors="replace").strip()}
        if "pending=" in row["answer"]:
            time.sleep(p["settle_s"])
            _, later = web.http(lab.url(lab.s.app_port, p["followup"]), timeout=10)
            row["previous"] = next((line[len("previous: "):] for line in later.decode(errors="replace").splitlines()
                                    if line.startswith("previous: ")), None)
        results.append(row)
    (d / "probe.json").write_text(json.dumps(results, indent=1) + "\n")
    stats = web.get_json(app.admin + "/stats")
    if stats is not None:
        (d / "stats.json").write_text(json.dumps(stats))
    bad = [r for r in results if r.get("status") != 200]
    return f"{len(bad)} of {len(results)} probes failed: {bad[0].get('error') or bad[0].get('answer')}" if bad else None


def probe_text(p):
    """One timed request: the client's wall time, and what the app said."""
    if p.get("status") != 200:
        return p.get("error") or f"HTTP {p.get('status')}"
    fields = dict(kv.split("=", 1) for kv in p["answer"].split() if "=" in kv)
    text = f_lat(p["client_ms"])
    if p.get("previous"):       # fire-and-forget: answered at once, the work ended later
        done = dict(kv.split("=", 1) for kv in p["previous"].split() if "=" in kv)
        return (f"answered in {text}; its {p['n']} call{'s' if p['n'] != 1 else ''} ended after "
                f"{f_lat(num(done.get('finished_ms')))}")
    if fields.get("failed", "0") != "0":
        text += f" ({fields['failed']} of {p['n']} calls failed)"
    return text


class Probe(LoadGen):
    name = "probe"
    selectable = False
    timed = False
    not_profiled = "one request at a time, a few seconds in all: too few samples to say where its CPU went"
    output = "vegeta.txt"     # kept as the runs before cell.json named it (there is no such file)

    def measure(self, lab, cell, d, url, app):
        return measure(lab, cell, d, cell.scene.probes(lab.s), app), {}

    def figures(self, record, d):
        return {"probes": read_json(d / "probe.json") or []}

    def summary(self, rec):
        return "one request at a time: " + ", ".join(f"N={p['n']} {probe_text(p)}" for p in rec.get("probes") or [])


LOADGEN = Probe()
