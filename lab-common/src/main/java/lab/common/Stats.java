package lab.common;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;

/**
 * What proves the model: how many requests were in flight at once, and which threads ran
 * application code ({@link #handlerThread}) and the client's completions ({@link #clientThread}).
 * "1 thread, 100 in flight" is the whole point of an async row; the thread names show it.
 */
public final class Stats {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final LabConfig config;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final Set<String> handlerThreads = ConcurrentHashMap.newKeySet();
    private final Set<String> clientThreads = ConcurrentHashMap.newKeySet();
    private volatile IntSupplier queued = () -> 0;

    public Stats(LabConfig config) {
        this.config = config;
    }

    public void requestStarted() {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    }

    /** A response with status >= 500 (the remote failed or timed out) counts as an error. */
    public void requestFinished(int status) {
        inFlight.decrementAndGet();
        completed.incrementAndGet();
        if (status >= 500) errors.incrementAndGet();
    }

    /** Call where a container thread enters application code. */
    public void handlerThread() {
        handlerThreads.add(Thread.currentThread().getName());
    }

    /** Call where the HTTP client's completion callback runs. */
    public void clientThread() {
        clientThreads.add(Thread.currentThread().getName());
    }

    /** Where to read how many requests wait in the container's queue for a pool thread. */
    void queueOf(IntSupplier containerQueue) {
        this.queued = containerQueue;
    }

    public int inFlight() {
        return inFlight.get();
    }

    public Set<String> handlerThreads() {
        return Set.copyOf(handlerThreads);
    }

    public Set<String> clientThreads() {
        return Set.copyOf(clientThreads);
    }

    /** Zeroes the counters between warm-up and measurement; requests still in flight stay counted. */
    public void reset() {
        maxInFlight.set(inFlight.get());
        completed.set(0);
        errors.set(0);
        handlerThreads.clear();
        clientThreads.clear();
        THREADS.resetPeakThreadCount();
    }

    public String toJson() {
        return "{\"app\":" + quote(config.app())
                + ",\"container\":" + quote(config.container())
                + ",\"threads\":" + config.threads()
                + ",\"inFlight\":" + inFlight.get()
                + ",\"queued\":" + queued.getAsInt()
                + ",\"maxInFlight\":" + maxInFlight.get()
                + ",\"completed\":" + completed.get()
                + ",\"errors\":" + errors.get()
                + ",\"handlerThreads\":" + jsonArray(handlerThreads)
                + ",\"clientThreads\":" + jsonArray(clientThreads)
                + ",\"liveThreads\":" + THREADS.getThreadCount()
                + ",\"peakThreads\":" + THREADS.getPeakThreadCount()
                + "}";
    }

    private static String jsonArray(Set<String> names) {
        return new TreeSet<>(names).stream().map(Stats::quote).collect(Collectors.joining(",", "[", "]"));
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
