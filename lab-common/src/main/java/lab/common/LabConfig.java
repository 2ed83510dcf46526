package lab.common;

import java.net.URI;
import java.util.List;

/**
 * Everything one app process is configured with, parsed from its flags and printed first at start,
 * so every log line and result says what was measured.
 *
 * @param threads how many threads may run application code: the container's request pool
 *                (see {@link Container#describe}); the one place a later "virtual" mode plugs in
 * @param fanoutPool        K, the executor / dispatcher threads of the fan-out apps ({@code /fanout})
 * @param fanoutConcurrency C, how many calls a fan-out app's flatMap / flatMapMerge runs at once
 */
public record LabConfig(
        String app,
        String container,
        int threads,
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
        int fanoutConcurrency) {

    public static final String USAGE = """
            Usage: java -jar <module>.jar [--app ID] --container jetty|tomcat --threads N --port P --admin-port A
                   --remote http://127.0.0.1:9000 [--host 127.0.0.1] [--client-timeout-ms 10000]
                   [--client-connect-timeout-ms 2000] [--client-max-connections 0 (0 = no cap)]
                   [--client-executor-threads 2] [--accept-queue 8192]
                   [--fanout-pool 10] [--fanout-concurrency 16] (fan-out apps only)""";

    public static final List<String> CONTAINERS = List.of("jetty", "tomcat");

    /** Parses flags; throws {@link IllegalArgumentException} with a one-line reason on bad input. */
    public static LabConfig parse(String[] args, List<String> apps) {
        String app = apps.size() == 1 ? apps.get(0) : null;
        String container = null;
        Integer threads = null;
        String host = "127.0.0.1";
        Integer port = null;
        Integer adminPort = null;
        URI remote = null;
        int clientTimeoutMs = 10_000;
        int connectTimeoutMs = 2_000;
        int maxConnections = 0;
        int executorThreads = 2;
        int acceptQueue = 8192;
        int fanoutPool = 10;
        int fanoutConcurrency = 16;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) throw new IllegalArgumentException("missing value for " + flag);
            String value = args[++i];
            switch (flag) {
                case "--app" -> app = oneOf(flag, value, apps);
                case "--container" -> container = oneOf(flag, value, CONTAINERS);
                case "--threads" -> threads = intIn(flag, value, 1, 10_000);
                case "--host" -> host = value;
                case "--port" -> port = intIn(flag, value, 0, 65535);
                case "--admin-port" -> adminPort = intIn(flag, value, 0, 65535);
                case "--remote" -> remote = httpUri(flag, value);
                case "--client-timeout-ms" -> clientTimeoutMs = intIn(flag, value, 1, 600_000);
                case "--client-connect-timeout-ms" -> connectTimeoutMs = intIn(flag, value, 1, 600_000);
                case "--client-max-connections" -> maxConnections = intIn(flag, value, 0, 1_000_000);
                case "--client-executor-threads" -> executorThreads = intIn(flag, value, 1, 1_000);
                case "--accept-queue" -> acceptQueue = intIn(flag, value, 1, 65535);
                case "--fanout-pool" -> fanoutPool = intIn(flag, value, 1, 10_000);
                case "--fanout-concurrency" -> fanoutConcurrency = intIn(flag, value, 1, 10_000);
                default -> throw new IllegalArgumentException("unknown option " + flag);
            }
        }
        if (app == null) throw new IllegalArgumentException("missing --app (one of " + String.join(", ", apps) + ")");
        if (container == null) throw new IllegalArgumentException("missing --container (jetty or tomcat)");
        if (threads == null) throw new IllegalArgumentException("missing --threads");
        if (port == null) throw new IllegalArgumentException("missing --port");
        if (adminPort == null) throw new IllegalArgumentException("missing --admin-port");
        if (remote == null) throw new IllegalArgumentException("missing --remote");
        return new LabConfig(app, container, threads, host, port, adminPort, remote,
                clientTimeoutMs, connectTimeoutMs, maxConnections, executorThreads, acceptQueue,
                fanoutPool, fanoutConcurrency);
    }

    /** Without the fan-out flags: their defaults (K = 10 threads, C = 16 at once). */
    public LabConfig(String app, String container, int threads, String host, int port, int adminPort, URI remote,
            int clientTimeoutMs, int clientConnectTimeoutMs, int clientMaxConnections, int clientExecutorThreads,
            int acceptQueue) {
        this(app, container, threads, host, port, adminPort, remote, clientTimeoutMs, clientConnectTimeoutMs,
                clientMaxConnections, clientExecutorThreads, acceptQueue, 10, 16);
    }

    /** A config for tests: free ports, defaults for the rest. */
    public static LabConfig forTest(String app, String container, int threads, URI remote) {
        return new LabConfig(app, container, threads, "127.0.0.1", 0, 0, remote,
                10_000, 2_000, 0, 2, 8192);
    }

    public LabConfig withClientTimeoutMs(int ms) {
        return new LabConfig(app, container, threads, host, port, adminPort, remote,
                ms, clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue,
                fanoutPool, fanoutConcurrency);
    }

    public LabConfig withFanout(int pool, int concurrency) {
        return new LabConfig(app, container, threads, host, port, adminPort, remote, clientTimeoutMs,
                clientConnectTimeoutMs, clientMaxConnections, clientExecutorThreads, acceptQueue, pool, concurrency);
    }

    /**
     * The container's own async timeout, set above the client timeout on purpose: a slow remote
     * must end as the client's 504, not as the container's timeout.
     */
    public long asyncTimeoutMs() {
        return clientTimeoutMs + 5_000L;
    }

    private static String oneOf(String flag, String value, List<String> allowed) {
        if (!allowed.contains(value)) {
            throw new IllegalArgumentException(flag + " must be one of " + String.join(", ", allowed) + ", got '" + value + "'");
        }
        return value;
    }

    static int intIn(String name, String raw, int min, int max) {
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

    private static URI httpUri(String flag, String raw) {
        try {
            URI uri = URI.create(raw.endsWith("/") ? raw.substring(0, raw.length() - 1) : raw);
            if (!"http".equals(uri.getScheme()) || uri.getHost() == null) throw new IllegalArgumentException();
            return uri;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + " must be an http://host:port URL, got '" + raw + "'");
        }
    }
}
