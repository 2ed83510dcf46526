package lab.common.config;

import java.net.URI;
import java.util.List;

import lab.common.Launcher;
import lab.common.container.Container;
import lab.common.outbound.Remote;
import lab.common.stats.Admission;

/**
 * Everything one app process is configured with, parsed from its flags and printed first at start,
 * so every log line and result says what was measured.
 *
 * @param threads        how many threads may run application code: the container's request pool
 *                       or Netty's event loops (see {@link Container#describe}); with
 *                       {@code virtualThreads}, the carrier threads under the virtual threads
 * @param virtualThreads {@code --threads vN}: one virtual thread per request on N carriers
 * @param fanoutPool        K, the executor / dispatcher threads of the fan-out apps ({@code /fanout})
 * @param fanoutConcurrency C, how many calls a fan-out app's flatMap / flatMapMerge runs at once
 * @param shutdownGraceMs   on SIGTERM / Ctrl-C, how long requests in flight may still finish
 *                          before the client is closed forcibly ({@link Launcher#close})
 * @param client            the outbound HTTP client, one of {@link #CLIENTS} ({@link Remote})
 * @param db                {@code --backend postgres}: the database, its driver and pool; null for the
 *                          HTTP backend (remote-sleep), the default
 * @param maxInFlight       {@code --max-in-flight N}: beyond N requests in flight a new one is answered 503
 *                          at once ({@link Admission}); 0 = no limit, the default
 * @param containerQueue    {@code --container-queue N}: Tomcat only, platform threads only: its executor's
 *                          {@code maxQueueSize}; 0 = unbounded, the default ({@code TomcatContainer})
 * @param qos               {@code --qos N}: Jetty only: Jetty's {@code QoSHandler} in front of the servlet
 *                          context with {@code maxRequestCount} N; 0 = off, the default ({@code JettyContainer})
 * @param qosSuspended      {@code --qos-suspended M}: the QoSHandler's {@code maxSuspendedRequestCount}
 *                          (default {@value #DEFAULT_QOS_SUSPENDED}, Jetty's); beyond it, 503
 * @param work              {@code --work SPEC}: what each request does of its own after the remote call
 *                          returns, on the model's thread ({@link WorkSpec}); {@link WorkSpec#NONE}, the default
 */
public record LabConfig(
        String app,
        String container,
        int threads,
        boolean virtualThreads,
        String host,
        int port,
        int adminPort,
        URI remote,
        int clientTimeoutMs,
        int clientConnectTimeoutMs,
        int clientMaxConnections,
        int clientExecutorThreads,
        int acceptQueue,
        int fanoutPool,
        int fanoutConcurrency,
        int shutdownGraceMs,
        String client,
        DbConfig db,
        int maxInFlight,
        int containerQueue,
        int qos,
        int qosSuspended,
        WorkSpec work) {

    public static final String USAGE = usage("""
            Usage: java -jar <module>.jar [--app ID] --container jetty|tomcat|netty --threads N|vN --port P --admin-port A
                   --remote http://127.0.0.1:9000 [--host 127.0.0.1] [--client-timeout-ms 10000]
                   [--client-connect-timeout-ms 2000] [--client-max-connections 0 (0 = no cap)]
                   [--client-executor-threads 2] [--accept-queue 8192] [--client jdk|reactor-netty|jetty]
                   [--shutdown-grace-ms 2000] [--fanout-pool 10] [--fanout-concurrency 16] (fan-out apps only)
                   [--max-in-flight N (0 = no limit, the default; 1..100000)]: beyond N requests in flight, a new
                   one is answered 503 at once without running application code (a Semaphore, every model alike).
                   [--container-queue N (0 = unbounded, the default)]: tomcat on platform threads only: the executor's
                   maxQueueSize; beyond N queued, Tomcat closes the new connection without an HTTP answer (no 503).
                   [--qos N (0 = off, the default) [--qos-suspended 1024]]: jetty only: Jetty's QoSHandler in front of
                   the servlet context: N requests at once, up to M more suspended (waiting, no thread held), then 503.
                   --threads N: N threads may run application code; vN: a virtual thread per request on
                   N carrier threads (JDK 21+, jetty and tomcat). --container netty: the %s app only.
                   --client: the outbound HTTP client (default jdk); the fan-out apps run on jdk only.
                   [--backend http|postgres] (default http: --remote) [--db-url postgresql://[user@]host:port/db]
                   [--db-driver jdbc|r2dbc|jdbc-executor-trap|jdbc-elastic] [--db-pool 10] [--db-acquire-timeout-ms 30000]
                   [--db-query sleep|rows] [--db-executor-threads 10] [--db-sleep-ms 1000 (sleep without ?ms=)]
                   --backend postgres needs --db-url (user default lab), not --remote. --db-driver: the app's first;
                   %s.
                   [--work "cpu=500us alloc=65536 syscalls=10" (default: none)]: per request, after the remote call
                   returns, on the thread where the model runs its code: a fixed computation of that much CPU
                   (cpu=<N>us|ms, up to 1000ms), a heap allocation (alloc=<bytes>, 64..67108864), K one-byte
                   writes to /dev/null (syscalls=<K>, up to 10000). Words space- or comma-separated, each once.""");

    /** The usage with what the catalog says filled in: the netty apps, each app's database drivers. */
    private static String usage(String template) {
        List<String> drivers = Catalog.apps().values().stream().filter(a -> !a.dbs().isEmpty())
                .map(a -> a.name() + " " + String.join("|", a.dbs())).toList();
        return template.formatted(String.join(", ", Catalog.appsOn(NETTY)),
                String.join(", ", drivers) + "; the others take no database");
    }

    /** The servlet containers: every app runs on both. */
    public static final List<String> CONTAINERS = List.of("jetty", "tomcat");
    /** Reactor Netty has no servlet API: only WebFlux runs on it. */
    public static final String NETTY = "netty";
    public static final List<String> NETTY_APPS = Catalog.appsOn(NETTY);
    static final int MAX_THREADS = 10_000;
    /** On SIGTERM, in-flight requests get this long before the client is closed forcibly. */
    public static final int DEFAULT_SHUTDOWN_GRACE_MS = 2_000;
    static final int MAX_SHUTDOWN_GRACE_MS = 60_000;
    /** remote-sleep's own cap on a sleep (its MAX_MS). */
    static final int MAX_DB_SLEEP_MS = 60_000;
    /** {@code --max-in-flight}: 0 = no limit; else 1..this. */
    static final int MAX_IN_FLIGHT = 100_000;
    /** {@code --container-queue}: 0 = unbounded; else 1..this. */
    static final int MAX_CONTAINER_QUEUE = 1_000_000;
    /** {@code --qos}: 0 = off; else 1..this (as {@link #MAX_IN_FLIGHT}). */
    static final int MAX_QOS = 100_000;
    /** {@code --qos-suspended}: 0..this (0: beyond N, 503 at once). */
    static final int MAX_QOS_SUSPENDED = 1_000_000;
    /** Jetty 12.1's own QoSHandler default for maxSuspendedRequestCount. */
    public static final int DEFAULT_QOS_SUSPENDED = 1024;
    /** {@code --client}: the JDK's HttpClient (the default, every model's control), Reactor Netty's, Jetty's. */
    public static final String JDK = "jdk";
    public static final List<String> CLIENTS = List.of(JDK, "reactor-netty", "jetty");

    /**
     * Parses flags; throws {@link IllegalArgumentException} with a one-line reason on bad input. Each
     * concern has a small parser of its own ({@link ServerFlags}, {@link ClientFlags}, {@link FanoutFlags},
     * {@link DbFlags}, {@link LimitFlags}, {@link WorkFlags}): it reads its flags, checking each value as it comes, and
     * knows its defaults; the checks across them are called here, in an order that decides which
     * mistake a command line with several is told about first.
     */
    public static LabConfig parse(String[] args, List<String> apps) {
        ServerFlags server = new ServerFlags(apps);
        ClientFlags client = new ClientFlags();
        FanoutFlags fanout = new FanoutFlags();
        DbFlags db = new DbFlags();
        LimitFlags limits = new LimitFlags();
        WorkFlags work = new WorkFlags();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) throw new IllegalArgumentException("missing value for " + flag);
            String value = args[++i];
            boolean known = server.take(flag, value) || client.take(flag, value) || fanout.take(flag, value)
                    || db.take(flag, value) || limits.take(flag, value) || work.take(flag, value);
            if (!known) throw new IllegalArgumentException("unknown option " + flag);
        }
        server.requireGiven();
        client.requireRemote(db.postgres());
        DbConfig dbConfig = db.config(server.app, client.client);
        server.checkThreads();
        // Before the JDK check: a flag the container cannot take is refused on every JDK.
        limits.check(server.container, server.virtual);
        server.requireVirtualThreadsSupported();
        client.checkApp(server.app);
        return new LabConfig(server.app, server.container, server.threads, server.virtual, server.host, server.port,
                server.adminPort, client.remote, client.timeoutMs, client.connectTimeoutMs, client.maxConnections,
                client.executorThreads, server.acceptQueue, fanout.pool, fanout.concurrency, server.shutdownGraceMs,
                client.client, dbConfig, limits.maxInFlight, limits.containerQueue, limits.qos, limits.qosSuspended, work.work);
    }

    /**
     * Why {@code --container-queue} / {@code --qos} do not apply to this container, or null. Each is the
     * protection one container offers of its own (issue 17); where it has none, the flag is refused
     * rather than printed and ignored. {@code --max-in-flight} is the one that works everywhere.
     */
    public static String containerLimitRefusal(String container, boolean virtual, int containerQueue, int qos) {
        if (containerQueue > 0) {
            switch (container) {
                case "jetty" -> {
                    return "--container-queue: Jetty's QueuedThreadPool queue must stay unbounded (its docs say so): use --qos N";
                }
                case NETTY -> {
                    return "--container-queue: Reactor Netty's server has no request queue to bound (use --max-in-flight N)";
                }
                default -> {
                    if (virtual) {
                        return "--container-queue: with --threads vN Tomcat runs a virtual thread per request and has no"
                                + " executor queue to bound (use --max-in-flight N)";
                    }
                }
            }
        }
        if (qos > 0 && !container.equals("jetty")) {
            return "--qos: QoSHandler is Jetty's; " + (container.equals(NETTY) ? "Reactor Netty" : "Tomcat")
                    + " has no such handler (use --max-in-flight N" + (container.equals("tomcat") ? ", or --container-queue N" : "") + ")";
        }
        return null;
    }

    /** Without the fan-out and shutdown flags: their defaults (K = 10 threads, C = 16 at once, 2 s grace). */
    public LabConfig(String app, String container, int threads, boolean virtualThreads, String host, int port,
            int adminPort, URI remote, int clientTimeoutMs, int clientConnectTimeoutMs, int clientMaxConnections,
            int clientExecutorThreads, int acceptQueue) {
        this(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, 10, 16,
                DEFAULT_SHUTDOWN_GRACE_MS, JDK, null, 0, 0, 0, DEFAULT_QOS_SUSPENDED, WorkSpec.NONE);
    }

    /** {@code N} or {@code vN}, N in 1..10000. */
    public static int threadCount(String raw) {
        String digits = raw.startsWith("v") ? raw.substring(1) : raw;
        try {
            int n = Integer.parseInt(digits);
            if (n >= 1 && n <= MAX_THREADS && digits.equals(String.valueOf(n))) return n;
        } catch (NumberFormatException e) {
            // the message below says what is accepted
        }
        throw new IllegalArgumentException("--threads must be N (threads) or vN (carriers of virtual threads), N in 1.."
                + MAX_THREADS + ", got '" + raw + "'");
    }

    /** A config for tests: free ports, platform threads, defaults for the rest. */
    public static LabConfig forTest(String app, String container, int threads, URI remote) {
        return new LabConfig(app, container, threads, false, "127.0.0.1", 0, 0, remote,
                10_000, 2_000, 0, 2, 8192);
    }

    /** The same with {@code --threads vN}: a virtual thread per request on {@code threads} carriers. */
    public LabConfig withVirtualThreads() {
        return new LabConfig(app, container, threads, true, host, port, adminPort, remote,
                clientTimeoutMs, clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue,
                fanoutPool, fanoutConcurrency, shutdownGraceMs, client, db, maxInFlight, containerQueue, qos, qosSuspended, work);
    }

    public LabConfig withClientTimeoutMs(int ms) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote,
                ms, clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue,
                fanoutPool, fanoutConcurrency, shutdownGraceMs, client, db, maxInFlight, containerQueue, qos, qosSuspended, work);
    }

    public LabConfig withFanout(int pool, int concurrency) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, pool, concurrency,
                shutdownGraceMs, client, db, maxInFlight, containerQueue, qos, qosSuspended, work);
    }

    public LabConfig withShutdownGraceMs(int ms) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, ms, client, db, maxInFlight, containerQueue, qos, qosSuspended, work);
    }

    /** The same on another outbound client ({@code --client}). */
    public LabConfig withClient(String name) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, shutdownGraceMs, oneOf("--client", name, CLIENTS), db, maxInFlight, containerQueue, qos, qosSuspended, work);
    }

    /** The same with {@code --client-max-connections n} (0 = no cap). */
    public LabConfig withClientMaxConnections(int n) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, n, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, shutdownGraceMs, client, db, maxInFlight, containerQueue, qos, qosSuspended, work);
    }

    /** The same on {@code --backend postgres} with {@code db} (null: the HTTP backend). */
    public LabConfig withDb(DbConfig db) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, shutdownGraceMs, client, db, maxInFlight, containerQueue, qos, qosSuspended, work);
    }

    /** The same with {@code --max-in-flight n} (0 = no limit). */
    public LabConfig withMaxInFlight(int n) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, shutdownGraceMs, client, db, intIn("--max-in-flight", String.valueOf(n), 0, MAX_IN_FLIGHT),
                containerQueue, qos, qosSuspended, work);
    }

    /** The same with {@code --container-queue n} (0 = unbounded); refused where {@link #parse} refuses it. */
    public LabConfig withContainerQueue(int n) {
        int queue = intIn("--container-queue", String.valueOf(n), 0, MAX_CONTAINER_QUEUE);
        String refused = containerLimitRefusal(container, virtualThreads, queue, qos);
        if (refused != null) throw new IllegalArgumentException(refused);
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, shutdownGraceMs, client, db, maxInFlight, queue, qos, qosSuspended, work);
    }

    /** The same with {@code --qos n --qos-suspended suspended} (n = 0: off); refused where {@link #parse} refuses it. */
    public LabConfig withQos(int n, int suspended) {
        int limit = intIn("--qos", String.valueOf(n), 0, MAX_QOS);
        int waiting = intIn("--qos-suspended", String.valueOf(suspended), 0, MAX_QOS_SUSPENDED);
        String refused = containerLimitRefusal(container, virtualThreads, containerQueue, limit);
        if (refused != null) throw new IllegalArgumentException(refused);
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, shutdownGraceMs, client, db, maxInFlight, containerQueue, limit, waiting, work);
    }

    /** The same with {@code --work} ({@link WorkSpec#NONE}: no work). */
    public LabConfig withWork(WorkSpec spec) {
        return new LabConfig(app, container, threads, virtualThreads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, fanoutPool,
                fanoutConcurrency, shutdownGraceMs, client, db, maxInFlight, containerQueue, qos, qosSuspended, spec);
    }

    /** {@code --threads} as given: {@code 200} or {@code v1}. */
    public String threadsFlag() {
        return (virtualThreads ? "v" : "") + threads;
    }

    /**
     * The container's own async timeout, set above the client timeout on purpose: a slow remote
     * must end as the client's 504, not as the container's timeout.
     */
    public long asyncTimeoutMs() {
        return clientTimeoutMs + 5_000L;
    }

    static String oneOf(String flag, String value, List<String> allowed) {
        if (!allowed.contains(value)) {
            throw new IllegalArgumentException(flag + " must be one of " + String.join(", ", allowed) + ", got '" + value + "'");
        }
        return value;
    }

    public static int intIn(String name, String raw, int min, int max) {
        int value;
        try {
            value = Integer.parseInt(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer in " + min + ".." + max + ", got '" + raw + "'");
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + value);
        }
        return value;
    }
}
