package lab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import lab.common.config.DbConfig;
import lab.common.config.LabConfig;
import lab.common.db.DbQuery;

/**
 * {@code --backend postgres} (issue 16), for each app module: the model shows with PostgreSQL as
 * the slow backend exactly as with remote-sleep. With one container thread (or v1) and a pool of
 * 20, 20 concurrent {@code pg_sleep(0.3)} calls take 20 x 0.3 = 6 s where the thread waits, and
 * well under 1.5 s where nothing does (R2DBC) or a virtual thread does (JDBC on v1); the traps —
 * blocking JDBC handed to K = 4 threads ({@code jdbc-executor-trap}, {@code jdbc-elastic}) — take
 * 20 x 0.3 / 4 = 1.5 s or more, and never more than K connections are in use: the bound is the
 * executor. The error cases (pool exhausted, PostgreSQL stopped and restarted, unreachable at
 * start) run once per driver: in sync-servlet (JDBC) and async-servlet (R2DBC).
 *
 * <p>One PostgreSQL per test JVM ({@link DbFixture}); every case is short, for the 10 minute budget.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class DbContract extends RemoteFixture {

    static final int CALLS = 20;
    static final int MS = 300;
    static final int POOL = 20;
    static final int TRAP_THREADS = 4;

    private final List<String> apps;
    private final Endpoint.Factory factory;
    private final boolean errorCases;

    /**
     * @param apps       the app ids this module serves
     * @param factory    the module's {@code App::endpoint}
     * @param errorCases run the pool-exhausted, restart and unreachable cases (once per driver: the
     *                   modules whose first app's default driver is JDBC, resp. R2DBC)
     */
    protected DbContract(List<String> apps, Endpoint.Factory factory, boolean errorCases) {
        this.apps = apps;
        this.factory = factory;
        this.errorCases = errorCases;
    }

    private static boolean sync(String app) {
        return DbConfig.driversFor(app).get(0).equals("jdbc");
    }

    private static String containerFor(String app) {
        return LabConfig.NETTY_APPS.contains(app) ? LabConfig.NETTY : "jetty";
    }

    /**
     * (app, container, threads, driver): each app with its default driver on one container per
     * family (Jetty for the servlets, Netty for WebFlux), the sync apps on 1 thread and on v1, and
     * the module's first trap driver with K = 4.
     */
    Stream<Arguments> modelCells() {
        List<Arguments> cells = new ArrayList<>();
        for (String app : apps) {
            String driver = DbConfig.driversFor(app).get(0);
            cells.add(Arguments.of(app, containerFor(app), "1", driver));
            if (sync(app)) cells.add(Arguments.of(app, containerFor(app), "v1", driver));
        }
        String first = apps.get(0);
        if (DbConfig.driversFor(first).size() > 1) cells.add(Arguments.of(first, containerFor(first), "1", DbConfig.driversFor(first).get(1)));
        return cells.stream();
    }

    private LabConfig config(String app, String container, int threads, DbConfig db) {
        return LabConfig.forTest(app, container, threads, remoteUri()).withDb(db);
    }

    private static DbConfig db(String app, String driver) {
        return DbConfig.forTest(DbFixture.url(), app, driver).withPassword(DbFixture.password());
    }

    @ParameterizedTest(name = "{0} on {1}, threads {2}, --db-driver {3}")
    @MethodSource("modelCells")
    void twentyConcurrentSleepsShowTheModel(String app, String container, String threads, String driver) throws Exception {
        boolean virtual = threads.startsWith("v");
        if (virtual) assumeTrue(VirtualThreads.supported(), "virtual threads need JDK 21+ (running " + System.getProperty("java.version") + ")");
        boolean trap = driver.startsWith("jdbc-");
        LabConfig config = config(app, container, 1, db(app, driver).withPool(POOL, 5_000).withExecutorThreads(TRAP_THREADS));
        if (virtual) config = config.withVirtualThreads();
        try (Launcher lab = Launcher.start(config, factory)) {
            assertEquals(200, get(lab, "?ms=10").statusCode()); // warm the path up
            String cell = app + " on " + container + " threads " + threads + " --db-driver " + driver;
            ModelTiming.Step reset = () -> {
                settle(lab);
                adminPost(lab, "/stats/reset");
            };
            ModelTiming.Step twenty = () -> {
                for (HttpResponse<String> response : sendConcurrently(lab, CALLS, MS)) {
                    assertEquals(200, response.statusCode(), response.body());
                    assertEquals("slept " + MS + " ms in postgres\n", response.body());
                }
            };
            String timing;
            if (trap || (sync(app) && !virtual)) {
                // Queued for K threads (or the one): a lower bound from the model, on one try.
                reset.run();
                double seconds = ModelTiming.seconds(twenty);
                timing = String.format("%d x %d ms in %.2f s", CALLS, MS, seconds);
                if (trap) {
                    // K threads, each holding a connection for the whole query: 20 x 0.3 s / 4 = 1.5 s at least.
                    assertTrue(seconds >= 1.45, cell + " took " + seconds + " s: K = " + TRAP_THREADS + " threads must bound it");
                } else {
                    assertTrue(seconds >= 5.0, cell + " took " + seconds + " s: one thread cannot wait for 20 queries at once");
                }
            } else {
                // Nothing waits (R2DBC), or a virtual thread does: against 20 x one query timed just before.
                timing = ModelTiming.muchFasterThanOneAfterAnother(cell + (virtual
                        ? ": a virtual thread waiting for PostgreSQL must not hold the carrier" : ": the one thread must not wait for PostgreSQL"),
                        CALLS, () -> assertEquals(200, get(lab, "?ms=" + MS).statusCode()), reset, twenty);
            }
            settle(lab);
            String stats = lab.stats().toJson();
            String db = stats.substring(stats.indexOf("\"db\":"));
            int peakActive = number(db, "peakActive");
            System.out.printf("db model: %s: %s, peakActive %d, %s%n", cell, timing, peakActive, db);
            if (trap) {
                assertTrue(peakActive <= TRAP_THREADS, cell + ": more connections than executor threads: " + db);
            } else if (sync(app) && !virtual) {
                assertEquals(1, peakActive, db);
            } else {
                assertTrue(peakActive >= 10, db);
            }
            assertTrue(stats.contains("\"completed\":" + CALLS + ","), stats);
            assertTrue(db.contains("\"driver\":\"" + driver + "\",\"poolSize\":" + POOL + ",\"active\":0,") && db.contains("\"errors\":0,"), db);
        }
    }

    /** The pool, not the threads, is the limit: 2 connections, 10 calls of 2 s, a 1 s acquire timeout. */
    @Test
    void poolExhaustedIs503NamingThePool() throws Exception {
        assumeTrue(errorCases, "once per driver: in sync-servlet (jdbc) and async-servlet (r2dbc)");
        String app = apps.get(0);
        // 20 threads for the thread-per-request app: the threads must not be what runs out.
        LabConfig config = config(app, containerFor(app), sync(app) ? 20 : 1, db(app, null).withPool(2, 1_000));
        try (Launcher lab = Launcher.start(config, factory)) {
            assertEquals(200, get(lab, "?ms=10").statusCode());
            long start = System.nanoTime();
            List<CompletableFuture<long[]>> arrivals = new ArrayList<>();
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                CompletableFuture<HttpResponse<String>> call = http.sendAsync(request(lab, "?ms=2000"), HttpResponse.BodyHandlers.ofString());
                calls.add(call);
                arrivals.add(call.thenApply(r -> new long[] {r.statusCode(), System.nanoTime() - start}));
            }
            int ok = 0;
            int exhausted = 0;
            StringBuilder seen = new StringBuilder();
            for (int i = 0; i < calls.size(); i++) {
                HttpResponse<String> response = calls.get(i).get(30, TimeUnit.SECONDS);
                double at = arrivals.get(i).get(30, TimeUnit.SECONDS)[1] / 1e9;
                seen.append(String.format("%d at %.2f s: %s", response.statusCode(), at, response.body()));
                if (response.statusCode() == 200) {
                    ok++;
                } else {
                    assertEquals(503, response.statusCode(), response.body());
                    assertTrue(response.body().startsWith("DB pool exhausted: no connection within 1000 ms (pool 2, active "), response.body());
                    // the 1 s acquire timeout, not the 2 s query, ends it (slack for a busy 2-core box)
                    assertTrue(at < 1.9, "503 after " + at + " s: " + seen);
                    exhausted++;
                }
            }
            System.out.printf("db pool exhausted (%s, %s): %d x 503, %d x 200: %s", app, config.db().driver(), exhausted, ok, seen);
            assertTrue(exhausted >= 6, seen.toString());
            assertEquals(10, exhausted + ok, seen.toString());
            assertEquals(200, get(lab, "?ms=10").statusCode(), "the server lives on");
            settle(lab);
            String stats = lab.stats().toJson();
            assertTrue(stats.contains("\"acquireTimeouts\":" + exhausted + ","), stats);
        }
    }

    /** PostgreSQL stopped under the app: 502 with the driver's reason, fast; restarted: served again, same app. */
    @Test
    void postgresStoppedIs502AndRestartedServesAgain() throws Exception {
        assumeTrue(errorCases, "once per driver: in sync-servlet (jdbc) and async-servlet (r2dbc)");
        String app = apps.get(0);
        LabConfig config = config(app, containerFor(app), 4, db(app, null).withPool(4, 1_000));
        try (Launcher lab = Launcher.start(config, factory)) {
            assertEquals(200, get(lab, "?ms=10").statusCode());
            DbFixture.stop();
            try {
                long start = System.nanoTime();
                HttpResponse<String> down = get(lab, "?ms=10");
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("db stopped (%s, %s): %d in %.2f s: %s", app, config.db().driver(), down.statusCode(), seconds, down.body());
                assertEquals(502, down.statusCode(), down.body());
                assertTrue(down.body().startsWith("DB ") && down.body().contains("Exception"), down.body());
                assertTrue(seconds < 2.0, "took " + seconds + " s");
            } finally {
                DbFixture.restart();
            }
            long start = System.nanoTime();
            List<String> tries = new ArrayList<>();
            int status = 0;
            while (status != 200 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
                HttpResponse<String> response = get(lab, "?ms=10");
                status = response.statusCode();
                tries.add(status + " " + response.body().strip());
                if (status != 200) Thread.sleep(200);
            }
            System.out.printf("db restarted (%s): %s after %.2f s%n", config.db().driver(), tries, (System.nanoTime() - start) / 1e9);
            assertEquals(200, status, "tries: " + tries);
            // and all of the pool again: N calls at once
            for (HttpResponse<String> response : sendConcurrently(lab, 4, 100)) assertEquals(200, response.statusCode(), response.body());
        }
    }

    /** The pool is closed by the shutdown's deadline: a query still running at its end is cut short. */
    @Test
    void poolClosesByTheDeadline() throws Exception {
        assumeTrue(errorCases, "once per driver: in sync-servlet (jdbc) and async-servlet (r2dbc)");
        String app = apps.get(0);
        Launcher lab = Launcher.start(config(app, containerFor(app), 1, db(app, null).withPool(2, 1_000)).withShutdownGraceMs(300), factory);
        CompletableFuture<HttpResponse<String>> waiting = http.sendAsync(request(lab, "?ms=5000"), HttpResponse.BodyHandlers.ofString());
        Await.until("the call in flight", () -> lab.stats().inFlight(), n -> n > 0);
        long start = System.nanoTime();
        String line = lab.stop();
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("db shutdown (%s): %.2f s: %s%n", app, seconds, line);
        assertTrue(seconds < 3.0, "stopped in " + seconds + " s: " + line);
        assertTrue(line.contains(" cut short after ") && line.contains("database pool (" + DbConfig.driversFor(app).get(0) + ") closed forcibly"), line);
        try {
            HttpResponse<String> cut = waiting.get(10, TimeUnit.SECONDS);
            assertTrue(cut.statusCode() != 200, cut.statusCode() + " " + cut.body());
        } catch (java.util.concurrent.ExecutionException e) {
            // the connection closed with the server: cut short too
        }
    }

    /** A database that cannot be reached at start: the app does not start, and says which URL and why (exit 1). */
    @Test
    void unreachableDatabaseAtStartExits1NamingTheUrl() throws Exception {
        assumeTrue(errorCases, "once per driver: in sync-servlet (jdbc) and async-servlet (r2dbc)");
        int closed;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        String url = "postgresql://lab@127.0.0.1:" + closed + "/lab";
        String stderr = runMain(List.of("--app", apps.get(0), "--container", "jetty", "--threads", "1", "--port", "0",
                "--admin-port", "0", "--backend", "postgres", "--db-url", url), 1);
        assertTrue(stderr.contains("ERROR: could not start") && stderr.contains("cannot reach " + url)
                && stderr.contains("onnect"), stderr);
    }

    /**
     * Issue 40: the lab's cluster takes lab with its password only (scram-sha-256): without it, or
     * with a wrong one, the app does not start and says why; the password is never printed.
     */
    @Test
    void theLabsClusterRefusesLabWithoutItsPassword() throws Exception {
        assumeTrue(errorCases, "once per driver: in sync-servlet (jdbc) and async-servlet (r2dbc)");
        String app = apps.get(0);
        for (String wrong : new String[] {null, "not-" + DbFixture.password()}) {
            LabConfig config = config(app, containerFor(app), 1, db(app, null).withPassword(wrong));
            Exception e = assertThrows(Exception.class, () -> Launcher.start(config, factory).close());
            assertTrue(String.valueOf(e.getMessage()).contains("cannot reach " + DbFixture.url())
                    // JDBC's words are the server's ("password authentication failed"), R2DBC's
                    // its own for a missing one ("Password must not be null"): either names it
                    && e.getMessage().toLowerCase(Locale.ROOT).contains("password"), String.valueOf(e));
        }
        DbConfig db = db(app, null);
        assertTrue(!db.toString().contains(DbFixture.password()) && db.toString().contains("password=(set)"), db.toString());
    }

    /** Bad DB flags: exit 2 with ERROR and usage, in a JVM of its own, nothing started. */
    @Test
    void badDbFlagsExit2WithUsage() throws Exception {
        String app = apps.get(0);
        String wrongDriver = sync(app) ? "r2dbc" : "jdbc";
        String stderr = runMain(List.of("--app", app, "--container", "jetty", "--threads", "1", "--port", "0", "--admin-port", "0",
                "--backend", "postgres", "--db-url", "postgresql://lab@127.0.0.1:9/lab", "--db-driver", wrongDriver), 2);
        assertTrue(stderr.startsWith("ERROR: --db-driver " + wrongDriver + " does not apply to " + app) && stderr.contains("Usage: "), stderr);
        stderr = runMain(List.of("--app", app, "--container", "jetty", "--threads", "1", "--port", "0", "--admin-port", "0",
                "--backend", "postgres", "--db-url", "postgresql://lab@127.0.0.1:9/lab", "--db-pool", "0"), 2);
        assertTrue(stderr.startsWith("ERROR: --db-pool must be in 1..10000") && stderr.contains("Usage: "), stderr);
    }

    /** The rest of the bad DB flags, parsed in this JVM (what main does before it exits 2). */
    @Test
    void badDbFlagsAreRefusedWithTheReason() {
        String app = apps.get(0);
        String base = "--app " + app + " --container jetty --threads 1 --port 0 --admin-port 0 ";
        String pg = base + "--backend postgres --db-url postgresql://lab@127.0.0.1:5432/lab ";
        List<String[]> bad = new ArrayList<>();
        bad.add(new String[] {base + "--remote http://127.0.0.1:9 --backend mysql", "--backend must be one of http, postgres"});
        bad.add(new String[] {base + "--backend postgres", "--backend postgres needs --db-url"});
        bad.add(new String[] {base + "--backend postgres --db-url http://x", "--db-url must be postgresql://"});
        bad.add(new String[] {base + "--backend postgres --db-url postgresql://127.0.0.1/lab", "--db-url must be postgresql://"});
        bad.add(new String[] {pg + "--db-pool 0", "--db-pool must be in 1..10000"});
        bad.add(new String[] {pg + "--db-pool x", "--db-pool must be an integer"});
        bad.add(new String[] {pg + "--db-query foo", "--db-query must be one of sleep, rows"});
        bad.add(new String[] {pg + "--db-acquire-timeout-ms 100", "--db-acquire-timeout-ms must be in 250.."});
        bad.add(new String[] {pg + "--db-driver nope", "--db-driver must be one of"});
        bad.add(new String[] {pg + "--db-sleep-ms -1", "--db-sleep-ms must be in 0..60000"});
        bad.add(new String[] {base + "--remote http://127.0.0.1:9 --db-pool 5", "--db-pool needs --backend postgres"});
        for (String driver : DbConfig.DRIVERS) {
            if (!DbConfig.driversFor(app).contains(driver)) bad.add(new String[] {pg + "--db-driver " + driver, "does not apply to " + app});
        }
        for (String[] c : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LabConfig.parse(c[0].split(" "), apps), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + " -> " + e.getMessage());
        }
        // and the good ones: the family's default driver, the user from the URL or lab
        LabConfig ok = LabConfig.parse((pg + "--db-pool 3").split(" "), apps);
        assertEquals(DbConfig.driversFor(app).get(0), ok.db().driver());
        assertEquals("lab", ok.db().user());
        assertEquals(3, ok.db().pool());
        assertEquals(DbConfig.DEFAULT_SLEEP_MS, ok.db().sleepMs());
        // the bench's SLEEP_MS: what /call without ?ms= sleeps in PostgreSQL
        assertEquals(200, LabConfig.parse((pg + "--db-sleep-ms 200").split(" "), apps).db().sleepMs());
        assertEquals("slept 200 ms in postgres\n", DbQuery.slept(LabConfig.parse((pg + "--db-sleep-ms 200").split(" "), apps).db(), null));
        assertEquals(null, LabConfig.parse((base + "--remote http://127.0.0.1:9").split(" "), apps).db());
    }

    private static HttpRequest request(Launcher lab, String query) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.port() + "/call" + query)).timeout(Duration.ofSeconds(30)).build();
    }

    private HttpResponse<String> get(Launcher lab, String query) throws Exception {
        return http.send(request(lab, query), HttpResponse.BodyHandlers.ofString());
    }

    private List<HttpResponse<String>> sendConcurrently(Launcher lab, int count, int ms) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < count; i++) calls.add(http.sendAsync(request(lab, "?ms=" + ms), HttpResponse.BodyHandlers.ofString()));
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> call : calls) responses.add(call.get(30, TimeUnit.SECONDS));
        return responses;
    }

    /**
     * Every request finished and every connection back in the pool, as /stats counts them. Not
     * the same moment: R2DBC's connection goes back after the answer left, so a single read once
     * saw {@code "active":1} with all 20 of r2dbc-pool's own connections idle (issue 25).
     */
    private static void settle(Launcher lab) throws InterruptedException {
        Await.drained(lab);
        Await.until("every DB connection back in the pool (/stats db.active 0)", () -> {
            String json = lab.stats().toJson();
            return json.substring(json.indexOf("\"db\":"));
        }, db -> db.contains("\"active\":0,"));
    }

    /** A state-changing admin call, as the bench makes it: with the run's token (issue 40); it must answer 200. */
    private void adminPost(Launcher lab, String path) throws Exception {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.adminPort() + path))
                .header("Authorization", "Bearer " + lab.adminToken())
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), path + ": " + answer.body());
    }

    private static int number(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":(-?\\d+)").matcher(json);
        assertTrue(m.find(), field + " in " + json);
        return Integer.parseInt(m.group(1));
    }
}
