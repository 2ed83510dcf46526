"""The steady rate: the responses per second wrk's connections sustained, free of the window's edges.

wrk's req/s counts whole responses in a window: with 1 s responses and a 10 s closed loop each
connection completes 9 or 10 depending on its phase, so req/s moves in ~10 % steps (docs/traps.md
#14, #20). bench/tools/wrk-json.lua records when every response completed (a monotonic clock) and
writes the times into wrk.json; this turns them into a rate:

  * every connection completed >= 2 responses (n >= 2C): the first C completions are each
    connection's first and the last C each one's last, so the summed per-connection spans are
    sum(last C) - sum(first C) for n - C intervals: C * (n - C) / that. Connection set-up and the
    unfinished last request fall outside the spans.
  * otherwise (a starved model: few connections answered twice) the responses came one after
    another, or in bursts: a pool of 10 behind 100 connections lets 10 answers out together once
    a second. (n - 1) / (last - first) counted the last burst against the gaps before it and read
    11.1 req/s against a physical 10 (docs/traps.md #36). So the completions are grouped into
    bursts (a gap above half the mean gap starts a new one) and the rate is the responses before
    the last burst over the time from the first burst's start to the last one's:
    (n - last burst) / (start of last - start of first). With no bursts (every group one response)
    that is (n - 1) / (last - first) again.
"""


def bursts(times):
    """The sorted completion times split into bursts: lists of times, each a gap apart of more
    than half the mean gap from the one before."""
    n = len(times)
    if n < 2:
        return [list(times)]
    gap = 0.5 * (times[-1] - times[0]) / (n - 1)
    groups = [[times[0]]]
    for prev, t in zip(times, times[1:]):
        if t - prev > gap:
            groups.append([])
        groups[-1].append(t)
    return groups


def steady_rate(times, conns):
    """(responses/s, how) from completion times (seconds, any origin) and the connections; the rate
    is None (and how says why) when the times cannot give one."""
    t = sorted(times)
    n = len(t)
    if n < 2:
        return None, "fewer than 2 responses"
    if conns and n >= 2 * conns:
        first, last = sum(t[:conns]), sum(t[-conns:])
        if last > first:
            return conns * (n - conns) / (last - first), "per-connection spans"
    groups = bursts(t)
    if len(groups) < 2:
        return None, "every response at once"
    span = groups[-1][0] - groups[0][0]
    if all(len(g) == 1 for g in groups):
        return (n - 1) / span, "first to last response"
    return (n - len(groups[-1])) / span, f"first to last burst ({len(groups)} bursts)"
