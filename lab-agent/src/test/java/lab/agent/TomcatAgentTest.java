package lab.agent;

import static lab.agent.Http.member;
import static lab.agent.Http.names;
import static lab.agent.Http.number;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import org.apache.tomcat.util.threads.VirtualThreadExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The agent reads a real embedded Tomcat 11 from outside its code, as it would a Spring Boot app's:
 * a pool of 4 with 6 requests held, a virtual-thread executor (JDK 21+), Servlet async requests
 * waiting off their threads, and the reset behind the run's token.
 */
@Timeout(90)
class TomcatAgentTest {

    static final String TOKEN = "token-of-the-run";

    static LabAgent agent() throws Exception {
        return LabAgent.start(new AgentArgs(0, "127.0.0.1", "test-app"), AdminAccess.of(TOKEN, null), true);
    }

    @Test
    void aPoolOfFourWithSixRequests() throws Exception {
        try (TestTomcat tomcat = new TestTomcat(4, null); LabAgent agent = agent()) {
            List<CompletableFuture<HttpResponse<String>>> calls = Http.concurrently(tomcat.port(), "/block", 6);
            Map<String, Object> held = Http.statsUntil(agent.port(), s -> Long.valueOf(4).equals(s.get("inFlight"))
                    && Long.valueOf(2).equals(s.get("queued")), "4 in flight and 2 queued");
            assertEquals("tomcat", held.get("container"));
            assertEquals("test-app", held.get("app"));
            assertEquals(4L, number(held, "threads"), held.toString());
            Map<String, Object> pool = member(held, "pool");
            assertEquals("platform", pool.get("executor"), pool.toString());
            assertEquals(4L, number(pool, "max"));
            assertEquals(4L, number(pool, "busy"));
            assertEquals("org.apache.tomcat.util.threads.ThreadPoolExecutor", pool.get("executorClass"));
            assertTrue(((String) pool.get("source")).startsWith("Tomcat:type=ThreadPool,name="), pool.toString());
            assertFalse(held.containsKey("carrierThreads"), "no carriers on a platform pool: " + held);

            tomcat.release();
            for (CompletableFuture<HttpResponse<String>> call : calls) assertEquals(200, call.get(30, TimeUnit.SECONDS).statusCode());
            Map<String, Object> done = Http.statsUntil(agent.port(), s -> Long.valueOf(6).equals(s.get("completed")), "6 completed");
            assertEquals(0L, number(done, "inFlight"));
            assertEquals(0L, number(done, "errors"));
            assertTrue(number(done, "maxInFlight") >= 4, done.toString());
            assertTrue(number(member(done, "pool"), "peakBusy") >= 4, done.toString());
            List<String> handlers = names(done, "handlerThreads");
            assertEquals(4, handlers.size(), handlers.toString());
            assertTrue(handlers.stream().allMatch(name -> name.matches("http-nio-.*-exec-\\d+")), handlers.toString());

            resetNeedsTheToken(agent.port());
        }
    }

    /** Reset: 401 and nothing changed without the token; with it, counters from zero. */
    private static void resetNeedsTheToken(int port) throws Exception {
        for (String auth : new String[] {null, "Bearer wrong", "Basic " + TOKEN}) {
            HttpResponse<String> refused = Http.call(port, "POST", "/stats/reset", auth);
            assertEquals(401, refused.statusCode(), refused.body());
            assertTrue(MiniJson.object(refused.body()).get("error").toString().contains("Authorization: Bearer"), refused.body());
            assertEquals(6L, number(Http.stats(port), "completed"), "a refused reset changed the counters");
        }
        HttpResponse<String> reset = Http.call(port, "POST", "/stats/reset", "Bearer " + TOKEN);
        assertEquals(200, reset.statusCode(), reset.body());
        Map<String, Object> after = MiniJson.object(reset.body());
        assertEquals(0L, number(after, "completed"), after.toString());
        assertEquals(0L, number(after, "maxInFlight"), after.toString());
        assertEquals(List.of(), names(after, "handlerThreads"));
        assertEquals(0L, number(member(after, "pool"), "peakBusy"), after.toString());
    }

    /** Spring Boot's way (spring.threads.virtual.enabled): Tomcat's VirtualThreadExecutor as an external executor. */
    @Test
    void anExternalVirtualThreadExecutor() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+ (running " + System.getProperty("java.version") + ")");
        virtual(new VirtualThreadExecutor("tomcat-handler-"), "tomcat-handler-\\*");
    }

    /** Tomcat's own: useVirtualThreads=true on the connector (maxThreads then still answers 200, unused). */
    @Test
    void tomcatsOwnVirtualThreads() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+ (running " + System.getProperty("java.version") + ")");
        virtual(null, "http-nio-.*-virt-\\*");
    }

    private static void virtual(Executor executor, String handlerName) throws Exception {
        try (TestTomcat tomcat = new TestTomcat(0, executor); LabAgent agent = agent()) {
            List<CompletableFuture<HttpResponse<String>>> calls = Http.concurrently(tomcat.port(), "/block", 3);
            Map<String, Object> held = Http.statsUntil(agent.port(), s -> Long.valueOf(3).equals(s.get("inFlight")), "3 in flight");
            Map<String, Object> pool = member(held, "pool");
            assertEquals("virtual", pool.get("executor"), held.toString());
            assertEquals("v" + Threads.carrierCount().count(), held.get("threads"), held.toString());
            assertTrue(((String) held.get("threads")).startsWith("v"));
            assertEquals(0L, number(held, "queued"));
            assertEquals(3L, number(pool, "busy"), "requests on a virtual thread: " + pool);
            assertFalse(pool.containsKey("max"), "no max for a thread per request: " + pool);
            assertTrue(pool.get("carriersFrom").toString().contains("jdk.virtualThreadScheduler.parallelism"), pool.toString());
            List<String> carriers = names(held, "carrierThreads");
            assertFalse(carriers.isEmpty(), held.toString());
            assertTrue(carriers.stream().allMatch(name -> name.matches("ForkJoinPool-\\d+-worker-\\d+")), carriers.toString());
            tomcat.release();
            for (CompletableFuture<HttpResponse<String>> call : calls) assertEquals(200, call.get(30, TimeUnit.SECONDS).statusCode());
            Map<String, Object> done = Http.statsUntil(agent.port(), s -> Long.valueOf(3).equals(s.get("completed")), "3 completed");
            List<String> handlers = names(done, "handlerThreads");
            assertEquals(1, handlers.size(), "a virtual thread per request, folded to one name: " + handlers);
            assertTrue(handlers.get(0).matches(handlerName), handlers.toString());
        }
    }

    /**
     * A Servlet async request waits in stage 7 (ENDED), on no thread: counted in flight (its request is
     * not recycled), never a handler thread, no busy thread; completed once it completes.
     */
    @Test
    void asyncRequestsWaitingOffTheirThreads() throws Exception {
        try (TestTomcat tomcat = new TestTomcat(4, null); LabAgent agent = agent()) {
            List<CompletableFuture<HttpResponse<String>>> calls = Http.concurrently(tomcat.port(), "/async", 3);
            Map<String, Object> waiting = Http.statsUntil(agent.port(), s -> Long.valueOf(3).equals(s.get("inFlight"))
                    && Long.valueOf(0).equals(member(s, "pool").get("busy")), "3 async requests in flight, no thread busy");
            assertEquals(0L, number(waiting, "queued"));
            tomcat.release();
            for (CompletableFuture<HttpResponse<String>> call : calls) assertEquals(200, call.get(30, TimeUnit.SECONDS).statusCode());
            Map<String, Object> done = Http.statsUntil(agent.port(), s -> Long.valueOf(3).equals(s.get("completed")), "3 completed");
            assertEquals(0L, number(done, "inFlight"), done.toString());
            assertTrue(number(done, "maxInFlight") >= 3, done.toString());
        }
    }

    /** errors is Tomcat's errorCount: a 503 counts (as would any status >= 400), a 200 does not. */
    @Test
    void errorsAreTomcatsErrorCount() throws Exception {
        try (TestTomcat tomcat = new TestTomcat(4, null); LabAgent agent = agent()) {
            assertEquals(503, Http.call(tomcat.port(), "GET", "/fail", null).statusCode());
            assertEquals(200, Http.call(tomcat.port(), "GET", "/", null).statusCode());
            Map<String, Object> stats = Http.statsUntil(agent.port(), s -> Long.valueOf(2).equals(s.get("completed")), "2 completed");
            assertEquals(1L, number(stats, "errors"), stats.toString());
        }
    }
}
