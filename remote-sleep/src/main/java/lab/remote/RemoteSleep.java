package lab.remote;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.QuietException;
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
 * curl  http://127.0.0.1:9000/stats          # {"inFlight":0,"maxInFlight":1,"completed":1,"phase":"ok",...}
 * </pre>
 *
 * <h2>Fault schedule (issue 17)</h2>
 * A timeline of phases makes the backend degrade mid-run: {@code --fault SPEC} starts one when the
 * server has started, {@code POST /fault?schedule=SPEC} starts one now (replacing any),
 * {@code DELETE /fault} ends it, {@code GET /fault} shows it with every phase change the timer
 * recorded. SPEC is {@code DURATION:KIND[,...]}, e.g. {@code 30s:ok,10s:delay=5000,5s:error=50,5s:hang}
 * ({@link FaultSchedule}); after the last phase the remote is healthy again.
 *
 * <p><b>Decided at arrival.</b> A request's fate (its delay, a 503, a hang) is fixed by the phase it
 * arrives in, computed from the monotonic clock against the schedule's start, and never revisited:
 * a request that arrived during {@code delay=5000} waits 5 s even if the phase ends after 1 s. That
 * is what a real slow backend does to the calls already sent to it, and it is what leaves a backlog
 * in the apps after the fault, the recovery the bench wants to see. Re-deciding at each phase
 * change would end the fault with its phase, and hide that backlog.
 *
 * <p><b>Hang is bounded.</b> A hung request is held without a thread, like a sleeping one, but
 * nothing would ever answer it; left alone, every connection a hang phase took would stay open
 * for good (an app's client with no timeout would never get it back). So hung requests are held
 * only until the schedule is replaced or cleared, or the remote stops: then their connections are
 * aborted (closed without a response). {@code /stats} counts them as {@code hung}, apart from
 * {@code inFlight} (the requests a timer will answer).
 *
 * <p><b>Only the bench changes the schedule (issue 40).</b> {@code /fault} is on the port every app
 * calls, so anyone who reaches the backend could change a result mid-run: {@code POST} and
 * {@code DELETE /fault} need {@code Authorization: Bearer <token>}, the run's token the bench gives
 * this JVM in its environment ({@value #TOKEN_ENV}, never argv), else 401 and nothing changes.
 * Started by hand without one, it makes a random token it tells no one: only {@code --fault} then
 * sets a schedule. {@code GET /fault}, {@code /stats} and {@code /sleep} stay open: they change nothing.
 */
public final class RemoteSleep implements AutoCloseable {

    static final String USAGE =
            "Usage: java -jar remote-sleep.jar [--host 127.0.0.1] [--port 9000] [--delay-ms 1000] [--shutdown-grace-ms 2000]"
            + " [--fault SPEC]\n  " + FaultSchedule.GRAMMAR;
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
    /** GET /fault keeps the latest this many phase changes (older ones are counted as dropped). */
    static final int MAX_CHANGES = 10_000;
    /** The environment variable that carries the run's token (the app's admin port takes the same). */
    public static final String TOKEN_ENV = "LAB_ADMIN_TOKEN";

    private final Server server;
    private final ScheduledThreadPoolExecutor timer;
    private final String token;        // POST and DELETE /fault need it (class comment)
    private final boolean tokenGiven;  // from TOKEN_ENV, or made here and told to no one
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong faultErrors = new AtomicLong();
    private final AtomicInteger hung = new AtomicInteger();

    /** Guards {@link #fault}'s replacement and {@link #changes}. */
    private final Object faultLock = new Object();
    /** The schedule started last, null if none or cleared; read without the lock on each arrival. */
    private volatile FaultRun fault;
    private final ArrayDeque<Change> changes = new ArrayDeque<>();
    private long changesDropped;

    /** One recorded phase change: what the timer (or an admin call) saw, at its wall-clock time. */
    private record Change(long atMs, String phase) {}

    /** A request held by a hang phase, to be aborted when its schedule ends. Identity equality. */
    private static final class Held {
        final Request request;
        final Callback callback;

        Held(Request request, Callback callback) {
            this.request = request;
            this.callback = callback;
        }
    }

    /** A schedule running (or run out): its start, its arrivals per phase, its hung requests. */
    private static final class FaultRun {
        final FaultSchedule schedule;
        final long startNanos;
        final long startedAtMs;
        final AtomicLongArray arrivals;
        final Set<Held> held = ConcurrentHashMap.newKeySet();
        final List<ScheduledFuture<?>> boundaries = new ArrayList<>();
        volatile boolean closed;

        FaultRun(FaultSchedule schedule, long startNanos, long startedAtMs) {
            this.schedule = schedule;
            this.startNanos = startNanos;
            this.startedAtMs = startedAtMs;
            this.arrivals = new AtomicLongArray(schedule.phases.size());
        }

        /** The phase now (index), -1 once run out. */
        int indexAt(long nanos) {
            return schedule.indexAt(nanos - startNanos);
        }

        String labelAt(long nanos) {
            int i = indexAt(nanos);
            return i < 0 ? "ok" : schedule.phases.get(i).label();
        }
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ERROR: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (options == null) {
            System.out.println(USAGE);
            return;
        }
        RemoteSleep remote = start(options.host(), options.port(), options.delayMs(), options.faultSpec());
        int grace = options.graceMs();
        // SIGTERM / Ctrl-C: stop by a deadline and say what was cut short; whatever hangs, the
        // watchdog halts the JVM. Exit status: the JVM's 143 (SIGTERM) or 130 (SIGINT).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            startWatchdog(grace + WATCHDOG_AFTER_GRACE_MS);
            System.err.println(remote.stop(grace));
        }, "shutdown"));
        System.out.printf("remote-sleep: listening on http://%s:%d default delay=%d ms, accept queue=%d, "
                + "1 timer thread (no thread is held while a request waits), shutdownGrace=%d ms, jdk=%s, %s%n",
                options.host(), remote.port(), options.delayMs(), ACCEPT_QUEUE, grace, System.getProperty("java.version"),
                remote.faultLine());
        remote.server.join();
    }

    /** The command line: {@link #USAGE}'s flags, each checked as it is read. */
    private record Options(String host, int port, int delayMs, int graceMs, String faultSpec) {

        /** The options, or null for {@code --help}; a bad flag or value throws {@link IllegalArgumentException}. */
        static Options parse(String[] args) {
            String host = "127.0.0.1";
            int port = 9000;
            int delayMs = 1000;
            int graceMs = 2000;
            String faultSpec = null;
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                if (flag.equals("--help") || flag.equals("-h")) return null;
                if (i + 1 >= args.length) throw new IllegalArgumentException("missing value for " + flag);
                String value = args[++i];
                switch (flag) {
                    case "--host" -> host = value;
                    case "--port" -> port = intIn(flag, value, 0, 65535);
                    case "--delay-ms" -> delayMs = intIn(flag, value, 0, MAX_MS);
                    case "--shutdown-grace-ms" -> graceMs = intIn(flag, value, 0, MAX_MS);
                    case "--fault" -> faultSpec = FaultSchedule.parse(value).spec;
                    default -> throw new IllegalArgumentException("unknown option " + flag);
                }
            }
            return new Options(host, port, delayMs, graceMs, faultSpec);
        }
    }

    /** The last resort: halts the JVM (status {@link #HALTED_STATUS}) if the shutdown hook still runs after {@code ms}. */
    private static void startWatchdog(long ms) {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println("remote-sleep shutdown: still not stopped " + ms
                    + " ms after the signal; halting the JVM (exit " + HALTED_STATUS + ")");
            Runtime.getRuntime().halt(HALTED_STATUS);
        }, "shutdown-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    public static RemoteSleep start(String host, int port, int delayMs) throws Exception {
        return start(host, port, delayMs, null);
    }

    /**
     * As {@link #start(String, int, int)}, then starts the fault schedule {@code faultSpec} (none if
     * null). A bad SPEC throws {@link IllegalArgumentException} before anything is started.
     */
    public static RemoteSleep start(String host, int port, int delayMs, String faultSpec) throws Exception {
        FaultSchedule schedule = faultSpec == null ? null : FaultSchedule.parse(faultSpec);
        RemoteSleep remote = new RemoteSleep(host, port, delayMs, System.getenv(TOKEN_ENV));
        remote.server.start();
        if (schedule != null) remote.startFault(schedule);
        return remote;
    }

    private RemoteSleep(String host, int port, int delayMs, String token) {
        tokenGiven = token != null && !token.isEmpty();
        this.token = tokenGiven ? token : randomToken();
        timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sleep-timer");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true); // a replaced schedule's phase changes leave the queue at once
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
        if (path.equals("/fault")) {
            return handleFault(request, response, callback);
        }
        if (!"GET".equals(request.getMethod())) {
            return answer(response, callback, 405, "only GET is served (and POST, DELETE /fault)");
        }
        if (path.equals("/stats")) {
            return answer(response, callback, 200, statsJson());
        }
        if (!path.equals("/sleep")) {
            return answer(response, callback, 404, "no such path: " + path + " (try /sleep?ms=N, /stats or /fault)");
        }
        int ms;
        try {
            ms = parseMs(Request.extractQueryParameters(request).getValue("ms"), delayMs);
        } catch (IllegalArgumentException e) {
            return answer(response, callback, 400, e.getMessage());
        }
        return sleep(request, response, callback, ms);
    }

    /** {@code /sleep}: answered by the timer after {@code ms}, unless the fault phase at arrival says otherwise. */
    private boolean sleep(Request request, Response response, Callback callback, int ms) {
        // The fault phase at arrival decides, once and for all (see the class comment).
        FaultRun run = fault;
        int phaseIndex = run == null ? -1 : run.indexAt(System.nanoTime());
        if (phaseIndex >= 0) {
            FaultSchedule.Phase phase = run.schedule.phases.get(phaseIndex);
            switch (phase.kind()) {
                case DELAY -> ms = phase.value();
                case ERROR -> {
                    if (FaultSchedule.fails(run.arrivals.incrementAndGet(phaseIndex), phase.value())) {
                        faultErrors.incrementAndGet();
                        return answer(response, callback, 503, "remote fault: error phase (" + phase.value() + " %)");
                    }
                }
                case HANG -> {
                    hold(run, new Held(request, callback));
                    return true;
                }
                case OK -> { }
            }
        }
        int sleepMs = ms;
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        // The handler returns now; the request waits in the timer's queue, not on a thread.
        timer.schedule(() -> {
            inFlight.decrementAndGet();
            completed.incrementAndGet();
            answer(response, callback, 200, "slept " + sleepMs + " ms");
        }, sleepMs, TimeUnit.MILLISECONDS);
        return true;
    }

    /** GET shows the schedule, POST ?schedule=SPEC starts one now, DELETE ends it; each answers GET's JSON. */
    private boolean handleFault(Request request, Response response, Callback callback) {
        String method = request.getMethod();
        if ((method.equals("POST") || method.equals("DELETE")) && !authorized(request)) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer realm=\"remote-sleep\"");
            return answer(response, callback, 401, tokenGiven
                    ? method + " /fault changes the backend mid-run: it needs the header Authorization: Bearer <" + TOKEN_ENV + ">"
                    : method + " /fault changes the backend mid-run, and this remote-sleep was started without " + TOKEN_ENV
                            + ": start it with " + TOKEN_ENV + "=<a secret> in its environment and send Authorization: Bearer <it>");
        }
        switch (method) {
            case "GET" -> {
                return answer(response, callback, 200, faultJson());
            }
            case "POST" -> {
                String spec = Request.extractQueryParameters(request).getValue("schedule");
                FaultSchedule schedule;
                try {
                    schedule = FaultSchedule.parse(spec);
                } catch (IllegalArgumentException e) {
                    return answer(response, callback, 400, e.getMessage());
                }
                startFault(schedule);
                return answer(response, callback, 200, faultJson());
            }
            case "DELETE" -> {
                clearFault();
                return answer(response, callback, 200, faultJson());
            }
            default -> {
                return answer(response, callback, 405, "/fault takes GET, POST ?schedule=SPEC or DELETE");
            }
        }
    }

    /**
     * Starts the fault schedule SPEC now, replacing any (the old one's hung requests are aborted);
     * returns GET /fault's JSON. A bad SPEC throws {@link IllegalArgumentException} and changes nothing.
     */
    public String startFault(String spec) {
        startFault(FaultSchedule.parse(spec));
        return faultJson();
    }

    private void startFault(FaultSchedule schedule) {
        FaultRun old;
        FaultRun run;
        synchronized (faultLock) {
            old = fault;
            long startNanos = System.nanoTime();
            long startedAtMs = System.currentTimeMillis();
            if (old != null) retire(old, startedAtMs);
            run = new FaultRun(schedule, startNanos, startedAtMs);
            fault = run;
            record(startedAtMs, schedule.phases.get(0).label());
            List<FaultSchedule.Phase> phases = schedule.phases;
            // The timer records each change as it happens: the next phase at each boundary, ok at the end.
            for (int i = 1; i <= phases.size(); i++) {
                long atMs = i < phases.size() ? phases.get(i).startMs() : schedule.totalMs;
                String label = i < phases.size() ? phases.get(i).label() : "ok";
                long delayNanos = startNanos + TimeUnit.MILLISECONDS.toNanos(atMs) - System.nanoTime();
                run.boundaries.add(timer.schedule(() -> {
                    synchronized (faultLock) {
                        if (fault == run && !run.closed) record(System.currentTimeMillis(), label);
                    }
                }, delayNanos, TimeUnit.NANOSECONDS));
            }
        }
        if (old != null) abortHeld(old);
    }

    /** Back to healthy now: ends the schedule, aborts its hung requests; returns GET /fault's JSON. */
    public String clearFault() {
        endFault();
        return faultJson();
    }

    /** Ends the schedule if any; returns how many hung requests were aborted. */
    private int endFault() {
        FaultRun old;
        synchronized (faultLock) {
            old = fault;
            if (old == null) return 0;
            retire(old, System.currentTimeMillis());
            fault = null;
        }
        return abortHeld(old);
    }

    /** Under the lock: no more phase changes from {@code run}, no more requests held by it; says so. */
    private void retire(FaultRun run, long atMs) {
        run.closed = true;
        for (ScheduledFuture<?> boundary : run.boundaries) boundary.cancel(false);
        record(atMs, "cleared");
    }

    private void record(long atMs, String phase) {
        if (changes.size() == MAX_CHANGES) {
            changes.removeFirst();
            changesDropped++;
        }
        changes.addLast(new Change(atMs, phase));
    }

    /** Holds a request of a hang phase; if its schedule ended meanwhile, aborts it at once. */
    private void hold(FaultRun run, Held held) {
        hung.incrementAndGet();
        run.held.add(held);
        // retire() sets closed before abortHeld() drains: whichever of the two sees the other aborts it
        if (run.closed && run.held.remove(held)) abort(held);
    }

    private int abortHeld(FaultRun run) {
        int aborted = 0;
        for (Held held : run.held) {
            if (run.held.remove(held)) {
                abort(held);
                aborted++;
            }
        }
        return aborted;
    }

    /** Closes the connection without a response, then ends the request quietly (no 500 can be written). */
    private void abort(Held held) {
        hung.decrementAndGet();
        try {
            held.request.getConnectionMetaData().getConnection().getEndPoint().close();
        } finally {
            held.callback.failed(new QuietException.Exception("hung request aborted: fault schedule ended"));
        }
    }

    /**
     * GET /fault: {@code {"schedule":SPEC|null,"startedAtMs":ms|null,"current":PHASE,"changes":[{"atMs":..,
     * "phase":..},...],"phases":[{"phase":..,"plannedStartMs":..,"plannedEndMs":..},...],"changesDropped":N}}.
     * {@code changes} is every phase change since the server started (each schedule's first phase at
     * its start, the next at each boundary as the timer saw it, {@code ok} when it ran out,
     * {@code cleared} when replaced or deleted), the latest {@link #MAX_CHANGES} of them.
     */
    public String faultJson() {
        StringBuilder json = new StringBuilder(256);
        synchronized (faultLock) {
            FaultRun run = fault;
            json.append("{\"schedule\":").append(run == null ? "null" : "\"" + run.schedule.spec + "\"");
            json.append(",\"startedAtMs\":").append(run == null ? "null" : String.valueOf(run.startedAtMs));
            json.append(",\"current\":\"").append(run == null ? "ok" : run.labelAt(System.nanoTime())).append('"');
            json.append(",\"changes\":[");
            String sep = "";
            for (Change change : changes) {
                json.append(sep).append("{\"atMs\":").append(change.atMs()).append(",\"phase\":\"")
                        .append(change.phase()).append("\"}");
                sep = ",";
            }
            json.append("],\"phases\":[");
            sep = "";
            if (run != null) {
                for (FaultSchedule.Phase phase : run.schedule.phases) {
                    json.append(sep).append("{\"phase\":\"").append(phase.label()).append("\",\"plannedStartMs\":")
                            .append(run.startedAtMs + phase.startMs()).append(",\"plannedEndMs\":")
                            .append(run.startedAtMs + phase.endMs()).append('}');
                    sep = ",";
                }
            }
            json.append("],\"changesDropped\":").append(changesDropped).append('}');
        }
        return json.toString();
    }

    /** For the startup line. */
    private String faultLine() {
        FaultRun run = fault;
        return run == null ? "no fault schedule"
                : "fault schedule=" + run.schedule.spec + " (" + run.schedule.phases.size()
                        + (run.schedule.phases.size() == 1 ? " phase, " : " phases, ")
                        + run.schedule.totalMs + " ms, started at startup)";
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
        FaultRun run = fault;
        return "{\"inFlight\":" + inFlight.get() + ",\"maxInFlight\":" + maxInFlight.get()
                + ",\"completed\":" + completed.get()
                + ",\"phase\":\"" + (run == null ? "ok" : run.labelAt(System.nanoTime()))
                + "\",\"faultErrors\":" + faultErrors.get() + ",\"hung\":" + hung.get() + "}";
    }

    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** The token POST and DELETE /fault need: for in-process callers (tests). */
    public String adminToken() {
        return token;
    }

    /** True when the request carries {@code Authorization: Bearer <token>}; compared in constant time. */
    private boolean authorized(Request request) {
        String given = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        return given != null && MessageDigest.isEqual(("Bearer " + token).getBytes(StandardCharsets.UTF_8),
                given.trim().getBytes(StandardCharsets.UTF_8));
    }

    private static String randomToken() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    @Override
    public void close() throws Exception {
        endFault(); // hung requests would keep their connections to the end of server.stop()
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
        // Hung requests would never be answered: no grace for them, their connections closed now;
        // the schedule ends too, so a request on an open connection is not hung after this.
        int hungAborted = endFault();
        String hungNote = hungAborted == 0 ? "" : "; " + hungAborted + " hung aborted";
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
                        + " requests waiting at the signal, none cut short" + hungNote + jetty
                : "remote-sleep shutdown: " + cutShort + " requests waiting cut short after " + graceMsUsed
                        + " ms grace (stopped in " + tookMs + " ms)" + hungNote + jetty;
    }
}
