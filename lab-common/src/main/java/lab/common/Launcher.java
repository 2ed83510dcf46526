package lab.common;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import lab.agent.AdminAccess;
import lab.common.admin.AdminServer;
import lab.common.config.LabConfig;
import lab.common.container.Container;
import lab.common.outbound.Remote;
import lab.common.profile.Profiler;
import lab.common.stats.Stats;

/**
 * Starts one app: its container on the pinned pool, the admin endpoint beside it, the shared
 * client. Each module's {@code main} is one call to {@link #main}; tests call {@link #start} with
 * port 0 and close what it returns.
 */
public final class Launcher implements AutoCloseable {

    /**
     * Exit status when the last-resort watchdog has to halt the JVM: something in the shutdown
     * hung past every deadline below. A normal SIGTERM ends with the JVM's own 143 (128 + 15),
     * Ctrl-C (SIGINT) with 130.
     */
    public static final int HALTED_STATUS = 3;
    /** After the grace: how long the container may still take to stop once the client is closed. */
    static final long CONTAINER_AFTER_CLIENT_MS = 1_000;
    /** The watchdog fires this long after the grace: past every bound of {@link #stop}. */
    static final long WATCHDOG_AFTER_GRACE_MS = 3_000;

    private final LabConfig config;
    private final Stats stats;
    private final Remote remote;
    private final Container container;
    private final AdminServer admin;
    private final Endpoint endpoint;

    private Launcher(LabConfig config, Stats stats, Remote remote, Container container, AdminServer admin, Endpoint endpoint) {
        this.config = config;
        this.stats = stats;
        this.remote = remote;
        this.container = container;
        this.admin = admin;
        this.endpoint = endpoint;
    }

    /** Parses the flags (exit 2 with usage on bad input), starts, prints the effective configuration. */
    public static void main(String[] args, List<String> apps, Endpoint.Factory factory) throws Exception {
        // docs/traps.md #9 (the JDK HttpClient's async callbacks): on JDK 17 with 2 CPUs the
        // common pool has parallelism 1, and CompletableFuture's async pool (where
        // HttpClient.sendAsync completes) then starts a new thread per callback. Must be set
        // before anything touches ForkJoinPool.
        if (System.getProperty("java.util.concurrent.ForkJoinPool.common.parallelism") == null) {
            System.setProperty("java.util.concurrent.ForkJoinPool.common.parallelism",
                    String.valueOf(Math.max(2, Runtime.getRuntime().availableProcessors() - 1)));
        }
        // docs/traps.md #42: the JDK client's idle pool and keep-alive, read once by the JDK when its
        // first client is built; set here, before anything builds one.
        Remote.pinJdkClientPool();
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.println(LabConfig.USAGE + "\n       apps in this jar: " + String.join(", ", apps));
            return;
        }
        LabConfig config;
        try {
            config = LabConfig.parse(args, apps);
        } catch (IllegalArgumentException e) {
            System.err.println("ERROR: " + e.getMessage());
            System.err.println(LabConfig.USAGE + "\n       apps in this jar: " + String.join(", ", apps));
            System.exit(2);
            return;
        }
        // Before anything makes a virtual thread: the scheduler reads these once (docs/traps.md #17).
        if (config.virtualThreads()) VirtualThreads.pinCarriers(config.threads());
        Launcher lab;
        try {
            lab = start(config, factory);
        } catch (Exception e) {
            // A port in use must end the process: the container's non-daemon threads would
            // otherwise keep a half-started JVM alive.
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) root = root.getCause();
            System.err.println("ERROR: could not start " + config.app() + " on " + config.container() + ": " + e
                    + (root == e ? "" : " (caused by " + root + ")"));
            System.exit(1);
            return;
        }
        // SIGTERM / Ctrl-C: stop by a deadline, say in one line what was cut short; the JVM then
        // exits with 143 (SIGTERM) or 130 (SIGINT). Whatever hangs, the watchdog halts it.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            startWatchdog(config.shutdownGraceMs() + WATCHDOG_AFTER_GRACE_MS);
            System.err.println(lab.stop());
        }, "shutdown"));
        System.out.println(lab.describe());
        if (!config.work().none()) System.out.println(lab.remote.work().describe());
    }

    /**
     * Starts in this JVM (tests do, with port 0). A vN config must find the virtual-thread
     * scheduler pinned to N carriers already ({@link VirtualThreads#checkCarriers}).
     */
    public static Launcher start(LabConfig config, Endpoint.Factory factory) throws Exception {
        if (config.virtualThreads()) {
            if (VirtualThreads.unsupportedReason() != null) throw new IllegalStateException(VirtualThreads.unsupportedReason());
            VirtualThreads.checkCarriers(config.threads());
        }
        Stats stats = new Stats(config);
        Remote remote = new Remote(config, stats);
        Container container = null;
        try {
            Endpoint endpoint = factory.create(config, remote);
            container = Container.start(config, endpoint, stats, remote);
            stats.queueOf(container::queued);
            stats.qosOf(container::qosJson, container::resetLimitCounts);
            // The bench's token and run directory come in the environment, never on the command line.
            AdminServer admin = new AdminServer(config.host(), config.adminPort(), stats, AdminAccess.fromEnvironment());
            Launcher lab = new Launcher(config, stats, remote, container, admin, endpoint);
            admin.onResize(lab::resize);
            return lab;
        } catch (Exception e) {
            // Whatever did start must stop, or its non-daemon threads outlive the failure.
            if (container != null) container.close();
            remote.close();
            throw e;
        }
    }

    public int port() {
        return container.port();
    }

    public int adminPort() {
        return admin.port();
    }

    /** The token the admin port's state-changing calls need ({@link AdminAccess}): for in-process callers (tests). */
    public String adminToken() {
        return admin.token();
    }

    public Stats stats() {
        return stats;
    }

    /** The one line every log and result starts from. */
    public String describe() {
        return "lab: app=" + config.app() + " container=" + config.container()
                + " threads=" + stats.threads() + " [" + container.describe() + "]"
                + (stats.threads().startsWith("v") ? "" : VirtualThreads.pinnedForASwitch())
                + " listen=http://" + config.host() + ":" + port() + endpoint.path()
                + (endpoint.path().equals("/call") ? " (bytes<=" + Filler.MAX + ", filler chunks of " + Filler.CHUNK + ")" : "")
                + (endpoint.limits().isEmpty() ? "" : " [" + endpoint.limits() + "]")
                // --work only: without it the line is the one the bench and its fixtures know
                + (config.work().none() ? "" : " work=" + config.work())
                + " admin=http://" + config.host() + ":" + adminPort() + "/stats"
                + " " + Profiler.describe()
                + (config.db() == null ? " remote=" + config.remote() : " backend=postgres db=" + config.db().url())
                + " [" + remote.describe() + "]"
                + " shutdownGrace=" + config.shutdownGraceMs() + "ms"
                + " " + stats.admission().describe()
                + " " + container.describeLimits()
                + " commonPoolParallelism=" + java.util.concurrent.ForkJoinPool.getCommonPoolParallelism()
                + " jdk=" + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ", "
                + System.getProperty("java.home") + ")";
    }

    /**
     * {@code POST /pool?threads=N|vN}: gives the container the next pool of a bench's matrix on this
     * warm JVM (a platform pool grown to N, or a switch between platform and virtual threads; {@link
     * Container#resize}), only with nothing in flight (a request queued for the old pool would be
     * served by the new one), and prints the new {@code lab:} line: the log then holds every pool the
     * JVM ran with, the last one current. vN needs the JVM's virtual-thread scheduler pinned to N
     * carriers from its start (the scheduler reads that once: docs/traps.md #17). Throws
     * IllegalArgumentException for a bad value, IllegalStateException when busy or when the switch
     * cannot be made here, and {@link Container#resize}'s exceptions.
     */
    public synchronized String resize(String threads) {
        int n = LabConfig.threadCount(threads);
        boolean virtual = threads.startsWith("v");
        if (stats.inFlight() + stats.queued() > 0) {
            throw new IllegalStateException(stats.inFlight() + " requests in flight, " + stats.queued() + " queued: resize an idle app");
        }
        if (virtual) {
            if (VirtualThreads.unsupportedReason() != null) throw new IllegalStateException(VirtualThreads.unsupportedReason());
            String refused = LabConfig.containerLimitRefusal(config.container(), true, config.containerQueue(), config.qos());
            if (refused != null) throw new IllegalStateException(refused);
            VirtualThreads.checkCarriers(n);
        }
        container.resize(n, virtual);
        stats.poolResized(threads);
        String line = describe();
        System.out.println(line);
        return line;
    }

    /** {@link #stop}, without the report (tests close what they started). */
    @Override
    public void close() {
        stop();
    }

    /**
     * Stops by a deadline and returns one line saying what was cut short. Bounded: the grace
     * ({@code --shutdown-grace-ms}) + at most {@link Remote#FORCED_CLOSE_WAIT_MS} +
     * {@link #CONTAINER_AFTER_CLIENT_MS}, whatever the container or the client do.
     * <ol>
     *   <li>The container stops accepting and lets its requests finish its own way (Tomcat waits
     *       for them, Reactor Netty's {@code disposeNow} up to 5 s, Jetty closes their
     *       connections), on a thread of its own, waited for until the grace is over.</li>
     *   <li>The client takes no new calls; the calls in flight may finish in what is left of the
     *       grace, then {@code shutdownNow()} aborts them (their requests end as 502).</li>
     *   <li>With no remote call left to wait for, the container gets
     *       {@link #CONTAINER_AFTER_CLIENT_MS} more; a container that still has not stopped is
     *       named in the line and left to the JVM's exit.</li>
     * </ol>
     */
    public String stop() {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(config.shutdownGraceMs());
        int inFlightAtStart = stats.inFlight();
        Thread containerStop = new Thread(() -> {
            try {
                container.close();
            } catch (Exception e) {
                System.err.println("WARN: stopping the container: " + e);
            }
        }, "shutdown-container");
        containerStop.setDaemon(true);
        containerStop.start();
        joinUntil(containerStop, deadline);
        int inFlightAtDeadline = stats.inFlight();
        Remote.Closed client = remote.close(deadline);
        long graceEnd = System.nanoTime();
        joinUntil(containerStop, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONTAINER_AFTER_CLIENT_MS));
        admin.close();
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        String containerState = containerStop.isAlive()
                ? "; " + config.container() + " still stopping after " + tookMs + " ms, left to the JVM's exit" : "";
        if (client == Remote.Closed.CLEAN || (client == Remote.Closed.UNSUPPORTED && inFlightAtDeadline == 0)) {
            return "shutdown: stopped in " + tookMs + " ms (grace " + config.shutdownGraceMs() + " ms), "
                    + inFlightAtStart + " request" + (inFlightAtStart == 1 ? "" : "s") + " in flight at the signal;"
                    + " no remote call had to be cut short; " + remote.describe(client) + containerState;
        }
        return "shutdown: " + inFlightAtDeadline + " request" + (inFlightAtDeadline == 1 ? "" : "s") + " in flight cut short after "
                + TimeUnit.NANOSECONDS.toMillis(Math.min(graceEnd, deadline) - start) + " ms grace; " + remote.describe(client)
                + " (" + inFlightAtStart + " in flight at the signal; stopped in " + tookMs + " ms)" + containerState;
    }

    private static void joinUntil(Thread thread, long deadlineNanos) {
        long ms = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (ms <= 0) return;
        try {
            thread.join(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The last resort: halts the JVM (status {@link #HALTED_STATUS}) if the shutdown hook is still running after {@code ms}. */
    private static void startWatchdog(long ms) {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("shutdown: still not stopped " + ms + " ms after the signal; halting the JVM (exit " + HALTED_STATUS + ")");
            Runtime.getRuntime().halt(HALTED_STATUS);
        }, "shutdown-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }
}
