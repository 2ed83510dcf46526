package lab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import lab.common.config.LabConfig;
import lab.common.stats.Admission;

/**
 * {@code --max-in-flight N} ({@link Admission}), the same flag for every model: with N = 5, a burst
 * of 20 calls of 1 s at once gets exactly 5 answers 200 and 15 answers 503, each 503 within
 * {@value #REJECT_WITHIN_MS} ms of being sent: half a call, because one that waited for a permit
 * would wait for a whole 1 s call to end (measured: 0-67 ms on a quiet 2-core box; 182-221 ms for
 * WebFlux on Netty with a CPU hog and a bench beside it, against a bound of 200 ms until
 * 2026-11-26); then
 * the same burst again behaves the same, so the 5 permits came back — each exactly once, when
 * its request completed (an async request completes long after its thread returned: releasing
 * on return would admit all 20 the second time); /stats' admission counters agree.
 *
 * <p>Each module lists the cells that cover its model families (a sync app with threads enough
 * that threads are not the limit, the same on {@code v1}, the async models on 1 thread or loop).
 * Cost: ~2.5 s a cell (two bursts of 1 s).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AdmissionContract extends RemoteFixture {

    static final int LIMIT = 5;
    static final int BURST = 20;
    static final int CALL_MS = 1000;
    static final long REJECT_WITHIN_MS = CALL_MS / 2;

    /** One app on one container: {@code threads} as {@code --threads} takes it ({@code 20}, {@code 1}, {@code v1}). */
    public record Cell(String app, String container, String threads) {
        @Override
        public String toString() {
            return app + " on " + container + " --threads " + threads;
        }
    }

    private final Endpoint.Factory factory;
    private final List<Cell> cells;
    private final Cell unlimited;

    /**
     * @param factory   the module's {@code App::endpoint}
     * @param cells     what runs with {@code --max-in-flight 5}
     * @param unlimited a thread-free cell that runs without the flag (20 at once, all 200), or null
     */
    protected AdmissionContract(Endpoint.Factory factory, List<Cell> cells, Cell unlimited) {
        this.factory = factory;
        this.cells = cells;
        this.unlimited = unlimited;
    }

    protected static Cell cell(String app, String container, String threads) {
        return new Cell(app, container, threads);
    }

    Stream<Cell> cells() {
        return cells.stream();
    }

    private LabConfig config(Cell cell) {
        boolean virtual = cell.threads().startsWith("v");
        if (virtual) {
            assumeTrue(VirtualThreads.supported(), "virtual threads need JDK 21+ (running " + System.getProperty("java.version") + ")");
        }
        LabConfig config = LabConfig.forTest(cell.app(), cell.container(),
                Integer.parseInt(virtual ? cell.threads().substring(1) : cell.threads()), remoteUri());
        return virtual ? config.withVirtualThreads() : config;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void beyondTheLimitIs503AtOnceAndThePermitsComeBack(Cell cell) throws Exception {
        try (Launcher lab = Launcher.start(config(cell).withMaxInFlight(LIMIT), factory)) {
            assertTrue(lab.describe().contains(" maxInFlight=5 (a Semaphore: beyond 5, 503 at once) "), lab.describe());
            // Warm up both paths (some of these are refused) and open the client's 20 connections,
            // so the measured 503s are not a cold JVM's or a TCP handshake's; then count from zero.
            burst(lab, 50);
            settle(lab);
            adminPost(lab, "/stats/reset");

            for (int round = 1; round <= 2; round++) {
                List<Timed> answers = burst(lab, CALL_MS);
                List<Integer> statuses = answers.stream().map(Timed::status).sorted().toList();
                assertEquals(LIMIT, statuses.stream().filter(s -> s == 200).count(), cell + " round " + round + ": " + statuses);
                assertEquals(BURST - LIMIT, statuses.stream().filter(s -> s == 503).count(), cell + " round " + round + ": " + statuses);
                List<Long> rejectedMs = new ArrayList<>();
                for (Timed answer : answers) {
                    if (answer.status() == 503) {
                        assertEquals("admission: 5 requests in flight (--max-in-flight 5)\n", answer.body());
                        rejectedMs.add(answer.ms());
                    } else {
                        assertEquals("slept " + CALL_MS + " ms\n", answer.body());
                    }
                }
                rejectedMs.sort(null);
                System.out.println(cell + " round " + round + ": the 503s took " + rejectedMs + " ms");
                assertTrue(rejectedMs.get(rejectedMs.size() - 1) < REJECT_WITHIN_MS,
                        cell + " round " + round + ": the 503s took " + rejectedMs + " ms; they must not wait for anything");
                // The 200s end as their last byte leaves; the container completes them just after.
                settle(lab);
                assertEquals(0, lab.stats().admission().inFlight(), cell + " round " + round + ": permits still held");
            }

            String stats = adminGet(lab);
            String expected = "\"admission\":{\"limit\":5,\"inFlight\":0,\"peak\":5,\"admitted\":10,\"rejected\":30}";
            assertTrue(stats.contains(expected), cell + ": want " + expected + " in " + stats);
            // Refused requests ran no application code: they are neither in flight nor completed.
            assertTrue(stats.contains("\"inFlight\":0,") && stats.contains("\"completed\":10,")
                    && stats.contains("\"errors\":0,"), stats);
            assertTrue(Pattern.compile("\"heapUsedBytes\":[1-9]\\d*,").matcher(stats).find(), stats);

            HttpResponse<String> after = get(lab, 10);
            assertEquals(200, after.statusCode(), cell + ": the server lives on: " + after.body());
        }
    }

    /**
     * Clients that go away while their answer is being written (16 MB they never read) give their
     * permits back: the write fails, and Jetty then never calls an async request's onComplete
     * (SlowClientContract), so there StatsFilter's backup, Jetty's own end of the exchange, must;
     * on Netty the handler's Mono is cancelled and doFinally must. Held for good, N such clients
     * would leave a server that answers nothing but 503.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void clientsGoneMidAnswerGiveTheirPermitsBack(Cell cell) throws Exception {
        try (Launcher lab = Launcher.start(config(cell).withMaxInFlight(LIMIT), factory)) {
            List<Socket> gone = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    Socket socket = new Socket();
                    socket.setReceiveBufferSize(4096);
                    socket.connect(new InetSocketAddress("127.0.0.1", lab.port()));
                    socket.getOutputStream().write(("GET /call?ms=0&bytes=" + (16 * 1024 * 1024) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    gone.add(socket);
                }
                Await.until(cell + ": both downloads admitted (admission inFlight 2)", () -> lab.stats().admission().inFlight(), n -> n == 2);
                Thread.sleep(300); // their writes fill the sockets and stall
            } finally {
                for (Socket socket : gone) socket.close();
            }
            Await.until(cell + ": the permits of clients gone mid-answer back (admission inFlight 0)", () -> lab.stats().admission().inFlight(), n -> n == 0);
            assertEquals(200, get(lab, 10).statusCode(), cell + ": admitted again");
        }
    }

    /** Without the flag there is no limit: 20 at once on one thread, all 200, and /stats says null. */
    @Test
    void withoutTheFlagEveryCallIsAdmitted() throws Exception {
        assumeTrue(unlimited != null, "this module runs the unlimited case elsewhere");
        try (Launcher lab = Launcher.start(config(unlimited), factory)) {
            assertTrue(lab.describe().contains(" maxInFlight=none "), lab.describe());
            for (Timed answer : burst(lab, 300)) {
                assertEquals(200, answer.status(), unlimited + ": " + answer.body());
            }
            settle(lab);
            String stats = adminGet(lab);
            assertTrue(stats.contains("\"admission\":null") && stats.contains("\"heapUsedBytes\":"), stats);
            Matcher max = Pattern.compile("\"maxInFlight\":(\\d+),").matcher(stats);
            // Most of the 20 at once, as AppContract's model test allows on a box short of CPU.
            assertTrue(max.find() && Integer.parseInt(max.group(1)) >= 10, stats);
        }
    }

    /** A negative limit is a bad flag: exit 2 with the reason and the usage, as every other bad flag. */
    @Test
    void aNegativeLimitExits2WithUsage() throws Exception {
        Cell first = cells.get(0);
        String stderr = runMain(List.of("--app", first.app(), "--container", "tomcat", "--threads", "1",
                "--port", "0", "--admin-port", "0", "--remote", "http://127.0.0.1:9", "--max-in-flight", "-1"), 2);
        assertTrue(stderr.startsWith("ERROR: --max-in-flight must be in 0..100000, got -1") && stderr.contains("Usage: ")
                && stderr.contains("--max-in-flight N"), stderr);
        // The rest of the range, without a JVM each.
        for (String bad : List.of("100001", "five", "")) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> LabConfig.parse(new String[] {
                    "--app", first.app(), "--container", "tomcat", "--threads", "1", "--port", "0", "--admin-port", "0",
                    "--remote", "http://127.0.0.1:9", "--max-in-flight", bad}, List.of(first.app())));
            assertTrue(refused.getMessage().startsWith("--max-in-flight must be"), refused.getMessage());
        }
        assertEquals(0, LabConfig.parse(new String[] {"--app", first.app(), "--container", "tomcat", "--threads", "1",
                "--port", "0", "--admin-port", "0", "--remote", "http://127.0.0.1:9", "--max-in-flight", "0"},
                List.of(first.app())).maxInFlight());
    }

    /** One answer: its status, its body, and how long it took from the request's write to its last byte. */
    record Timed(int status, String body, long ms) {
    }

    /** {@value #BURST} calls at once on raw connections ({@link RawBurst}: why not an HttpClient), each parsed. */
    private static List<Timed> burst(Launcher lab, int ms) throws Exception {
        List<Timed> answers = new ArrayList<>();
        for (RawBurst.Answer a : RawBurst.send(lab, ms, BURST)) {
            if (a.failure() != null) throw a.failure();
            answers.add(parse(a.bytes(), a.ms()));
        }
        return answers;
    }

    /** An HTTP/1.1 answer read to the connection's close: status and body (de-chunked if need be). */
    private static Timed parse(byte[] answer, long ms) {
        String text = new String(answer, StandardCharsets.UTF_8);
        int headersEnd = text.indexOf("\r\n\r\n");
        assertTrue(text.startsWith("HTTP/1.1 ") && headersEnd > 0, "not an HTTP answer: " + text);
        int status = Integer.parseInt(text.substring(9, 12));
        String headers = text.substring(0, headersEnd).toLowerCase(java.util.Locale.ROOT);
        String body = text.substring(headersEnd + 4);
        if (headers.contains("transfer-encoding: chunked")) {
            StringBuilder plain = new StringBuilder();
            int at = 0;
            while (true) {
                int lineEnd = body.indexOf("\r\n", at);
                int size = Integer.parseInt(body.substring(at, lineEnd).trim(), 16);
                if (size == 0) break;
                plain.append(body, lineEnd + 2, lineEnd + 2 + size);
                at = lineEnd + 2 + size + 2;
            }
            body = plain.toString();
        }
        return new Timed(status, body, ms);
    }

    private HttpResponse<String> get(Launcher lab, int ms) throws Exception {
        return http.send(request(lab, ms), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(Launcher lab, int ms) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.port() + "/call?ms=" + ms))
                .timeout(Duration.ofSeconds(30)).build();
    }

    /** Until nothing is in flight or held: a container completes a request just after its last byte. */
    private static void settle(Launcher lab) throws InterruptedException {
        Await.until("nothing in flight or held (inFlight + admission inFlight)",
                () -> lab.stats().inFlight() + lab.stats().admission().inFlight(), n -> n == 0);
    }

    private String adminGet(Launcher lab) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.adminPort() + "/stats")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** A state-changing admin call, as the bench makes it: with the run's token (issue 40); it must answer 200. */
    private void adminPost(Launcher lab, String path) throws Exception {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.adminPort() + path))
                .header("Authorization", "Bearer " + lab.adminToken())
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), path + ": " + answer.body());
    }
}
