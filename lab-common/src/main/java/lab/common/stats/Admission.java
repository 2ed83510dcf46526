package lab.common.stats;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code --max-in-flight N}: at most N requests in application code at once; beyond N a new
 * request is answered 503 at once, with {@link #rejection()}, and no application code runs for it.
 *
 * <p>Why a {@link Semaphore} and why here, at the container's entry ({@link StatsFilter},
 * {@link StatsHttpHandler}): it is the one limit that means the same for every model. A thread
 * pool bounds a thread-per-request server only (and through a queue that grows, not a refusal);
 * the async and reactive models hold thousands of requests on one thread, so their pools bound
 * nothing; and virtual threads must not be pooled at all — JEP 444 says to limit their
 * concurrency with a semaphore. {@code tryAcquire}, never {@code acquire}: a request that waited
 * here would be the unbounded queue again, only in another place.
 *
 * <p>The trap is the release: a permit is held until the request has <em>completed</em>, which
 * for an async request (Servlet async, WebFlux) is long after the container's thread has
 * returned. Releasing on return would admit a new request every time a thread went back to the
 * pool, and an async server would run unbounded while reporting a limit. Each caller releases
 * exactly once ({@link #release}); a second release would silently raise the limit, so it is
 * counted in {@code overReleased} (always 0 unless there is a bug) instead of done.
 *
 * <p>With N = 0 (the default) there is no limit: {@link #tryAcquire} always admits, nothing is
 * counted, and /stats says {@code "admission":null}.
 */
public final class Admission {

    private final int limit;
    private final Semaphore permits;
    private final AtomicLong admitted = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicInteger current = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    private final AtomicLong overReleased = new AtomicLong();
    private final byte[] rejection;

    /** @param limit N, or 0 for no limit */
    public Admission(int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must be >= 0, got " + limit);
        this.limit = limit;
        // Fairness buys nothing for tryAcquire (it never waits) and costs an ordered queue.
        this.permits = limit == 0 ? null : new Semaphore(limit);
        this.rejection = ("admission: " + limit + " requests in flight (--max-in-flight " + limit + ")\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    public boolean enabled() {
        return limit > 0;
    }

    public int limit() {
        return limit;
    }

    /**
     * Takes a permit if one is free, at once; true = admitted (and the caller owes exactly one
     * {@link #release}), false = answer {@link #STATUS} with {@link #rejection()} and run nothing.
     */
    public boolean tryAcquire() {
        if (permits == null) return true;
        if (!permits.tryAcquire()) {
            rejected.incrementAndGet();
            return false;
        }
        admitted.incrementAndGet();
        peak.accumulateAndGet(current.incrementAndGet(), Math::max);
        return true;
    }

    /** Gives back the permit of one admitted request, once it has completed. */
    public void release() {
        if (permits == null) return;
        // Never below 0: a release without its permit would add one that was never there.
        if (current.getAndUpdate(c -> c > 0 ? c - 1 : c) == 0) {
            overReleased.incrementAndGet();
            return;
        }
        permits.release();
    }

    /** The 503 answer's status. */
    public static final int STATUS = 503;

    /** The 503 answer's text/plain body: {@code admission: N requests in flight (--max-in-flight N)}. */
    public byte[] rejection() {
        return rejection.clone();
    }

    public int inFlight() {
        return current.get();
    }

    public int peak() {
        return peak.get();
    }

    public long admitted() {
        return admitted.get();
    }

    public long rejected() {
        return rejected.get();
    }

    /** Between warm-up and measurement, as {@link Stats#reset}: requests in flight stay held. */
    void reset() {
        peak.set(current.get());
        admitted.set(0);
        rejected.set(0);
    }

    /** {@code {"limit":N,"inFlight":..,"peak":..,"admitted":..,"rejected":..}}, or {@code null} without a limit. */
    String toJson() {
        if (!enabled()) return "null";
        return "{\"limit\":" + limit + ",\"inFlight\":" + current.get() + ",\"peak\":" + peak.get()
                + ",\"admitted\":" + admitted.get() + ",\"rejected\":" + rejected.get()
                + (overReleased.get() == 0 ? "" : ",\"overReleased\":" + overReleased.get()) + "}";
    }

    /** For the {@code lab:} line. */
    public String describe() {
        return enabled() ? "maxInFlight=" + limit + " (a Semaphore: beyond " + limit + ", 503 at once)" : "maxInFlight=none";
    }
}
