package lab.remote;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The slow backend every app calls: {@code GET /sleep[?ms=N]} answers after N ms.
 *
 * <p>It must never be the bottleneck (docs/traps.md #5): a {@code Thread.sleep} mock on a
 * 200-thread server caps every test at 200 in flight. Here the request is parked without a
 * thread: a Jetty core handler returns at once and a single timer thread writes the answer when
 * the delay is up, so thousands of requests can wait at the cost of a few objects each.
 *
 * <pre>
 * java -jar remote-sleep/target/remote-sleep.jar --port 9000 --delay-ms 1000
 * curl 'http://127.0.0.1:9000/sleep?ms=300'   # "slept 300 ms" after 0.3 s
 * curl  http://127.0.0.1:9000/stats          # {"inFlight":0,"maxInFlight":1,"completed":1}
 * </pre>
 */
public final class RemoteSleep implements AutoCloseable {

    static final String USAGE =
            "Usage: java -jar remote-sleep.jar [--host 127.0.0.1] [--port 9000] [--delay-ms 1000] [--shutdown-grace-ms 2000]";
    /** Accept queue asked of the kernel; Linux caps it at net.core.somaxconn (trap 13). */
    static final int ACCEPT_QUEUE = 8192;
    static final int MAX_MS = 60_000;
    /**
     * Exit status when the watchdog halts a shutdown that hung past its deadline; a normal
     * SIGTERM ends with the JVM's 143 (128 + 15), Ctrl-C with 130.
     */
    static final int HALTED_STATUS = 3;
    /** After the grace, how long Jetty may take to close the connections before the watchdog halts. */
    static final long STOP_AFTER_GRACE_MS = 1_000;
    static final long WATCHDOG_AFTER_GRACE_MS = 3_000;

    private final Server server;
    private final ScheduledExecutorService timer;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicLong completed = new AtomicLong();

    public static void main(String[] args) throws Exception {
        String host = "127.0.0.1";
        int port = 9000;
        int delayMs = 1000;
        int graceMs = 2000;
        try {
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                if (flag.equals("--help") || flag.equals("-h")) {
                    System.out.println(USAGE);
                    return;
                }
                if (i + 1 >= args.length) throw new IllegalArgumentException("missing value for " + flag);
                String value = args[++i];
                switch (flag) {
                    case "--host" -> host = value;
                    case "--port" -> port = intIn(flag, value, 0, 65535);
                    case "--delay-ms" -> delayMs = intIn(flag, value, 0, MAX_MS);
                    case "--shutdown-grace-ms" -> graceMs = intIn(flag, value, 0, MAX_MS);
                    default -> throw new IllegalArgumentException("unknown option " + flag);
                }
            }
        } catch (IllegalArgumentException e) {
            System.err.println("ERROR: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
        }
        RemoteSleep remote = start(host, port, delayMs);
        int grace = graceMs;
        // SIGTERM / Ctrl-C: stop by a deadline and say what was cut short; whatever hangs, the
        // watchdog halts the JVM. Exit status: the JVM's 143 (SIGTERM) or 130 (SIGINT).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            Thread watchdog = new Thread(() -> {
                try {
                    Thread.sleep(grace + WATCHDOG_AFTER_GRACE_MS);
                } catch (InterruptedException e) {
                    return;
                }
                System.err.println("remote-sleep shutdown: still not stopped " + (grace + WATCHDOG_AFTER_GRACE_MS)
                        + " ms after the signal; halting the JVM (exit " + HALTED_STATUS + ")");
                Runtime.getRuntime().halt(HALTED_STATUS);
            }, "shutdown-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            System.err.println(remote.stop(grace));
        }, "shutdown"));
        System.out.printf("remote-sleep: listening on http://%s:%d default delay=%d ms, accept queue=%d, "
                + "1 timer thread (no thread is held while a request waits), shutdownGrace=%d ms, jdk=%s%n",
                host, remote.port(), delayMs, ACCEPT_QUEUE, graceMs, System.getProperty("java.version"));
        remote.server.join();
    }

    public static RemoteSleep start(String host, int port, int delayMs) throws Exception {
        RemoteSleep remote = new RemoteSleep(host, port, delayMs);
        remote.server.start();
        return remote;
    }

    private RemoteSleep(String host, int port, int delayMs) {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sleep-timer");
            t.setDaemon(true);
            return t;
        });
        QueuedThreadPool pool = new QueuedThreadPool(200, 8);
        pool.setName("remote");
        server = new Server(pool);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost(host);
        connector.setPort(port);
        connector.setAcceptQueueSize(ACCEPT_QUEUE);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract.NonBlocking() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                return RemoteSleep.this.handle(request, response, callback, delayMs);
            }
        });
    }

    private boolean handle(Request request, Response response, Callback callback, int delayMs) {
        String path = Request.getPathInContext(request);
        if (!"GET".equals(request.getMethod())) {
            return answer(response, callback, 405, "only GET is served");
        }
        if (path.equals("/stats")) {
            return answer(response, callback, 200, statsJson());
        }
        if (!path.equals("/sleep")) {
            return answer(response, callback, 404, "no such path: " + path + " (try /sleep?ms=N or /stats)");
        }
        int ms;
        try {
            ms = parseMs(Request.extractQueryParameters(request).getValue("ms"), delayMs);
        } catch (IllegalArgumentException e) {
            return answer(response, callback, 400, e.getMessage());
        }
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        // The handler returns now; the request waits in the timer's queue, not on a thread.
        timer.schedule(() -> {
            inFlight.decrementAndGet();
            completed.incrementAndGet();
            answer(response, callback, 200, "slept " + ms + " ms");
        }, ms, TimeUnit.MILLISECONDS);
        return true;
    }

    /** {@code ms} must be an integer in 0..60000; absent means the default delay. */
    public static int parseMs(String raw, int defaultMs) {
        if (raw == null) return defaultMs;
        return intIn("ms", raw, 0, MAX_MS);
    }

    private static int intIn(String name, String raw, int min, int max) {
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

    private static boolean answer(Response response, Callback callback, int status, String body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE,
                body.startsWith("{") ? "application/json" : "text/plain; charset=utf-8");
        Content.Sink.write(response, true, body + "\n", callback);
        return true;
    }

    public String statsJson() {
        return "{\"inFlight\":" + inFlight.get() + ",\"maxInFlight\":" + maxInFlight.get()
                + ",\"completed\":" + completed.get() + "}";
    }

    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.stop();
        timer.shutdownNow();
    }

    /**
     * Stops by a deadline: no new connections at once, the requests waiting may still be answered
     * for {@code graceMs}, then the rest are cut short (their connections closed). Returns one
     * line saying so. Bounded: grace + {@link #STOP_AFTER_GRACE_MS}.
     */
    String stop(int graceMs) {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(graceMs);
        int waitingAtStart = inFlight.get();
        for (var connector : server.getConnectors()) {
            if (connector instanceof ServerConnector network) network.close(); // stop accepting
        }
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        int cutShort = inFlight.get();
        long graceMsUsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        Thread stop = new Thread(() -> {
            try {
                close();
            } catch (Exception e) {
                System.err.println("WARN: stopping remote-sleep: " + e);
            }
        }, "shutdown-jetty");
        stop.setDaemon(true);
        stop.start();
        try {
            stop.join(STOP_AFTER_GRACE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        String jetty = stop.isAlive() ? "; jetty still stopping, left to the JVM's exit" : "";
        return cutShort == 0
                ? "remote-sleep shutdown: stopped in " + tookMs + " ms (grace " + graceMs + " ms): " + waitingAtStart
                        + " requests waiting at the signal, none cut short" + jetty
                : "remote-sleep shutdown: " + cutShort + " requests waiting cut short after " + graceMsUsed
                        + " ms grace (stopped in " + tookMs + " ms)" + jetty;
    }
}
