"""The box's speed where the app runs, over one cost window (issue 39): two fixed loops timed in this
thread's own CPU time, a burst of each every INTERVAL_S for SECONDS, started pinned where the app is
(taskset with CPUSETS, host-run.sh's --cpus with HOSTS): one that computes in the core's own caches,
one that walks a 64 MiB buffer 4 MiB + 15 bytes at a time (16 pages in turn, every step a cache line of
its own: here ~110 ns a step against ~45 for a compute iteration, so mostly the shared cache, which
a neighbour also uses). Prints one JSON line: each loop's CPU ns per step over the bursts, their
count, and each burst's, so a reader can see the spread.

Why: this VM's CPUs run the same code at different speeds from one spell to the next. The compute
loop, alone on an idle CPU 1 with steal at 0, took 47.4 to 65.8 ns an iteration in twelve 15 s
spells; a random walk through 16 MiB of pointers moved by 48 % in 150 s (2.5 s means), hardly with
the compute loop (correlation 0.24; 2026-11-27). A fork measured in a slow spell reads dearer for the
box, not for its model; timed beside each window, the loops say how fast the box was meanwhile.

It takes ~1.2 % of one CPU (~1.2 ms every 100 ms) and 64 MiB. It asks for the highest priority it may
have, so that the app's threads waking do not cut a burst in two: a cut burst would read the app's
own load as the box's slowness. The JSON says which priority it got. Python's standard library only:
it runs on any host the lab can reach."""
import json
import os
import sys
import time

ITERATIONS = 20_000       # ~1 ms of CPU on this box's Xeon
STEPS = 2_000             # ~0.2 ms: 2,000 cache lines, a small part of the core's 2 MiB L2 taken from the app
SIZE = 64 << 20           # the walk's buffer, well past a core's caches
STRIDE = 4_194_319        # 4 MiB + 15: 16 pages in turn, each step 240 bytes on from its page's last
INTERVAL_S = 0.1


def burst(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def walk(buf, n, i):
    for _ in range(n):
        i = (i + STRIDE) % SIZE
        buf[i] += 1            # a write: the line is the walk's own, not a shared zero page
    return i


def main(seconds):
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -20)
    except OSError:
        pass
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    buf, i = bytearray(SIZE), 0
    buf[::4096] = b"\1" * (SIZE // 4096)   # every page written once now: no page fault inside a timed walk
    burst(ITERATIONS)                        # the interpreter's first pass, not counted
    each, walks, end = [], [], time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.thread_time_ns()
        burst(ITERATIONS)
        t1 = time.thread_time_ns()
        i = walk(buf, STEPS, i)
        each.append(t1 - t)
        walks.append(time.thread_time_ns() - t1)
        time.sleep(INTERVAL_S)
    print(json.dumps({"ns_per_iteration": round(sum(each) / (len(each) * ITERATIONS), 3) if each else None,
                      "ns_per_step": round(sum(walks) / (len(walks) * STEPS), 3) if walks else None,
                      "bursts": len(each), "iterations": ITERATIONS, "steps": STEPS, "nice": nice,
                      "burst_ns": each, "walk_ns": walks}), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
