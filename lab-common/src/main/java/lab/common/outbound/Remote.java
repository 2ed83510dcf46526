package lab.common.outbound;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import lab.common.config.LabConfig;
import lab.common.db.DbFailure;
import lab.common.db.JdbcOutbound;
import lab.common.db.R2dbcOutbound;
import lab.common.stats.Stats;
import lab.common.work.Work;

/**
 * The one outbound seam every variant calls the remote through. {@code --client} picks the client
 * behind it ({@link Outbound}): the JDK's {@link HttpClient} by default ({@link JdkOutbound}, every
 * model's control, so rows differ only in the server model), or the client a user of that model
 * would pick: Reactor Netty's ({@link ReactorNettyOutbound}) or Jetty's ({@link JettyOutbound}).
 * Each is built once per process with its pool, pending queue, timeouts and threads set on purpose
 * and printed ({@link #describe}).
 *
 * <p>Each model takes the client's own idiom from here: the servlet models {@link #call} (blocking)
 * or {@link #callAsync} (a future completed by the client's callback), MVC a RestClient and WebFlux
 * a WebClient on the same client ({@link Clients}). The error mapping is the same for all three:
 * refused → 502 at once, too slow → 504, not 200 → {@link RemoteStatusException} (502).
 *
 * <p>It also holds {@code --work} ({@link #work}): what each model runs after the call returns, on
 * the thread where its code goes on; here because every model's code already holds this object.
 */
public final class Remote implements AutoCloseable {

    /** After the grace: how long a client may take to abort its calls and end its threads. */
    public static final long FORCED_CLOSE_WAIT_MS = 1_000;

    private final LabConfig config;
    private final Stats stats;
    private final Outbound out;
    private final Work work;
    /** Calls started and not yet answered, through any API (counted for the clients without a shutdown that knows). */
    private final AtomicInteger callsInFlight = new AtomicInteger();

    public Remote(LabConfig config, Stats stats) {
        this.config = config;
        this.stats = stats;
        this.work = Work.of(config.work(), stats);
        // Only the chosen client's classes load: a module without Reactor Netty or Jetty's client
        // (the fan-out apps) never touches them.
        // --backend postgres: the database behind the same two calls. Only the chosen driver's
        // classes load: an r2dbc run never touches HikariCP, nor a jdbc run R2DBC.
        if (config.db() != null) {
            this.out = config.db().driver().equals("r2dbc") ? new R2dbcOutbound(this, config) : new JdbcOutbound(this, config);
            return;
        }
        this.out = switch (config.client()) {
            case "reactor-netty" -> new ReactorNettyOutbound(this, config);
            case "jetty" -> new JettyOutbound(this, config);
            default -> new JdkOutbound(this, config);
        };
    }

    /**
     * The JDK client's idle pool and keep-alive for this JVM, set on purpose ({@link JdkOutbound#IDLE_POOL}):
     * before anything builds an HttpClient, since the JDK reads them once.
     */
    public static void pinJdkClientPool() {
        JdkOutbound.pinPool();
    }

    /** The JDK client ({@code --client jdk}), for the JDK-only paths (the fan-out apps' WebClient, ClientLeakCheck). */
    public HttpClient client() {
        if (out instanceof JdkOutbound jdk) return jdk.client();
        throw new IllegalStateException("--client " + config.client() + " has no JDK HttpClient");
    }

    /** The chosen client, for {@link Clients}' RestClient / WebClient. */
    public Outbound outbound() {
        return out;
    }

    public LabConfig config() {
        return config;
    }

    /**
     * On {@code --container netty} with {@code --client reactor-netty}: the {@code LoopResources} the
     * server must run on, because the client already does (shared); null otherwise. Typed Object so
     * that Spring's look at this bean never needs Reactor Netty on the classpath.
     */
    public Object nettyServerLoops() {
        return out.serverLoops();
    }

    public Duration timeout() {
        return Duration.ofMillis(config.clientTimeoutMs());
    }

    public Stats stats() {
        return stats;
    }

    /**
     * {@code --work}: each app calls {@code work().run()} once per answered request, after the backend's
     * answer arrived, on the thread where the model runs its code then (a no-op without the flag).
     */
    public Work work() {
        return work;
    }

    /** {@code {remote}/sleep[?ms=N]}; {@code ms} is validated with {@link #parseMs} first. */
    public URI uri(Integer ms) {
        return URI.create(config.remote() + "/sleep" + (ms == null ? "" : "?ms=" + ms));
    }

    /** Blocking: the calling thread waits for the remote (thread-per-request). */
    public String call(Integer ms) throws IOException, InterruptedException {
        return out.call(ms);
    }

    /**
     * Non-blocking: returns at once; the future completes on one of the client's threads when the
     * remote answers ({@code client-N}, Reactor Netty's event loops, Jetty's client pool). No thread
     * waits in between.
     */
    public CompletableFuture<String> callAsync(Integer ms) {
        return out.callAsync(ms);
    }

    /** Every client's answer goes through here: the thread is counted, a status other than 200 is an error. */
    String checked(int status, String body) {
        stats.clientThread();
        if (status != 200) throw new RemoteStatusException(status);
        return body;
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
    public static String fromQuery(String queryString, String name) {
        if (queryString == null) return null;
        for (String pair : queryString.split("&")) {
            if (pair.startsWith(name + "=")) return URLDecoder.decode(pair.substring(name.length() + 1), StandardCharsets.UTF_8);
        }
        return null;
    }

    /** 504 when the remote did not answer in time, 502 for anything else it got wrong. */
    public static int statusFor(Throwable failure) {
        // The database's failures come mapped by their driver (503 pool, 502 down, 504 statement
        // timeout): checked first, or the rule below would make a pool's acquire timeout a 504.
        DbFailure db = DbFailure.in(failure);
        if (db != null) return db.status();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof HttpTimeoutException || t instanceof TimeoutException) return 504;
            // Each client names its own: SocketTimeoutException (Spring's Jetty request), Netty's
            // ReadTimeoutException / ConnectTimeoutException, reactor-pool's PoolAcquireTimeoutException.
            if (t.getClass().getSimpleName().contains("Timeout")) return 504;
        }
        return 502;
    }

    /** A one-line reason for an error body. */
    public static String reasonFor(Throwable failure) {
        DbFailure db = DbFailure.in(failure);
        if (db != null) return db.getMessage();
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
        return out.describe();
    }

    /** How {@code closed} reads in the shutdown line: the HTTP client's words, or the database pool's. */
    public String describe(Closed closed) {
        return config.db() == null ? closed.toString()
                : closed.toString().replace("HTTP client", "database pool (" + config.db().driver() + ")");
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
        /** Calls were still open at the deadline: they were aborted ({@code shutdownNow()}, their connections closed). */
        FORCIBLY("HTTP client closed forcibly"),
        /** Even aborting did not end the client's threads in time (the JVM exits anyway). */
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
     * the calls in flight may finish until {@code deadlineNanos} ({@link System#nanoTime}), then
     * the client aborts the rest (their requests end as 502). How, is each client's own
     * ({@link Outbound#close}).
     */
    public Closed close(long deadlineNanos) {
        return out.close(deadlineNanos);
    }

    public void callStarted() {
        callsInFlight.incrementAndGet();
    }

    public void callEnded() {
        callsInFlight.decrementAndGet();
    }

    /**
     * For the clients whose own shutdown does not wait for their calls (Reactor Netty's, Jetty's):
     * until {@code deadlineNanos}, waits for the calls in flight to end. True when none is left.
     * Counted by {@link Outbound#call} / {@link Outbound#callAsync} and by {@link Clients}' adapters
     * up to the answer's headers (remote-sleep's body comes with them).
     */
    public boolean awaitNoCalls(long deadlineNanos) {
        while (callsInFlight.get() > 0 && System.nanoTime() < deadlineNanos) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return callsInFlight.get() == 0;
    }

    /** The remote answered, but not 200: a bad gateway from our side. */
    public static final class RemoteStatusException extends RuntimeException {
        public RemoteStatusException(int status) {
            super("remote answered HTTP " + status);
        }
    }
}
