"""The box's speed where the app runs, over one cost window (issue 39): a fixed loop timed in this
thread's own CPU time, a burst of ITERATIONS every INTERVAL_S for SECONDS, started pinned where the
app is (taskset with CPUSETS, host-run.sh's --cpus with HOSTS). Prints one JSON line: the bursts'
CPU ns per iteration, their count, and each burst's, so a reader can see the spread.

Why: this VM's CPUs run the same code at different speeds from one spell to the next. The loop
below, alone on an idle CPU 1 with steal at 0, took 47.4 to 65.8 ns an iteration in twelve 15 s spells
(2026-11-27): a fork measured in a slow spell reads dearer for the box, not for its model. Timed
beside each window, it says how fast the box was while the window was counted.

It takes ~1 % of one CPU (1 ms every 100 ms). It asks for the highest priority it may have, so that
the app's threads waking do not cut a burst in two: a cut burst would read the app's own load as the
box's slowness. The JSON says which priority it got. Python's standard library only: it runs on any host
the lab can reach."""
import json
import os
import sys
import time

ITERATIONS = 20_000       # ~1 ms of CPU on this box's Xeon
INTERVAL_S = 0.1


def burst(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def main(seconds):
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    except OSError:
        pass
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    burst(ITERATIONS)                        # the interpreter's first pass, not counted
    each, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.thread_time_ns()
        burst(ITERATIONS)
        each.append(time.thread_time_ns() - t)
        time.sleep(INTERVAL_S)
    print(json.dumps({"ns_per_iteration": round(sum(each) / (len(each) * ITERATIONS), 3) if each else None,
                      "bursts": len(each), "iterations": ITERATIONS, "nice": nice,
                      "burst_ns": each}), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
