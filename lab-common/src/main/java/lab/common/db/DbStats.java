package lab.common.db;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The {@code db} object of /stats (absent on the HTTP backend). {@code active} and {@code waiting}
 * are counted by the outbound itself around every acquire and release, the same way for both
 * drivers, so they are exact and comparable; the pool's own numbers (Hikari's HikariPoolMXBean,
 * r2dbc-pool's PoolMetrics) come beside them under {@code pool}. The peaks, timeouts and errors
 * start again at {@code POST /stats/reset}, as Stats' maxInFlight and errors do. {@code waiting}
 * is the callers that want a connection beyond the pool's N (callers in the acquire + connections
 * in use - N, at least 0): a queue for the pool, not a call passing through a free connection's
 * acquire. The two counters are read one after the other, so a peak can be off by a call or two.
 */
public final class DbStats {

    private final String driver;
    private final int poolSize;
    private final AtomicInteger active = new AtomicInteger();
    /** Callers inside the pool's acquire, served at once or not. */
    private final AtomicInteger acquiring = new AtomicInteger();
    private final AtomicInteger peakActive = new AtomicInteger();
    private final AtomicInteger peakWaiting = new AtomicInteger();
    private final AtomicLong acquireTimeouts = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private volatile IntSupplier idle = () -> -1;
    private volatile Supplier<String> own = () -> "{}";

    DbStats(String driver, int poolSize) {
        this.driver = driver;
        this.poolSize = poolSize;
    }

    /** The pool's own idle count and its numbers as a JSON object, read at each /stats. */
    void poolOf(IntSupplier idleConnections, Supplier<String> ownJson) {
        this.idle = idleConnections;
        this.own = ownJson;
    }

    void acquiring() {
        acquiring.incrementAndGet();
        peakWaiting.accumulateAndGet(waiting(), Math::max);
    }

    /** The wait ended: with a connection ({@code got}) or without. */
    void acquired(boolean got) {
        acquiring.decrementAndGet();
        if (got) peakActive.accumulateAndGet(active.incrementAndGet(), Math::max);
    }

    void released() {
        active.decrementAndGet();
    }

    void acquireTimeout() {
        acquireTimeouts.incrementAndGet();
    }

    void error() {
        errors.incrementAndGet();
    }

    int active() {
        return active.get();
    }

    /** Callers that want a connection while all N are in use. */
    int waiting() {
        return Math.max(0, acquiring.get() + active.get() - poolSize);
    }

    public void reset() {
        peakActive.set(active.get());
        peakWaiting.set(waiting());
        acquireTimeouts.set(0);
        errors.set(0);
    }

    public String toJson() {
        return "{\"driver\":\"" + driver + "\""
                + ",\"poolSize\":" + poolSize
                + ",\"active\":" + active.get()
                + ",\"idle\":" + idle.getAsInt()
                + ",\"waiting\":" + waiting()
                + ",\"peakActive\":" + peakActive.get()
                + ",\"peakWaiting\":" + peakWaiting.get()
                + ",\"acquireTimeouts\":" + acquireTimeouts.get()
                + ",\"errors\":" + errors.get()
                + ",\"pool\":" + own.get()
                + "}";
    }
}
