package lab.common.stats;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import lab.agent.Jvm;
import lab.common.Launcher;
import lab.common.VirtualThreads;
import lab.common.config.LabConfig;
import lab.common.db.DbStats;

/**
 * What proves the model: how many requests were in flight at once, and which threads ran
 * application code ({@link #handlerThread}) and the client's completions ({@link #clientThread}).
 * "1 thread, 100 in flight" is the whole point of an async row; the thread names show it.
 * {@link #busyThreads} shows what those threads are doing right now: which one a slow client holds.
 */
public final class Stats {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final Pattern TRAILING_NUMBER = Pattern.compile("\\d+$");
    private static final int MAX_APP_THREADS = 10_000;

    private final LabConfig config;
    /** The pool now, as {@code --threads} takes it ("200", "v1"): the flag's, or what {@code POST /pool} made it. */
    private volatile String threads;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final Set<String> handlerThreads = ConcurrentHashMap.newKeySet();
    private final Set<String> clientThreads = ConcurrentHashMap.newKeySet();
    /** {@code --work}: the threads it ran on ({@link #workThread}); absent from /stats without it. */
    private final Set<String> workThreads = ConcurrentHashMap.newKeySet();
    /** The {@link #generation} in which a virtual thread last recorded its (folded) name in {@link #workThreads}. */
    private final AtomicLong virtualWorkRecorded = new AtomicLong(-1);
    private final Set<String> carrierThreads = ConcurrentHashMap.newKeySet();
    private final AtomicLong virtualThreads = new AtomicLong();
    /** Bumped by {@link #reset}: a virtual thread counted before a reset counts again after it. */
    private final AtomicLong generation = new AtomicLong();
    private final ThreadLocal<Long> countedIn = new ThreadLocal<>();
    /** Every thread that ever ran application code, kept across resets: a thread stuck since before one is still stuck. */
    private final Set<String> appThreads = ConcurrentHashMap.newKeySet();
    private volatile IntSupplier queued = () -> 0;
    /** {@code --qos}: Jetty's QoSHandler counts as JSON, or null (then absent); and their reset. */
    private volatile Supplier<String> qos = () -> null;
    private volatile Runnable qosReset = () -> { };
    /** Calls an app handed off and did not wait for (fire-and-forget), or null (then absent): not done, it is still busy. */
    private volatile IntSupplier background;
    /** {@code --backend postgres}: the pool's numbers ({@link DbStats}); null on the HTTP backend, and then absent. */
    private volatile DbStats db;
    /** {@code --max-in-flight}: taken and given back by {@link StatsFilter} / {@link StatsHttpHandler}. */
    private final Admission admission;

    public Stats(LabConfig config) {
        this.config = config;
        this.threads = config.threadsFlag();
        this.admission = new Admission(config.maxInFlight());
    }

    /**
     * The admission limit every container's entry applies ({@code --max-in-flight}); a request it
     * refuses is answered 503 there and never counted here as started, in flight or completed.
     */
    public Admission admission() {
        return admission;
    }

    public void requestStarted() {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    }

    /** A response with status >= 500 (the remote failed or timed out) counts as an error. */
    public void requestFinished(int status) {
        // Counted before it leaves inFlight: a reader that sees inFlight 0 then sees every
        // completion and error (the other order let a test read completed one short).
        completed.incrementAndGet();
        if (status >= 500) errors.incrementAndGet();
        inFlight.decrementAndGet();
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
     * Call where {@code --work} runs (lab.common.work.Work, after the remote call returned): the thread
     * the model ran it on, for /stats' {@code "workThreads"}. Costs no allocation on a platform thread
     * (its name is kept as it is), so that {@code alloc=} stays exact; a virtual thread's name is
     * folded by a regex that does allocate, so one virtual thread per {@link #reset} records it (they
     * fold to the same name: the container's, or {@code virtual}).
     */
    public void workThread() {
        Thread thread = Thread.currentThread();
        if (!VirtualThreads.isVirtual(thread)) {
            workThreads.add(thread.getName());
            return;
        }
        long now = generation.get();
        if (virtualWorkRecorded.get() != now && virtualWorkRecorded.getAndSet(now) != now) workThreads.add(threadName());
    }

    /**
     * The current thread's name; a virtual thread's is folded, because there is one per request
     * (Tomcat: {@code http-nio-8080-virt-1234} → {@code http-nio-8080-virt-*}). A virtual thread
     * is counted once, and the carrier it runs on is recorded: the carriers are the "N" of vN.
     * A platform thread is remembered for {@link #busyThreads} (thread dumps list no virtual threads).
     */
    private String threadName() {
        Thread thread = Thread.currentThread();
        if (!VirtualThreads.isVirtual(thread)) {
            appThread(thread.getName());
            return thread.getName();
        }
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

    private void appThread(String name) {
        // Pools reuse a few names; the cap only guards against a pool that names a thread per task.
        if (appThreads.size() < MAX_APP_THREADS) appThreads.add(name);
    }

    /** Where to read how many requests wait in the container's queue for a pool thread. */
    public void queueOf(IntSupplier containerQueue) {
        this.queued = containerQueue;
    }

    /**
     * Where to read how many calls the app handed off and has not done: an app that answers before its
     * work is done (fire-and-forget) is busy until that work is, and the bench's drain waits for it
     * ({@code "background"} in /stats, absent for every other app).
     */
    public void backgroundOf(IntSupplier handedOff) {
        this.background = handedOff;
    }

    /**
     * Where to read Jetty's QoSHandler counts ({@code --qos}): its JSON, or null without the flag; and how
     * to start them from zero on {@link #reset}.
     */
    public void qosOf(Supplier<String> json, Runnable reset) {
        this.qos = json;
        this.qosReset = reset;
    }

    /** {@code ,"qos":{...}} with {@code --qos}, else nothing: the key is absent, as {@code "db"} on the HTTP backend. */
    private String qosJson() {
        String json = qos.get();
        return json == null ? "" : ",\"qos\":" + json;
    }

    /** Where to read the database pool's numbers (the outbound calls it once it is filled). */
    public void dbOf(DbStats pool) {
        this.db = pool;
    }

    public int inFlight() {
        return inFlight.get();
    }

    /** Requests waiting in the container's queue for a pool thread. */
    public int queued() {
        return queued.getAsInt();
    }

    public Set<String> handlerThreads() {
        return Set.copyOf(handlerThreads);
    }

    public Set<String> clientThreads() {
        return Set.copyOf(clientThreads);
    }

    /** Where {@code --work} ran ({@link #workThread}). */
    public Set<String> workThreads() {
        return Set.copyOf(workThreads);
    }

    public Set<String> carrierThreads() {
        return Set.copyOf(carrierThreads);
    }

    public long virtualThreads() {
        return virtualThreads.get();
    }

    /** The container's pool changed ({@link Launcher#resize}): /stats' "threads" says so from now on. */
    public void poolResized(String threads) {
        this.threads = threads;
    }

    /** The pool /stats reports, as {@code --threads} takes it: "200" or "v1". */
    public String threads() {
        return threads;
    }

    /** Zeroes the counters between warm-up and measurement; requests still in flight stay counted. */
    public void reset() {
        maxInFlight.set(inFlight.get());
        completed.set(0);
        errors.set(0);
        handlerThreads.clear();
        clientThreads.clear();
        workThreads.clear();
        carrierThreads.clear();
        virtualThreads.set(0);
        generation.incrementAndGet();
        Jvm.resetPeak();
        DbStats pool = db;
        if (pool != null) pool.reset();
        admission.reset();
        qosReset.run();
    }

    public String toJson() {
        return "{\"app\":" + quote(config.app())
                + ",\"container\":" + quote(config.container())
                + ",\"threads\":" + (threads.startsWith("v") ? quote(threads) : threads)
                + ",\"inFlight\":" + inFlight.get()
                + ",\"queued\":" + queued.getAsInt()
                + (background == null ? "" : ",\"background\":" + background.getAsInt())
                + ",\"maxInFlight\":" + maxInFlight.get()
                + ",\"completed\":" + completed.get()
                + ",\"errors\":" + errors.get()
                + ",\"handlerThreads\":" + jsonArray(handlerThreads)
                + ",\"clientThreads\":" + jsonArray(clientThreads)
                + (config.work().none() ? "" : ",\"workThreads\":" + jsonArray(workThreads))
                + ",\"virtualThreads\":" + virtualThreads.get()
                + ",\"carrierThreads\":" + jsonArray(carrierThreads)
                + ",\"busyThreads\":" + jsonArray(busyThreads())
                // liveThreads, peakThreads, heapUsedBytes, jvm: as the lab's Java agent reads any JVM
                + "," + Jvm.figuresJson()
                + (db == null ? "" : ",\"db\":" + db.toJson())
                + qosJson()
                // Last: a search for the first "inFlight" still finds the top-level one.
                + ",\"admission\":" + admission.toJson()
                + "}";
    }

    /**
     * What each thread that ran application code is doing at this moment, unless it is idle in
     * its pool: one line per thread, {@code "name STATE in frame < frame < frame ... app frame"} —
     * the top frames below the JDK's lock and queue plumbing (where it waits: a socket read in the
     * container's input stream, a blocking socket write, the HTTP client's send), then the first
     * application or Spring frame under them (who asked). Thread dumps are not free: only here,
     * on {@code GET /stats}.
     */
    public List<String> busyThreads() {
        List<String> busy = new ArrayList<>();
        for (ThreadInfo thread : THREADS.dumpAllThreads(false, false)) {
            if (!appThreads.contains(thread.getThreadName())) continue;
            StackTraceElement[] stack = thread.getStackTrace();
            if (idleInPool(stack)) continue;
            busy.add(thread.getThreadName() + " " + thread.getThreadState() + where(stack));
        }
        return busy;
    }

    /** Parked in its pool's wait for the next task: the JDK's and Tomcat's executors, Jetty's pool, a ForkJoinPool. */
    private static boolean idleInPool(StackTraceElement[] stack) {
        for (StackTraceElement frame : stack) {
            String method = frame.getMethodName();
            if ((method.equals("getTask") && frame.getClassName().endsWith("ThreadPoolExecutor"))
                    || (method.equals("idleJobPoll") && frame.getClassName().endsWith("QueuedThreadPool$Runner"))
                    || (method.equals("awaitWork") && frame.getClassName().equals("java.util.concurrent.ForkJoinPool"))) {
                return true;
            }
        }
        return false;
    }

    private static String where(StackTraceElement[] stack) {
        StringBuilder where = new StringBuilder();
        int shown = 0;
        boolean ours = false;
        for (StackTraceElement frame : stack) {
            if (shown < 3 && !plumbing(frame.getClassName())) {
                where.append(shown++ == 0 ? " in " : " < ").append(frame(frame));
                ours |= ours(frame);
            } else if (shown == 3 && !ours && ours(frame)) {
                where.append(" ... ").append(frame(frame));
                break;
            }
        }
        return where.toString();
    }

    private static boolean ours(StackTraceElement frame) {
        return frame.getClassName().startsWith("lab.") || frame.getClassName().startsWith("org.springframework.");
    }

    /** Locks, queues and parking: how a thread waits, not what for. */
    private static boolean plumbing(String type) {
        return type.startsWith("java.util.concurrent.") || type.startsWith("jdk.internal.misc.")
                || type.equals("java.lang.Object") || type.equals("java.lang.Thread");
    }

    private static String frame(StackTraceElement frame) {
        String type = frame.getClassName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + frame.getMethodName();
    }

    private static String jsonArray(Collection<String> names) {
        return new TreeSet<>(names).stream().map(Stats::quote).collect(Collectors.joining(",", "[", "]"));
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
