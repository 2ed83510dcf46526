"""degrade's queueing model: what Little's law says a model's caps let it serve while the remote is
slow, and how long it takes to recover after the fault: no cap (virtual threads, the async models),
a limit that rejects the excess at once (--max-in-flight below the threads), a cap whose excess
queues (platform threads, a client pool)."""
from .options import fault_delay_ms


def hold_ms(fault, healthy_ms, client_timeout_ms=None):
    """How long a request hit by the fault holds its place: its delay, cut by the app's client
    timeout (then a 504); error=P answers P % at once; hang holds until the client timeout."""
    cut = client_timeout_ms or float("inf")
    if fault.startswith("delay="):
        return min(fault_delay_ms(fault), cut)
    if fault.startswith("error="):
        return min(healthy_ms * (1 - int(fault.split("=")[1]) / 100.0), cut)
    return client_timeout_ms            # hang: None when the timeout is unknown


def predict(rate, healthy_ms, fault_hold_ms, fault_s, threads=None, limit=None, queue_cap=None):
    """What Little's law says of a model under the fault. threads: the platform threads of a
    thread-per-request app (None: no thread cap); limit: --max-in-flight (rejects beyond it at once);
    queue_cap: another cap whose excess waits (eg, --client-max-connections).
    A dict: regime (no cap / rejects / queues), capacity C, served per s during the fault, backlog
    growth, backlog at the fault's end, drain rate and time after it, predicted recovery (s, None
    when it does not recover) and the peak queued + in flight; `text` says it in one line."""
    healthy_s, hold_s = healthy_ms / 1000.0, (fault_hold_ms or 0) / 1000.0
    out = {"capacity": None, "served_during": None, "growth": None, "backlog": 0, "drain_rate": None,
           "drain_s": None, "recovery_s": None, "peak": None, "regime": None}
    # Which regime: the cap a request meets first decides what happens to the excess.
    if limit_binds(limit, threads, queue_cap):
        return dict(out, **rejects(rate, limit, healthy_s, hold_s))
    queueing = [c for c in (threads, queue_cap) if c]
    if not queueing:
        return dict(out, **no_cap(rate, fault_hold_ms, hold_s))
    out.update(queues(rate, min(queueing), healthy_s, hold_s, fault_s))
    if limit and threads and limit >= threads:        # a limit that changed nothing: say why
        out["unbound_limit"] = (f"limit {limit} >= {threads} threads: the excess waits in the container's queue, in "
                                "front of the admission filter, so the limit never binds")
        if out["drain_s"] is not None:                # on the draining text only (the other two never had it)
            out["text"] = out["unbound_limit"] + "; " + out["text"]
    return out


def limit_binds(limit, threads, queue_cap):
    """Whether --max-in-flight is the cap a request meets first. A thread-per-request container
    queues a request for a thread BEFORE the admission filter sees it: a limit at or above the
    threads never binds (the excess waits in that queue). Only a limit below them leaves threads
    free to answer the excess with a fast 503; likewise a limit above another queueing cap."""
    return bool(limit) and (not threads or limit < threads) and (not queue_cap or limit <= queue_cap)


def rejects(rate, c, healthy_s, hold_s):
    """A binding limit of c: beyond c in flight a request is answered 503 at once, so nothing
    queues; it recovers once the slow requests it admitted answer (one fault hold at most)."""
    served = c / hold_s if hold_s else None
    out = {"regime": "rejects", "capacity": c, "served_during": served, "peak": c}
    if c / healthy_s < rate:                # too small even for the healthy load
        out["text"] = (f"limit {c}: {c} in flight / {healthy_s:g} s = {c / healthy_s:g} req/s < RATE {rate}: "
                       f"rejects ~{rate - c / healthy_s:g} req/s even when healthy; does not recover")
        return out
    out.update(recovery_s=hold_s, recovery_at_most=True)
    if served is None:
        out["text"] = f"limit {c}: rejects beyond {c} in flight; no backlog"
        return out
    out["text"] = (f"limit {c}: serves {c} / {hold_s:g} s = {served:g} req/s during the fault, "
                   f"rejects ~{max(0.0, rate - served):g} req/s (503), no backlog; recovers once the slow requests "
                   f"it admitted answer (≤ {hold_s:g} s)")
    return out


def no_cap(rate, fault_hold_ms, hold_s):
    """Nothing caps the requests in flight (virtual threads, the async models): each waits its own
    delay and none waits for another, so the model is back as the last slow request answers."""
    return {"regime": "no cap", "recovery_s": 0.0, "peak": None if fault_hold_ms is None else round(rate * hold_s),
            "text": ("no cap: every request waits its delay; recovers as the last slow request answers "
                     f"(~{hold_s:g} s after the end; requests sent after it answer at once)")}


def queues(rate, c, healthy_s, hold_s, fault_s):
    """A cap of c whose excess waits (the threads, a client pool): during the fault it serves
    c / hold per second and the rest piles up; after it the backlog drains at what c serves when
    healthy, less RATE, which keeps coming. It does not drain when that is not above 0."""
    served = c / hold_s if hold_s else float("inf")
    growth = rate - served
    backlog = max(0.0, growth) * fault_s
    drain_rate = c / healthy_s - rate
    out = {"regime": "queues", "capacity": c, "served_during": served, "growth": growth, "backlog": backlog,
           "drain_rate": drain_rate, "peak": round(c + backlog)}
    if backlog == 0:
        return dict(out, recovery_s=0.0,
                    text=f"cap {c}: serves {served:g} req/s >= RATE {rate} during the fault: no backlog")
    if drain_rate <= 0:
        return dict(out, text=(f"cap {c}: serves {served:g} req/s during the fault, backlog +{growth:g}/s -> "
                               f"{backlog:,.0f}; healthy it serves {c / healthy_s:g} req/s <= RATE {rate}: does not drain"))
    return dict(out, drain_s=backlog / drain_rate, recovery_s=backlog / drain_rate,
                text=(f"cap {c}: serves {c} / {hold_s:g} s = {served:g} req/s during the fault, "
                      f"backlog +{growth:g}/s -> {backlog:,.0f} at its end; "
                      f"drains at {c / healthy_s:g} - {rate} = {drain_rate:g}/s: {backlog / drain_rate:.0f} s"))
