package lab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import lab.common.config.DbConfig;
import lab.common.config.LabConfig;
import lab.common.config.WorkSpec;

/**
 * {@code --work} end to end (issue 39), for each app module: the work runs once per request, after
 * the remote call (or the query, or the N calls of a fan-out) returned, <em>on the thread where the
 * model runs its code</em> — the point of the flag: with CPU work, it is that thread (the one
 * request thread, the event loop, the client's callback thread) that must keep up. /stats'
 * {@code workThreads} names where it ran, against the threads the model is known by:
 * <ul>
 *   <li>{@link Where#HANDLER}: the container's threads that ran the request ({@code handlerThreads}):
 *       thread per request, Servlet 3.1's dispatch back to the container, WebFlux on Netty with Reactor
 *       Netty's client (the event loops are shared);</li>
 *   <li>{@link Where#CLIENT}: the client's completion threads ({@code clientThreads}) and none of the
 *       container's: Servlet 3.0 async and MVC's futures (client-N), WebFlux on the JDK client;</li>
 *   <li>{@link Where#NAMED}: a pool of the app's own, by the prefix of its threads' names (a fan-out's
 *       dispatcher, the fire-and-forget pool, a database driver's threads).</li>
 * </ul>
 * And per request: 20 requests of {@code alloc=1 MiB} move /stats' {@code jvm.allocatedBytes} by at
 * least 20 MiB. Each module also checks its {@code lab:} line: {@code work=...} only with the flag,
 * the line otherwise the same; and a bad {@code --work} exits 2 with the usage.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class WorkContract extends RemoteFixture {

    /** The work of every cell: enough to see, little enough for a test (the CPU's calibration runs once per JVM). */
    static final WorkSpec WORK = new WorkSpec(100, 1 << 20, 3);
    static final String LINE = " work=cpu=100us,alloc=1048576,syscalls=3";
    static final int REQUESTS = 20;

    /** Where a model's code runs once the backend answered. */
    public enum Where { HANDLER, CLIENT, NAMED }

    /**
     * One app on one container.
     *
     * @param client  {@code --client} (the JDK's: {@link LabConfig#JDK})
     * @param virtual {@code --threads v1} (JDK 21+)
     * @param driver  {@code --backend postgres} with this driver, or null for remote-sleep
     * @param path    what one request asks: {@code /call?ms=20} or {@code /fanout?n=3&ms=20}
     * @param prefix  with {@link Where#NAMED}: how the names of the threads that must run the work begin
     */
    public record Cell(String app, String container, String client, boolean virtual, String driver, String path, Where where, String prefix) {

        /** A {@code /call} app on the JDK client and remote-sleep, the work on {@code where}. */
        public static Cell call(String app, String container, Where where) {
            return new Cell(app, container, LabConfig.JDK, false, null, "/call?ms=20", where, null);
        }

        /** A fan-out app ({@code /fanout?n=3&ms=20}), the work on {@code where}. */
        public static Cell fanout(String app, String container, Where where) {
            return new Cell(app, container, LabConfig.JDK, false, null, "/fanout?n=3&ms=20", where, null);
        }

        public Cell withClient(String name) {
            return new Cell(app, container, name, virtual, driver, path, where, prefix);
        }

        public Cell onVirtualThreads() {
            return new Cell(app, container, client, true, driver, path, where, prefix);
        }

        /** On PostgreSQL with {@code driver} ({@code /call?ms=20} is a 20 ms pg_sleep). */
        public Cell onPostgres(String name) {
            return new Cell(app, container, client, virtual, name, path, where, prefix);
        }

        /** Where = {@link Where#NAMED}: the threads whose names begin with {@code namePrefix}. */
        public Cell onThreadsNamed(String namePrefix) {
            return new Cell(app, container, client, virtual, driver, path, Where.NAMED, namePrefix);
        }

        @Override
        public String toString() {
            return app + " on " + container + (virtual ? " v1" : "") + (client.equals(LabConfig.JDK) ? "" : ", --client " + client)
                    + (driver == null ? "" : ", postgres " + driver) + ": on the " + (where == Where.NAMED ? prefix + "* threads" : where.name().toLowerCase() + " threads");
        }
    }

    private final Endpoint.Factory factory;
    private final List<Cell> cells;

    protected WorkContract(Endpoint.Factory factory, List<Cell> cells) {
        this.factory = factory;
        this.cells = cells;
    }

    List<Cell> cells() {
        return cells;
    }

    private LabConfig config(Cell cell) {
        LabConfig config = LabConfig.forTest(cell.app(), cell.container(), 1, remoteUri()).withClient(cell.client()).withWork(WORK);
        if (cell.driver() != null) {
            config = config.withDb(DbConfig.forTest(DbFixture.url(), cell.app(), cell.driver()).withPassword(DbFixture.password()));
        }
        return cell.virtual() ? config.withVirtualThreads() : config;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void theWorkRunsOnTheModelsThread(Cell cell) throws Exception {
        if (cell.virtual()) assumeTrue(VirtualThreads.supported(), VirtualThreads.unsupportedReason());
        if (cell.app().equals("fanout-virtual")) assumeTrue(VirtualThreads.supported(), VirtualThreads.unsupportedReason());
        try (Launcher lab = Launcher.start(config(cell), factory)) {
            assertEquals(200, get(lab, cell.path()).statusCode());   // the path warmed up
            settle(lab);
            lab.stats().reset();
            long allocated = allocatedBytes(lab);
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) calls.add(send(lab, cell.path()));
            for (CompletableFuture<HttpResponse<String>> call : calls) {
                HttpResponse<String> response = call.get(30, TimeUnit.SECONDS);
                assertEquals(200, response.statusCode(), response.body());
            }
            settle(lab);
            String stats = lab.stats().toJson();
            long grew = allocatedBytes(lab) - allocated;
            assertTrue(grew >= (long) REQUESTS * WORK.allocBytes(), cell + ": " + REQUESTS + " requests of alloc=" + WORK.allocBytes()
                    + " moved allocatedBytes by " + grew + ": " + stats);

            Set<String> work = lab.stats().workThreads();
            Set<String> handlers = lab.stats().handlerThreads();
            Set<String> clients = lab.stats().clientThreads();
            System.out.printf("%s: workThreads %s, handlerThreads %s, clientThreads %s%n", cell, work, handlers, clients);
            assertFalse(work.isEmpty(), cell + ": the work never ran: " + stats);
            assertTrue(stats.contains("\"workThreads\":["), stats);
            switch (cell.where()) {
                case HANDLER -> assertEquals(handlers, work, cell + ": " + stats);
                case CLIENT -> {
                    assertTrue(clients.containsAll(work), cell + ": the work must run on the client's threads: " + stats);
                    Set<String> both = new HashSet<>(work);
                    both.retainAll(handlers);
                    assertTrue(both.isEmpty(), cell + ": the work ran on a container thread " + both + ": " + stats);
                }
                case NAMED -> assertTrue(work.stream().allMatch(name -> name.startsWith(cell.prefix())),
                        cell + ": the work must run on " + cell.prefix() + "* threads: " + stats);
            }
        }
    }

    /** {@code work=...} in the lab: line with the flag only; without it the line is the same less that. */
    @Test
    void theLabLineSaysTheWorkOnlyWithTheFlag() throws Exception {
        Cell cell = cells.get(0);
        LabConfig worked = config(cell);
        String with;
        String without;
        String stats;
        try (Launcher lab = Launcher.start(worked, factory)) {
            with = lab.describe();
        }
        try (Launcher lab = Launcher.start(worked.withWork(WorkSpec.NONE), factory)) {
            without = lab.describe();
            stats = lab.stats().toJson();
        }
        assertTrue(with.contains(LINE + " admin=http://"), with);
        assertFalse(without.contains("work="), without);
        assertFalse(stats.contains("workThreads"), "no --work, no workThreads in /stats: " + stats);
        assertEquals(ports(without), ports(with.replace(LINE, "")));
    }

    /** A bad {@code --work} is a bad flag: ERROR, the usage, exit 2. */
    @Test
    void aBadWorkSpecExits2WithUsage() throws Exception {
        String stderr = runMain(List.of("--app", cells.get(0).app(), "--container", "jetty", "--threads", "1", "--port", "0",
                "--admin-port", "0", "--remote", "http://127.0.0.1:9", "--work", "cpu=500us cpu=1ms"), 2);
        assertTrue(stderr.startsWith("ERROR: --work: cpu given twice") && stderr.contains("Usage: ") && stderr.contains("[--work "), stderr);
    }

    /** The lab line with its ports (they differ from start to start) blanked. */
    private static String ports(String line) {
        return line.replaceAll(":\\d+", ":PORT");
    }

    /** Nothing in flight or queued, and nothing a fire-and-forget app still owes. */
    private static void settle(Launcher lab) throws InterruptedException {
        Await.drained(lab);
        Await.until("no call handed off left", () -> lab.stats().toJson(), json -> !json.matches(".*\"background\":[1-9].*"));
    }

    private static long allocatedBytes(Launcher lab) {
        Matcher m = Pattern.compile("\"allocatedBytes\":(\\d+)").matcher(lab.stats().toJson());
        assertTrue(m.find(), lab.stats().toJson());
        return Long.parseLong(m.group(1));
    }

    private CompletableFuture<HttpResponse<String>> send(Launcher lab, String path) {
        return http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.port() + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(Launcher lab, String path) throws Exception {
        return send(lab, path).get(30, TimeUnit.SECONDS);
    }
}
