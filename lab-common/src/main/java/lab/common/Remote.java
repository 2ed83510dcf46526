package lab.common;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one client transport every variant uses: the JDK {@link HttpClient}, built once per process
 * with every limit set on purpose, so rows differ only in the server model.
 *
 * <ul>
 *   <li>HTTP/1.1, no per-host connection cap (docs/traps.md #1); {@code --client-max-connections N}
 *       adds one on purpose, to show what a pool of N does to a 1 s backend.</li>
 *   <li>An explicit, named executor (trap 9): the client's internal work and our completions run
 *       on {@code client-N} threads, which {@code clientThreads} in /stats then names.</li>
 *   <li>Connect and request timeouts: refused → 502 at once, too slow → 504.</li>
 * </ul>
 */
public final class Remote implements AutoCloseable {

    /**
     * {@code HttpClient.shutdown()}, {@code shutdownNow()}, {@code awaitTermination(Duration)}:
     * JDK 21+, reached by reflection (the lab builds with {@code --release 17}); null on 17.
     */
    private static final MethodHandle SHUTDOWN = clientMethod("shutdown", MethodType.methodType(void.class));
    private static final MethodHandle SHUTDOWN_NOW = clientMethod("shutdownNow", MethodType.methodType(void.class));
    private static final MethodHandle AWAIT_TERMINATION =
            clientMethod("awaitTermination", MethodType.methodType(boolean.class, Duration.class));
    /** After {@code shutdownNow}, how long the client's selector thread may take to end. */
    static final long FORCED_CLOSE_WAIT_MS = 1_000;

    private final LabConfig config;
    private final Stats stats;
    private final ExecutorService executor;
    /** The JDK client itself: what {@link #close} shuts down ({@link CappedHttpClient} only wraps it). */
    private final HttpClient jdk;
    private final HttpClient client;

    public Remote(LabConfig config, Stats stats) {
        this.config = config;
        this.stats = stats;
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

    /** The configured client, for RestClient / WebClient to wrap. */
    public HttpClient client() {
        return client;
    }

    public Duration timeout() {
        return Duration.ofMillis(config.clientTimeoutMs());
    }

    public Stats stats() {
        return stats;
    }

    /** {@code {remote}/sleep[?ms=N]}; {@code ms} is validated with {@link #parseMs} first. */
    public URI uri(Integer ms) {
        return URI.create(config.remote() + "/sleep" + (ms == null ? "" : "?ms=" + ms));
    }

    /** Blocking: the calling thread waits for the remote (thread-per-request). */
    public String call(Integer ms) throws IOException, InterruptedException {
        HttpResponse<String> response = client.send(request(ms), HttpResponse.BodyHandlers.ofString());
        return body(response);
    }

    /**
     * Non-blocking: returns at once; the future completes on a {@code client-N} thread when the
     * remote answers. No thread waits in between.
     */
    public CompletableFuture<String> callAsync(Integer ms) {
        return client.sendAsync(request(ms), HttpResponse.BodyHandlers.ofString())
                .thenApplyAsync(this::body, executor);
    }

    private HttpRequest request(Integer ms) {
        return HttpRequest.newBuilder(uri(ms)).timeout(timeout()).GET().build();
    }

    private String body(HttpResponse<String> response) {
        stats.clientThread();
        if (response.statusCode() != 200) {
            throw new RemoteStatusException(response.statusCode());
        }
        return response.body();
    }

    /** {@code ms} as the remote accepts it: absent, or an integer in 0..60000. */
    public static Integer parseMs(String raw) {
        return raw == null ? null : LabConfig.intIn("ms", raw, 0, 60_000);
    }

    /**
     * {@code ms} from the query string alone. {@code getParameter} would also parse a
     * form-encoded POST body, reading it blocking: exactly what a Servlet 3.1 app must not do.
     */
    public static String msFromQuery(String queryString) {
        return fromQuery(queryString, "ms");
    }

    /** The first value of {@code name} in a raw query string, decoded; null when absent. */
    static String fromQuery(String queryString, String name) {
        if (queryString == null) return null;
        for (String pair : queryString.split("&")) {
            if (pair.startsWith(name + "=")) return URLDecoder.decode(pair.substring(name.length() + 1), StandardCharsets.UTF_8);
        }
        return null;
    }

    /** 504 when the remote did not answer in time, 502 for anything else it got wrong. */
    public static int statusFor(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof HttpTimeoutException || t instanceof TimeoutException) return 504;
        }
        return 502;
    }

    /** A one-line reason for an error body. */
    public static String reasonFor(Throwable failure) {
        // Name the I/O failure (ConnectException, HttpTimeoutException), not the wrappers around it.
        Throwable shown = failure;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof IOException) {
                shown = t;
                break;
            }
        }
        return (statusFor(failure) == 504 ? "remote did not answer in time: " : "remote failed: ")
                + shown.getClass().getSimpleName() + (shown.getMessage() == null ? "" : " " + shown.getMessage());
    }

    /** Printed at start: every client limit, so a result never inherits a hidden cap. */
    public String describe() {
        return "client=jdk-HttpClient HTTP/1.1 maxConnections="
                + (config.clientMaxConnections() > 0 ? config.clientMaxConnections() : "unlimited")
                + " connectTimeout=" + config.clientConnectTimeoutMs() + "ms"
                + " requestTimeout=" + config.clientTimeoutMs() + "ms"
                + " executor=" + config.clientExecutorThreads() + " threads (client-N)";
    }

    /** {@link #close(long)} with the configured grace ({@code --shutdown-grace-ms}) from now. */
    @Override
    public void close() {
        close(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.shutdownGraceMs()));
    }

    /** How {@link #close(long)} ended, for the one shutdown line. */
    public enum Closed {
        /** Every call the client had started ended by the deadline. */
        CLEAN("HTTP client closed"),
        /** Calls were still open at the deadline: {@code shutdownNow()} aborted them. */
        FORCIBLY("HTTP client closed forcibly"),
        /** Even {@code shutdownNow()} did not end the client's selector thread in time (the JVM exits anyway). */
        STUCK("HTTP client still not terminated " + FORCED_CLOSE_WAIT_MS + " ms after shutdownNow (its threads are daemons)"),
        /** JDK 17: no shutdown API; the client's threads are daemons and end with the JVM, calls in flight with them. */
        UNSUPPORTED("HTTP client left to the JVM's exit (JDK 17 has no HttpClient.shutdownNow)");

        private final String text;

        Closed(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /**
     * Closes the client by a deadline, never later than {@link #FORCED_CLOSE_WAIT_MS} after it:
     * no new calls from now on (they fail at once, as 502), the calls in flight may finish until
     * {@code deadlineNanos} ({@link System#nanoTime}), then {@code shutdownNow()} aborts the rest.
     * {@code HttpClient.close()} is not used: it waits for every operation the client started,
     * and one that never ends (issue 18) made it wait forever.
     */
    public Closed close(long deadlineNanos) {
        try {
            if (SHUTDOWN == null) return Closed.UNSUPPORTED;
            try {
                SHUTDOWN.invoke(jdk);
                if (await(Math.max(0, deadlineNanos - System.nanoTime()))) return Closed.CLEAN;
                SHUTDOWN_NOW.invoke(jdk);
                return await(TimeUnit.MILLISECONDS.toNanos(FORCED_CLOSE_WAIT_MS)) ? Closed.FORCIBLY : Closed.STUCK;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Closed.STUCK;
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

    /** The remote answered, but not 200: a bad gateway from our side. */
    public static final class RemoteStatusException extends RuntimeException {
        public RemoteStatusException(int status) {
            super("remote answered HTTP " + status);
        }
    }
}
