package lab.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Issue 17: the fault schedule (--fault, POST/DELETE/GET /fault). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FaultScheduleTest {

    private RemoteSleep remote;
    private ExecutorService pool;
    private HttpClient http;

    @BeforeEach
    void start() throws Exception {
        remote = RemoteSleep.start("127.0.0.1", 0, 200);
        pool = Executors.newFixedThreadPool(2);
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(pool)
                .connectTimeout(Duration.ofSeconds(10)).build();
        get("/stats"); // a warm client: the first call's set-up must not eat into a phase
    }

    @AfterEach
    void stop() throws Exception {
        remote.close();
        pool.shutdownNow();
    }

    private URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + remote.port() + pathAndQuery);
    }

    private HttpResponse<String> get(String pathAndQuery) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(pathAndQuery)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** POST /fault?schedule=SPEC, URL-encoded unless {@code raw} (as a plain curl would send it). */
    private HttpResponse<String> post(String spec, boolean raw) throws Exception {
        String query = raw ? spec : URLEncoder.encode(spec, StandardCharsets.UTF_8);
        return http.send(HttpRequest.newBuilder(uri("/fault?schedule=" + query)).header("Authorization", bearer())
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> delete() throws Exception {
        return http.send(HttpRequest.newBuilder(uri("/fault")).header("Authorization", bearer()).DELETE().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The run's token, as the bench sends it (issue 40). */
    private String bearer() {
        return "Bearer " + remote.adminToken();
    }

    private static long number(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":(\\d+)").matcher(json);
        assertTrue(m.find(), field + " in " + json);
        return Long.parseLong(m.group(1));
    }

    private static void sleepUntil(long t0, long ms) throws InterruptedException {
        long left = t0 + TimeUnit.MILLISECONDS.toNanos(ms) - System.nanoTime();
        if (left > 0) TimeUnit.NANOSECONDS.sleep(left);
    }

    /** A call sent now: its answer and when it came, in ms after it was sent. */
    private record Timed(HttpResponse<String> response, double ms) {}

    private CompletableFuture<Timed> send(String pathAndQuery) {
        long sent = System.nanoTime();
        return http.sendAsync(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).thenApply(r -> new Timed(r, (System.nanoTime() - sent) / 1e6));
    }

    /**
     * 300ms:ok, 500ms:delay=400, 300ms:error=100, posted as curl would (not URL-encoded): a probe
     * in each phase gets the phase's behaviour, decided when it arrives (one sent at 700 ms still
     * waits 400 ms, past the phase's end at 800 ms); then healthy; the timer's recorded changes are
     * within 100 ms of the plan.
     */
    @Test
    void phasesSwitchAtTheSetTimesAndDecideAtArrival() throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<String> posted = post("300ms:ok,500ms:delay=400,300ms:error=100", true);
        assertEquals(200, posted.statusCode(), posted.body());
        assertTrue(posted.body().startsWith("{\"schedule\":\"300ms:ok,500ms:delay=400,300ms:error=100\",\"startedAtMs\":"),
                posted.body());
        assertTrue(posted.body().contains("\"current\":\"ok\""), posted.body());
        sleepUntil(t0, 100);
        CompletableFuture<Timed> inOk = send("/sleep?ms=50");
        sleepUntil(t0, 450);
        CompletableFuture<Timed> inDelay = send("/sleep?ms=50");
        String statsInDelay = get("/stats").body();
        sleepUntil(t0, 700);
        CompletableFuture<Timed> lateInDelay = send("/sleep?ms=50");
        sleepUntil(t0, 950);
        CompletableFuture<Timed> inError = send("/sleep?ms=50");
        String faultInError = get("/fault").body();
        sleepUntil(t0, 1250);
        CompletableFuture<Timed> after = send("/sleep?ms=50");

        Timed ok = inOk.get(10, TimeUnit.SECONDS);
        assertEquals("slept 50 ms\n", ok.response().body());
        assertTrue(ok.ms() < 250, "ok phase: " + ok.ms() + " ms");
        assertTrue(statsInDelay.contains("\"phase\":\"delay=400\""), statsInDelay);
        for (Timed delayed : List.of(inDelay.get(10, TimeUnit.SECONDS), lateInDelay.get(10, TimeUnit.SECONDS))) {
            assertEquals(200, delayed.response().statusCode());
            assertEquals("slept 400 ms\n", delayed.response().body(), "?ms=50 is overridden by the phase");
            assertTrue(delayed.ms() >= 395 && delayed.ms() < 700, "delay phase: " + delayed.ms() + " ms");
        }
        Timed error = inError.get(10, TimeUnit.SECONDS);
        assertEquals(503, error.response().statusCode());
        assertEquals("remote fault: error phase (100 %)\n", error.response().body());
        assertTrue(error.ms() < 200, "a 503 is at once: " + error.ms() + " ms");
        assertTrue(faultInError.contains("\"current\":\"error=100\""), faultInError);
        Timed healthy = after.get(10, TimeUnit.SECONDS);
        assertEquals("slept 50 ms\n", healthy.response().body());

        String fault = get("/fault").body();
        System.out.println("GET /fault after the schedule: " + fault);
        assertTrue(fault.contains("\"current\":\"ok\""), fault);
        long startedAt = number(fault, "startedAtMs");
        Matcher change = Pattern.compile("\\{\"atMs\":(\\d+),\"phase\":\"([^\"]+)\"}").matcher(fault);
        List<String> phases = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        while (change.find()) {
            phases.add(change.group(2));
            offsets.add(Long.parseLong(change.group(1)) - startedAt);
        }
        assertEquals(List.of("ok", "delay=400", "error=100", "ok"), phases, fault);
        long[] planned = {0, 300, 800, 1100};
        for (int i = 0; i < planned.length; i++) {
            assertTrue(Math.abs(offsets.get(i) - planned[i]) <= 100,
                    phases.get(i) + " recorded at +" + offsets.get(i) + " ms, planned +" + planned[i] + ": " + fault);
        }
        assertTrue(fault.contains("{\"phase\":\"delay=400\",\"plannedStartMs\":" + (startedAt + 300) + ",\"plannedEndMs\":"
                + (startedAt + 800) + "}"), fault);
        String stats = get("/stats").body();
        assertTrue(stats.startsWith("{\"inFlight\":0,\"maxInFlight\":2,\"completed\":4,\"phase\":\"ok\",\"faultErrors\":1,\"hung\":0}"),
                stats);
    }

    /** error=50 fails exactly every 2nd arrival: 10 of 20 sequential calls. */
    @Test
    void error50FailsExactlyHalfOfTwentyArrivals() throws Exception {
        assertEquals(200, post("10s:error=50", false).statusCode());
        StringBuilder pattern = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> response = get("/sleep?ms=0");
            pattern.append(response.statusCode() == 503 ? 'x' : response.statusCode() == 200 ? '.' : '?');
        }
        assertEquals(".x".repeat(10), pattern.toString());
        String stats = get("/stats").body();
        assertEquals(10, number(stats, "faultErrors"), stats);
        assertEquals(10, number(stats, "completed"), stats);
        HttpResponse<String> deleted = delete();
        assertEquals(200, deleted.statusCode());
        assertTrue(deleted.body().startsWith("{\"schedule\":null,\"startedAtMs\":null,\"current\":\"ok\",\"changes\":"
                + "[{\"atMs\":"), deleted.body());
        assertTrue(deleted.body().contains(",\"phase\":\"error=50\"},{\"atMs\":")
                && deleted.body().trim().endsWith(",\"phase\":\"cleared\"}],\"phases\":[],\"changesDropped\":0}"), deleted.body());
        assertEquals(200, get("/sleep?ms=0").statusCode());
    }

    @Test
    void theErrorRuleIsFloorSteps() {
        int failed = 0;
        for (int i = 1; i <= 20; i++) if (FaultSchedule.fails(i, 30)) failed++;
        assertEquals(6, failed);
        for (int i = 1; i <= 7; i++) assertTrue(FaultSchedule.fails(i, 100));
        assertFalse(FaultSchedule.fails(1, 50));
        assertTrue(FaultSchedule.fails(2, 50));
    }

    private Socket sendRaw(String pathAndQuery) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), remote.port());
        socket.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return socket;
    }

    private void awaitStat(String field, long want) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String stats = "";
        while (System.nanoTime() < deadline) {
            stats = get("/stats").body();
            if (number(stats, field) == want) return;
            Thread.sleep(20);
        }
        fail(field + " is not " + want + " after 10 s: " + stats);
    }

    /** The connection is closed without a response: EOF (or a reset), quickly. */
    private static void assertAbortedWithin(Socket socket, int ms) throws IOException {
        socket.setSoTimeout(ms);
        InputStream in = socket.getInputStream();
        try {
            int read = in.read();
            assertEquals(-1, read, "a byte of a response came: " + (char) read);
        } catch (SocketTimeoutException e) {
            fail("connection still open " + ms + " ms after the schedule ended");
        } catch (IOException reset) {
            // closed under us: as good as an EOF
        }
    }

    /** hang: no answer until DELETE /fault; then the connections close without one, and hung is 0. */
    @Test
    void hangHoldsUntilDeleteThenAbortsTheConnections() throws Exception {
        assertEquals(200, post("20s:hang", false).statusCode());
        List<Socket> hung = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) hung.add(sendRaw("/sleep?ms=0"));
            awaitStat("hung", 3);
            assertTrue(get("/stats").body().contains("\"inFlight\":0,"), "hung requests are not in flight");
            hung.get(0).setSoTimeout(500);
            assertThrows(SocketTimeoutException.class, () -> hung.get(0).getInputStream().read(), "no answer while hung");
            long start = System.nanoTime();
            HttpResponse<String> deleted = delete();
            assertEquals(200, deleted.statusCode());
            for (Socket socket : hung) assertAbortedWithin(socket, 1000);
            double ms = (System.nanoTime() - start) / 1e6;
            assertTrue(ms < 1000, "aborted " + ms + " ms after DELETE");
            assertEquals(0, number(get("/stats").body(), "hung"));
            assertEquals("slept 0 ms\n", get("/sleep?ms=0").body());
        } finally {
            for (Socket socket : hung) socket.close();
        }
    }

    /** A new schedule replaces a hang one: its hung requests are aborted, the change log says cleared. */
    @Test
    void replacingAScheduleAbortsItsHungRequests() throws Exception {
        assertEquals(200, post("20s:hang", false).statusCode());
        try (Socket socket = sendRaw("/sleep?ms=0")) {
            awaitStat("hung", 1);
            HttpResponse<String> replaced = post("1s:delay=10", false);
            assertEquals(200, replaced.statusCode());
            assertAbortedWithin(socket, 1000);
            assertTrue(replaced.body().contains("\"phase\":\"hang\"},{\"atMs\":"), replaced.body());
            assertTrue(replaced.body().contains("\"phase\":\"cleared\"},{\"atMs\":"), replaced.body());
            assertTrue(replaced.body().contains("\"schedule\":\"1s:delay=10\""), replaced.body());
            assertEquals(0, number(get("/stats").body(), "hung"));
            assertEquals("slept 10 ms\n", get("/sleep?ms=0").body());
        }
    }

    /** stop(grace) with hung requests and none waiting: ends at once, not after the grace, and says so. */
    @Test
    void stopAbortsHungRequestsWithoutWaitingTheGrace() throws Exception {
        assertEquals(200, post("20s:hang", false).statusCode());
        List<Socket> hung = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) hung.add(sendRaw("/sleep?ms=0"));
            awaitStat("hung", 2);
            long start = System.nanoTime();
            String line = remote.stop(5000);
            double ms = (System.nanoTime() - start) / 1e6;
            assertTrue(line.contains("none cut short; 2 hung aborted"), line);
            assertTrue(ms < 2000, "stop took " + ms + " ms: " + line);
            for (Socket socket : hung) assertAbortedWithin(socket, 1000);
        } finally {
            for (Socket socket : hung) socket.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10x:ok", "1s:delay=99999", "1s:error=0", "1s:foo", "0s:ok", "1s:ok,", "3601s:ok", "ok"})
    void badSchedulesAre400WithAReasonAndChangeNothing(String spec) throws Exception {
        assertEquals(200, post("10s:delay=1", false).statusCode());
        String before = get("/fault").body();
        HttpResponse<String> response = post(spec, false);
        assertEquals(400, response.statusCode(), response.body());
        assertTrue(response.body().length() > 10, "a reason: " + response.body());
        System.out.println("POST /fault?schedule=" + spec + " -> 400 " + response.body().trim());
        assertEquals(before, get("/fault").body());
    }

    @Test
    void theGrammar() {
        assertEquals("300ms:ok,2s:delay=5000,1s:error=50,1s:hang",
                FaultSchedule.parse(" 300ms:ok, 2s:delay=05000,1s:error=50 ,1s:hang").spec);
        FaultSchedule schedule = FaultSchedule.parse("3599s:ok,1000ms:delay=0");
        assertEquals(3_600_000, schedule.totalMs);
        assertEquals(0, schedule.indexAt(0));
        assertEquals(0, schedule.indexAt(3_598_999_999_999L));
        assertEquals(1, schedule.indexAt(3_599_000_000_000L));
        assertEquals(-1, schedule.indexAt(3_600_000_000_000L));
        for (String bad : new String[] {"1s", "1s:", ":ok", "-1s:ok", "1.5s:ok", "1s:delay=", "1s:delay=-1", "1s:error=101",
                "1s:hang=1", "99999999999999999999s:ok", "1h:ok", "1s:ok,,1s:ok", "3600s:ok,1ms:ok"}) {
            assertThrows(IllegalArgumentException.class, () -> FaultSchedule.parse(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> RemoteSleep.start("127.0.0.1", 0, 1, "1s:nope"));
    }

    /** Issue 40: without the run's token POST and DELETE /fault answer 401 and the backend is as it was. */
    @Test
    void onlyTheBenchChangesTheSchedule() throws Exception {
        assertEquals(200, post("20s:delay=1", false).statusCode());
        String before = get("/fault").body();
        for (String auth : new String[] {null, "Bearer wrong", "Bearer " + remote.adminToken() + "x", remote.adminToken()}) {
            for (String method : new String[] {"POST", "DELETE"}) {
                HttpRequest.Builder request = HttpRequest.newBuilder(uri("/fault?schedule=10s:hang"))
                        .method(method, HttpRequest.BodyPublishers.noBody());
                if (auth != null) request.header("Authorization", auth);
                HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(401, response.statusCode(), method + " with " + auth + ": " + response.body());
                assertTrue(response.body().contains("Authorization: Bearer"), response.body());
            }
        }
        assertEquals(before, get("/fault").body(), "a refused call changed the schedule");
        assertTrue(get("/stats").body().contains("\"phase\":\"delay=1\""), get("/stats").body());
        assertEquals(200, get("/sleep?ms=0").statusCode(), "/sleep stays open");
        assertEquals(200, delete().statusCode());
    }

    @Test
    void otherMethodsStay405() throws Exception {
        assertEquals(405, http.send(HttpRequest.newBuilder(uri("/sleep")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(405, http.send(HttpRequest.newBuilder(uri("/fault")).PUT(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    private static List<String> mainCommand(String... args) {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-cp", System.getProperty("java.class.path"), "lab.remote.RemoteSleep"));
        command.addAll(List.of(args));
        return command;
    }

    @Test
    void aBadFaultFlagExits2WithTheReasonAndUsage() throws Exception {
        Process process = new ProcessBuilder(mainCommand("--fault", "10x:ok"))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String stderr = new String(process.getErrorStream().readAllBytes());
        assertTrue(process.waitFor(20, TimeUnit.SECONDS));
        assertEquals(2, process.exitValue(), stderr);
        assertTrue(stderr.startsWith("ERROR: bad duration '10x'") && stderr.contains("Usage: ")
                && stderr.contains("[--fault SPEC]"), stderr);
    }

    /** --fault starts the schedule with the server and the startup line names it. */
    @Test
    void theFaultFlagStartsTheScheduleAtStartup() throws Exception {
        ProcessBuilder builder = new ProcessBuilder(mainCommand("--port", "0", "--fault", "20s:error=100"))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().put(RemoteSleep.TOKEN_ENV, "token-from-the-environment");
        Process process = builder.start();
        try {
            String line = new BufferedReader(new InputStreamReader(process.getInputStream())).readLine();
            Matcher listen = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+) ").matcher(String.valueOf(line));
            assertTrue(listen.find(), line);
            assertTrue(line.endsWith(", fault schedule=20s:error=100 (1 phase, 20000 ms, started at startup)"), line);
            URI sleep = URI.create("http://127.0.0.1:" + listen.group(1) + "/sleep?ms=0");
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(sleep).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(503, response.statusCode(), response.body());
            // The token is the one its environment gave it (issue 40): only that one ends the fault.
            URI fault = URI.create("http://127.0.0.1:" + listen.group(1) + "/fault");
            assertEquals(401, http.send(HttpRequest.newBuilder(fault).DELETE().build(), HttpResponse.BodyHandlers.ofString())
                    .statusCode());
            assertEquals(200, http.send(HttpRequest.newBuilder(fault).header("Authorization", "Bearer token-from-the-environment")
                    .DELETE().build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(200, http.send(HttpRequest.newBuilder(sleep).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        } finally {
            process.destroy();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
