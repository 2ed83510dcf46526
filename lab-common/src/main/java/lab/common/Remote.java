package lab.common;

import java.io.IOException;
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

    private final LabConfig config;
    private final Stats stats;
    private final ExecutorService executor;
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
        HttpClient jdk = HttpClient.newBuilder()
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

    @Override
    public void close() {
        // HttpClient is AutoCloseable from JDK 21 on; on 17 its selector thread ends with the JVM.
        if (client instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                // closing is best effort
            }
        }
        executor.shutdownNow();
    }

    /** The remote answered, but not 200: a bad gateway from our side. */
    public static final class RemoteStatusException extends RuntimeException {
        public RemoteStatusException(int status) {
            super("remote answered HTTP " + status);
        }
    }
}
