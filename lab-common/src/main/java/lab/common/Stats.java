package lab.common;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What proves the model: how many requests were in flight at once, and which threads ran
 * application code ({@link #handlerThread}) and the client's completions ({@link #clientThread}).
 * "1 thread, 100 in flight" is the whole point of an async row; the thread names show it.
 */
public final class Stats {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final Pattern TRAILING_NUMBER = Pattern.compile("\\d+$");

    private final LabConfig config;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final Set<String> handlerThreads = ConcurrentHashMap.newKeySet();
    private final Set<String> clientThreads = ConcurrentHashMap.newKeySet();
    private final Set<String> carrierThreads = ConcurrentHashMap.newKeySet();
    private final AtomicLong virtualThreads = new AtomicLong();
    /** Bumped by {@link #reset}: a virtual thread counted before a reset counts again after it. */
    private final AtomicLong generation = new AtomicLong();
    private final ThreadLocal<Long> countedIn = new ThreadLocal<>();
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
        handlerThreads.add(threadName());
    }

    /** Call where the HTTP client's completion callback runs. */
    public void clientThread() {
        clientThreads.add(threadName());
    }

    /**
     * The current thread's name; a virtual thread's is folded, because there is one per request
     * (Tomcat: {@code http-nio-8080-virt-1234} → {@code http-nio-8080-virt-*}). A virtual thread
     * is counted once, and the carrier it runs on is recorded: the carriers are the "N" of vN.
     */
    private String threadName() {
        Thread thread = Thread.currentThread();
        if (!VirtualThreads.isVirtual(thread)) return thread.getName();
        carrierThreads.add(VirtualThreads.carrierOf(thread));
        long now = generation.get();
        Long counted = countedIn.get();
        if (counted == null || counted != now) {
            countedIn.set(now);
            virtualThreads.incrementAndGet();
        }
        String name = TRAILING_NUMBER.matcher(thread.getName()).replaceFirst("*");
        return name.isEmpty() ? "virtual" : name;
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

    public Set<String> carrierThreads() {
        return Set.copyOf(carrierThreads);
    }

    public long virtualThreads() {
        return virtualThreads.get();
    }

    /** Zeroes the counters between warm-up and measurement; requests still in flight stay counted. */
    public void reset() {
        maxInFlight.set(inFlight.get());
        completed.set(0);
        errors.set(0);
        handlerThreads.clear();
        clientThreads.clear();
        carrierThreads.clear();
        virtualThreads.set(0);
        generation.incrementAndGet();
        THREADS.resetPeakThreadCount();
    }

    public String toJson() {
        return "{\"app\":" + quote(config.app())
                + ",\"container\":" + quote(config.container())
                + ",\"threads\":" + (config.virtualThreads() ? quote(config.threadsFlag()) : config.threads())
                + ",\"inFlight\":" + inFlight.get()
                + ",\"queued\":" + queued.getAsInt()
                + ",\"maxInFlight\":" + maxInFlight.get()
                + ",\"completed\":" + completed.get()
                + ",\"errors\":" + errors.get()
                + ",\"handlerThreads\":" + jsonArray(handlerThreads)
                + ",\"clientThreads\":" + jsonArray(clientThreads)
                + ",\"virtualThreads\":" + virtualThreads.get()
                + ",\"carrierThreads\":" + jsonArray(carrierThreads)
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
