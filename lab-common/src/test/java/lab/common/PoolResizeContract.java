package lab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

import lab.common.config.LabConfig;

/**
 * {@code POST /pool?threads=N|vN}: the bench grows a warm JVM's pool from 1 thread to the next pool
 * size, or switches it to virtual threads, instead of starting and warming a new JVM. The grown pool must be the pool a fresh start
 * would have: {@value #BURST} calls at once run one at a time before (maxInFlight 1) and all at
 * once after (maxInFlight {@value #BURST}, as many handler threads), /stats and the {@code lab:}
 * line say the new size, and what cannot be done is refused without harm. A container feature,
 * not a model one: one module (sync-servlet) runs it. Cost: ~2 s a container.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class PoolResizeContract extends RemoteFixture {

    static final int BURST = 3;
    static final int CALL_MS = 300;
    private static final Pattern MAX_IN_FLIGHT = Pattern.compile("\"maxInFlight\":(\\d+)");

    private final Endpoint.Factory factory;
    private final String app;

    /** @param app a thread-per-request app: its pool is what bounds its concurrency */
    protected PoolResizeContract(Endpoint.Factory factory, String app) {
        this.factory = factory;
        this.app = app;
    }

    @ParameterizedTest
    @ValueSource(strings = {"jetty", "tomcat"})
    void aGrownPoolRunsAsManyAtOnceAsAFreshOne(String container) throws Exception {
        try (Launcher lab = Launcher.start(LabConfig.forTest(app, container, 1, remoteUri()), factory)) {
            assertEquals(BURST, RawBurst.send(lab, 0, BURST).size());
            Await.drained(lab);
            lab.stats().reset();
            RawBurst.send(lab, CALL_MS, BURST);
            Await.drained(lab);
            assertEquals(1, maxInFlight(lab), "1 thread: one call at a time: " + lab.stats().toJson());

            HttpResponse<String> grown = post(lab, "/pool?threads=" + BURST);
            assertEquals(200, grown.statusCode(), grown.body());
            String pool = container.equals("jetty") ? "QueuedThreadPool max=" + (BURST + 1) + " (" + BURST + " for application code"
                    : "maxThreads=" + BURST + " (exec threads";
            assertTrue(grown.body().contains("threads=" + BURST + " [") && grown.body().contains(pool), grown.body());
            assertTrue(grown.body().contains(lab.describe()), "the lab: line is the app's own: " + grown.body());
            assertTrue(lab.stats().toJson().contains("\"threads\":" + BURST + ","), lab.stats().toJson());

            lab.stats().reset();
            RawBurst.send(lab, CALL_MS, BURST);
            Await.drained(lab);
            assertEquals(BURST, maxInFlight(lab), BURST + " threads: all at once: " + lab.stats().toJson());
            assertEquals(BURST, lab.stats().handlerThreads().size(), lab.stats().handlerThreads().toString());
        }
    }

    /**
     * 1 thread, then virtual threads on the 1 carrier the JVM was pinned to at start, then 3 platform
     * threads: each pool runs the burst as a fresh start of it would, on its own kind of thread.
     */
    @ParameterizedTest
    @ValueSource(strings = {"jetty", "tomcat"})
    void aPoolSwitchedToVirtualThreadsAndBackRunsAsAFreshOne(String container) throws Exception {
        assumeTrue(VirtualThreads.supported(), "virtual threads need JDK 21+");
        try (Launcher lab = Launcher.start(LabConfig.forTest(app, container, 1, remoteUri()), factory)) {
            assertEquals(BURST, RawBurst.send(lab, 0, BURST).size());
            Await.drained(lab);
            assertTrue(lab.describe().contains("[virtual threads unused; for POST /pool?threads=vN, carriers: "
                    + "jdk.virtualThreadScheduler.parallelism=1"), lab.describe());

            HttpResponse<String> switched = post(lab, "/pool?threads=v1");
            assertEquals(200, switched.statusCode(), switched.body());
            String pool = container.equals("jetty") ? "jetty VirtualThreadPool maxConcurrentTasks=unbounded" : "tomcat useVirtualThreads=true";
            assertTrue(switched.body().contains("threads=v1 [" + pool), switched.body());
            assertTrue(switched.body().contains(lab.describe()), "the lab: line is the app's own: " + switched.body());
            assertTrue(lab.stats().toJson().contains("\"threads\":\"v1\","), lab.stats().toJson());
            lab.stats().reset();
            RawBurst.send(lab, CALL_MS, BURST);
            Await.drained(lab);
            assertEquals(BURST, maxInFlight(lab), "a virtual thread each: all at once: " + lab.stats().toJson());
            assertEquals(BURST, lab.stats().virtualThreads(), lab.stats().toJson());
            assertEquals(1, lab.stats().carrierThreads().size(), lab.stats().toJson());

            HttpResponse<String> grown = post(lab, "/pool?threads=" + BURST);
            assertEquals(200, grown.statusCode(), grown.body());
            assertTrue(grown.body().contains("threads=" + BURST + " ["), grown.body());
            lab.stats().reset();
            RawBurst.send(lab, CALL_MS, BURST);
            Await.drained(lab);
            assertEquals(BURST, maxInFlight(lab), BURST + " threads: all at once: " + lab.stats().toJson());
            assertEquals(0, lab.stats().virtualThreads(), lab.stats().toJson());
            assertEquals(BURST, lab.stats().handlerThreads().size(), lab.stats().handlerThreads().toString());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"jetty", "tomcat"})
    void whatCannotBeDoneIsRefusedAndTheAppLivesOn(String container) throws Exception {
        try (Launcher lab = Launcher.start(LabConfig.forTest(app, container, 2, remoteUri()), factory)) {
            assertStatus(lab, "/pool?threads=1", 400, "the pool only grows (2 now, asked 1)");
            assertStatus(lab, "/pool?threads=abc", 400, "--threads must be N (threads) or vN (carriers of virtual threads), N in 1..10000, got 'abc'");
            assertStatus(lab, "/pool", 400, "got ''");
            assertStatus(lab, "/pool?threads=0", 400, "got '0'");
            assertStatus(lab, "/pool?threads=v0", 400, "got 'v0'");
            // the test JVM's scheduler is pinned to 1 carrier (the pom's argLine), as the bench pins a JVM it will switch
            assertStatus(lab, "/pool?threads=v2", 409, VirtualThreads.supported()
                    ? "--threads v2 needs the virtual-thread scheduler pinned to 2 carriers" : "virtual threads need JDK 21+");
            assertStatus(lab, "/pool/x?threads=3", 404, "try POST /pool?threads=N or vN");
            if (container.equals("jetty") && VirtualThreads.supported()) {
                // Jetty's pool cannot shrink to the 2 platform threads of a vN start (Tomcat's executor is replaced)
                assertStatus(lab, "/pool?threads=v1", 400, "the pool only grows (2 now, asked v1, which runs on 2 platform threads, not 3)");
            }
            // Issue 40: without the run's token, 401 and the pool as it was (checked below: "threads":2).
            HttpResponse<String> anyone = http.send(HttpRequest.newBuilder(admin(lab, "/pool?threads=3"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, anyone.statusCode(), anyone.body());
            HttpResponse<String> get = http.send(HttpRequest.newBuilder(admin(lab, "/pool?threads=3")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(405, get.statusCode(), get.body());

            CompletableFuture<HttpResponse<String>> call = http.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.port() + "/call?ms=1000"))
                            .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            Await.until("one call in flight", () -> lab.stats().inFlight(), n -> n == 1);
            assertStatus(lab, "/pool?threads=3", 409, "1 requests in flight, 0 queued: resize an idle app");
            assertEquals(200, call.get(30, TimeUnit.SECONDS).statusCode());
            Await.drained(lab);

            assertTrue(lab.stats().toJson().contains("\"threads\":2,"), "unchanged: " + lab.stats().toJson());
            assertEquals(200, post(lab, "/pool?threads=2").statusCode(), "the same size is no change, and allowed");
            assertEquals(200, http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + lab.port() + "/call?ms=0"))
                    .build(), HttpResponse.BodyHandlers.ofString()).statusCode(), "the server lives on");
        }
    }

    private void assertStatus(Launcher lab, String path, int status, String error) throws Exception {
        HttpResponse<String> answer = post(lab, path);
        assertEquals(status, answer.statusCode(), path + ": " + answer.body());
        assertTrue(answer.body().contains(error), path + ": " + answer.body());
    }

    private static int maxInFlight(Launcher lab) {
        Matcher m = MAX_IN_FLIGHT.matcher(lab.stats().toJson());
        assertTrue(m.find(), lab.stats().toJson());
        return Integer.parseInt(m.group(1));
    }

    private HttpResponse<String> post(Launcher lab, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(admin(lab, path)).header("Authorization", "Bearer " + lab.adminToken())
                .POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static URI admin(Launcher lab, String path) {
        return URI.create("http://127.0.0.1:" + lab.adminPort() + path);
    }
}
