package lab.common.outbound;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import lab.common.config.LabConfig;

/**
 * {@code --client jdk} (the default, and every model's control): the JDK {@link HttpClient}, built
 * once per process with every limit set on purpose, so rows differ only in the server model.
 *
 * <ul>
 *   <li>HTTP/1.1, no per-host connection cap (docs/traps.md #1); {@code --client-max-connections N}
 *       adds one on purpose, to show what a pool of N does to a 1 s backend.</li>
 *   <li>An explicit, named executor (trap 9): the client's internal work and our completions run
 *       on {@code client-N} threads, which {@code clientThreads} in /stats then names.</li>
 *   <li>Connect and request timeouts: refused → 502 at once, too slow → 504.</li>
 *   <li>Its idle connections capped at {@value #IDLE_POOL} and kept alive {@value #KEEP_ALIVE_S} s, for the
 *       whole JVM ({@link #pinPool}): the JDK's own defaults are no cap, and 1200 s on JDK 17 but 30 s on 25.</li>
 * </ul>
 */
final class JdkOutbound implements Outbound {

    /**
     * {@code HttpClient.shutdown()}, {@code shutdownNow()}, {@code awaitTermination(Duration)}:
     * JDK 21+, reached by reflection (the lab builds with {@code --release 17}); null on 17.
     */
    private static final MethodHandle SHUTDOWN = clientMethod("shutdown", MethodType.methodType(void.class));
    private static final MethodHandle SHUTDOWN_NOW = clientMethod("shutdownNow", MethodType.methodType(void.class));
    private static final MethodHandle AWAIT_TERMINATION =
            clientMethod("awaitTermination", MethodType.methodType(boolean.class, Duration.class));

    /**
     * The idle connections the JDK client keeps ({@code jdk.httpclient.connectionPoolSize}; beyond it the
     * oldest idle one is closed). With no cap (the JDK's default) it keeps every connection a burst
     * opened for the JVM's life: it reuses the longest-idle first, so under a steady load none is idle
     * long enough to expire, and it walks its list of idle ones on every request (docs/traps.md #42: a
     * cost run's cold start left 1,000-5,000, at 26-31 ns a request each, a different count per fork).
     * 256 keeps that walk to ~7 µs (measured with 250: docs/samples/cost-client-pool250.md) and is well
     * above the jitter in the connections a steady load needs, so a steady load does not reconnect.
     */
    static final int IDLE_POOL = 256;
    /**
     * {@code jdk.httpclient.keepalive.timeout}: the JDK's default is 1200 s on 17 and 30 s on 25, so the
     * same run would keep idle connections 40x longer on 17. 20 s: below the servers' own 30 s idle
     * timeout, so the client closes an idle connection before a server would close it under a request.
     */
    static final int KEEP_ALIVE_S = 20;
    static final String POOL_PROPERTY = "jdk.httpclient.connectionPoolSize";
    static final String KEEP_ALIVE_PROPERTY = "jdk.httpclient.keepalive.timeout";

    private final Remote remote;
    private final LabConfig config;
    private final ExecutorService executor;
    /** The JDK client itself: what {@link #close} shuts down ({@link CappedHttpClient} only wraps it). */
    private final HttpClient jdk;
    private final HttpClient client;

    JdkOutbound(Remote remote, LabConfig config) {
        this.remote = remote;
        this.config = config;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(config.clientExecutorThreads(), r -> {
            Thread t = new Thread(r, "client-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.jdk = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofMillis(config.clientConnectTimeoutMs()))
                .executor(executor)
                .build();
        this.client = config.clientMaxConnections() > 0
                ? new CappedHttpClient(jdk, config.clientMaxConnections(), config.clientTimeoutMs())
                : jdk;
    }

    /**
     * Sets the JDK client's idle pool and keep-alive for this JVM unless a {@code -D} already did (a
     * user's own wins, and is printed as theirs). The JDK reads both once, when its first client is
     * built: {@code Launcher.main} calls this before anything builds one.
     */
    static void pinPool() {
        if (System.getProperty(POOL_PROPERTY) == null) System.setProperty(POOL_PROPERTY, String.valueOf(IDLE_POOL));
        if (System.getProperty(KEEP_ALIVE_PROPERTY) == null) System.setProperty(KEEP_ALIVE_PROPERTY, String.valueOf(KEEP_ALIVE_S));
    }

    /** The idle pool and keep-alive in force, as the lab line prints them. */
    static String describePool() {
        String pool = System.getProperty(POOL_PROPERTY), keepAlive = System.getProperty(KEEP_ALIVE_PROPERTY);
        return " idlePool=" + (pool == null ? "unbounded (the JDK's default)"
                        : pool.equals("0") ? "unbounded (" + POOL_PROPERTY + "=0: docs/traps.md #42)"
                        : pool + (pool.equals(String.valueOf(IDLE_POOL)) ? "" : " (-D" + POOL_PROPERTY + ")")
                            + " (beyond it the oldest idle connection is closed)")
                + " keepAlive=" + (keepAlive == null ? "the JDK's default" : keepAlive + "s");
    }

    /** The configured client, for RestClient / WebClient to wrap. */
    HttpClient client() {
        return client;
    }

    @Override
    public String call(Integer ms) throws IOException, InterruptedException {
        HttpResponse<String> response = client.send(request(ms), HttpResponse.BodyHandlers.ofString());
        return body(response);
    }

    /** Completes on a {@code client-N} thread when the remote answers. No thread waits in between. */
    @Override
    public CompletableFuture<String> callAsync(Integer ms) {
        return client.sendAsync(request(ms), HttpResponse.BodyHandlers.ofString())
                .thenApplyAsync(this::body, executor);
    }

    private HttpRequest request(Integer ms) {
        return HttpRequest.newBuilder(remote.uri(ms)).timeout(remote.timeout()).GET().build();
    }

    private String body(HttpResponse<String> response) {
        return remote.checked(response.statusCode(), response.body());
    }

    @Override
    public String describe() {
        return "client=jdk-HttpClient HTTP/1.1 maxConnections="
                + (config.clientMaxConnections() > 0 ? config.clientMaxConnections() : "unlimited")
                + " connectTimeout=" + config.clientConnectTimeoutMs() + "ms"
                + " requestTimeout=" + config.clientTimeoutMs() + "ms"
                + describePool()
                + " executor=" + config.clientExecutorThreads() + " threads (client-N)";
    }

    /**
     * No new calls from now on (they fail at once, as 502), the calls in flight may finish until
     * {@code deadlineNanos}, then {@code shutdownNow()} aborts the rest. {@code HttpClient.close()}
     * is not used: it waits for every operation the client started, and one that never ends
     * (issue 18) made it wait forever.
     */
    @Override
    public Remote.Closed close(long deadlineNanos) {
        try {
            if (SHUTDOWN == null) return Remote.Closed.UNSUPPORTED;
            try {
                SHUTDOWN.invoke(jdk);
                if (await(Math.max(0, deadlineNanos - System.nanoTime()))) return Remote.Closed.CLEAN;
                SHUTDOWN_NOW.invoke(jdk);
                return await(TimeUnit.MILLISECONDS.toNanos(Remote.FORCED_CLOSE_WAIT_MS)) ? Remote.Closed.FORCIBLY : Remote.Closed.STUCK;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Remote.Closed.STUCK;
            } catch (Throwable e) {
                throw new IllegalStateException("closing the HTTP client", e);
            }
        } finally {
            executor.shutdownNow();
        }
    }

    private boolean await(long nanos) throws Throwable {
        return (boolean) AWAIT_TERMINATION.invoke(jdk, Duration.ofNanos(nanos));
    }

    private static MethodHandle clientMethod(String name, MethodType type) {
        try {
            return MethodHandles.publicLookup().findVirtual(HttpClient.class, name, type);
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null; // JDK 17
        }
    }
}
