"""Where a fork's CPU went, by how its code ran (PROFILE=1 in a cost run, issue 39: "which compiled
code differs" between fresh JVMs of one model).

The app profiles itself over each measured window (async-profiler, itimer; lab.common.profile.Profiler
writes collapsed.txt with `ann`: a Java frame ends in `_[0]` interpreted, `_[1]` C1-compiled, `_[j]`
C2-compiled, `_[i]` inlined into the frame below it). Each sample goes to one tier: the collector's and
the compiler's threads by their names; otherwise the innermost Java frame decides: code that ran as
C2, C1 or the interpreter (an inlined frame runs as the compiled frame it was inlined into), or native
code a Java frame called and the kernel under it (the JVM's runtime, libc, a syscall, a park, a copy:
itimer shows no kernel frames); a stack with no Java frame at all is the JVM's own (its VM thread, its
timers). A profile whose frames say nothing of how they ran (the JFR
fallback, profiles before 2026-11-27) has no tiers."""
import re
from collections import Counter

from ...report.layers import GC_THREAD, JIT_THREAD, stacks, thread_of

TIERS = (("c2", "C2 code"), ("c1", "C1 code"), ("interpreter", "interpreter"),
         ("native", "native and kernel from Java"), ("gc", "collector threads"),
         ("jit", "compiler threads"), ("vm", "other JVM code"))
JAVA = re.compile(r"_\[([01ji])\]$")
TIER_OF = {"j": "c2", "1": "c1", "0": "interpreter"}
LEAVES_KEPT = 40          # a fork keeps its 40 costliest leaves: enough for the top differences between forks


def classify(frames):
    """(tier, leaf) of one sample's frames, root first: the leaf is the innermost Java method without
    its mark ("… (native)" when native code above it ran), or the thread's kind."""
    thread = thread_of(frames)
    if thread and GC_THREAD.match(thread):
        return "gc", "(collector)"
    if thread and JIT_THREAD.match(thread):
        return "jit", "(compiler)"
    marks = [(i, m.group(1)) for i, f in enumerate(frames) if (m := JAVA.search(f))]
    if not marks:
        return "vm", "(JVM)"
    i = marks[-1][0]
    leaf = JAVA.sub("", frames[i])
    if i < len(frames) - 1:
        return "native", leaf + " (native)"
    # inlined: it ran as the nearest frame below it that was compiled on its own
    physical = next((m for _, m in reversed(marks) if m != "i"), "j")
    return TIER_OF[physical], leaf


def count(collapsed_text):
    """({tier: samples}, {leaf: samples}) of a collapsed profile; (None, None) when no frame of it says
    how it ran."""
    tiers, leaves, marked = Counter({k: 0 for k, _ in TIERS}), Counter(), False
    for frames, n in stacks(collapsed_text):
        marked = marked or any(JAVA.search(f) for f in frames)
        tier, leaf = classify(frames)
        tiers[tier] += n
        leaves[leaf] += n
    return (dict(tiers), dict(leaves)) if marked else (None, None)


def of_fork(cost, cell_dir):
    """A fork's profile over its kept windows (cost.json's `windows`, each naming its profile's directory):
    {"samples", "tiers": {tier: share}, "leaves": {leaf: share}} (shares of the samples, 0..1), or None
    when its windows were not profiled or say nothing of how code ran."""
    total_t, total_l, events = Counter(), Counter(), set()
    for w in (cost or {}).get("windows") or ():
        name = (w.get("profile") or {}).get("dir")
        path = cell_dir / name / "collapsed.txt" if name else None
        if path is None or not path.exists():
            return None             # a kept window without its profile: the fork's shares would be of a part
        t, leaves = count(path.read_text(errors="replace"))
        if t is None:
            return None
        total_t.update(t)
        total_l.update(leaves)
        events.add(w["profile"].get("event") or "itimer")
    samples = sum(total_t.values())
    if not samples:
        return None
    return {"samples": samples, "event": "/".join(sorted(events)), "tiers": {k: v / samples for k, v in total_t.items()},
            "leaves": {k: v / samples for k, v in total_l.most_common(LEAVES_KEPT)}}


def us(fork, shares):
    """Shares of a fork's CPU per request (before the JVM at rest is subtracted: the profile samples
    all of it) in µs."""
    return {k: v * fork["cpu_us_with_rest"] for k, v in shares.items()}


def section(rows):
    """results.md's section, [(label, [fork figures])]: each profiled fork's CPU by tier in µs a request,
    and for each variant with two or more, what its dearest fork spent more than its cheapest, by tier
    and by the leaves that differ most. "" where no fork was profiled with tiers."""
    profiled = [(label, [f for f in forks if f.get("profile") and f.get("cpu_us_with_rest")]) for label, forks in rows]
    profiled = [(label, forks) for label, forks in profiled if forks]
    if not profiled:
        return ""
    out = ["\n## Where each fork's CPU went, by how its code ran (PROFILE=1)\n",
           "The app's CPU per request in its kept windows (the JVM at rest not subtracted: the profile samples all "
           "of it), split by the profiler's samples (async-profiler on "
           + ", ".join(sorted({f["profile"]["event"] for _, fs in profiled for f in fs})) + "): C2 code, C1 code, the "
           "interpreter, native code and the kernel under a Java frame, the collector's and compiler's threads, the "
           "JVM's own. How to read it: docs/reading-results.md.\n",
           "| variant | fork | CPU µs/req | " + " | ".join(title for _, title in TIERS) + " | samples |",
           "|---|---:|---:|" + "---:|" * len(TIERS) + "---:|"]
    for label, forks in profiled:
        for k, f in enumerate(forks, 1):
            t = us(f, f["profile"]["tiers"])
            out.append(f"| {label} | {k} | {f['cpu_us_with_rest']:.1f} | " + " | ".join(f"{t[key]:.1f}" for key, _ in TIERS)
                       + f" | {f['profile']['samples']:,} |")
    out.append("")
    out += [line for label, forks in profiled if len(forks) > 1 for line in [difference_line(label, forks)]]
    return "\n".join(out) + "\n"


def difference_line(label, forks):
    """What the dearest fork spent more than the cheapest, µs a request: by tier, and the three leaves
    whose difference is largest (a leaf kept by one fork only counts 0 in the other), each ± what the
    profiles' sampling alone could make of it (sampling_error)."""
    cheap, dear = min(forks, key=lambda f: f["cpu_us_with_rest"]), max(forks, key=lambda f: f["cpu_us_with_rest"])

    def diffs(part, keys):
        pc, pd = cheap["profile"][part], dear["profile"][part]
        return sorted(((dear["cpu_us_with_rest"] * pd.get(k, 0) - cheap["cpu_us_with_rest"] * pc.get(k, 0),
                        sampling_error(cheap, pc.get(k, 0), dear, pd.get(k, 0)), k) for k in keys), key=lambda d: -abs(d[0]))
    titles = dict(TIERS)
    by_tier = diffs("tiers", titles)[:4]
    leaves = diffs("leaves", set(cheap["profile"]["leaves"]) | set(dear["profile"]["leaves"]))[:3]
    return (f"- {label}: the dearest fork {dear['cpu_us_with_rest'] - cheap['cpu_us_with_rest']:+.1f} µs/req against "
            f"the cheapest ({dear['cpu_us_with_rest']:.1f} and {cheap['cpu_us_with_rest']:.1f}); by tier "
            + ", ".join(f"{titles[k]} {d:+.1f} ± {e:.1f}" for d, e, k in by_tier)
            + "; the leaves that differ most: " + ", ".join(f"`{k}` {d:+.1f} ± {e:.1f}" for d, e, k in leaves))


def sampling_error(a, pa, b, pb):
    """The 95 % half-width, in µs a request, that sampling alone gives the difference of two forks'
    shares pa and pb (each share binomial over its fork's samples)."""
    var = sum((f["cpu_us_with_rest"] ** 2) * p * (1 - p) / f["profile"]["samples"] for f, p in ((a, pa), (b, pb)))
    return 1.96 * var ** 0.5
