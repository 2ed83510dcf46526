package lab.common.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import lab.agent.AdminAccess;
import lab.common.config.LabConfig;
import lab.common.profile.Profiler;
import lab.common.stats.Stats;

/**
 * Issue 40: the admin port's state-changing calls are the bench's alone. Without the run's token
 * (none, a wrong one, another scheme) {@code POST /pool}, {@code /stats/reset} and
 * {@code /profile/*} answer 401 and change nothing; {@code GET /stats} stays open. A JVM started
 * by hand (no token in its environment) refuses every such call. Where a profile may be written:
 * ProfilerTest.
 */
@Timeout(60)
class AdminTest {

    private static final String TOKEN = "s3cret-token-of-the-run";
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void withoutTheTokenNothingChanges(@TempDir Path tmp) throws Exception {
        Stats stats = stats();
        AtomicInteger resized = new AtomicInteger();
        Profiler profiler = Profiler.shared();       // no profile starts: every call is refused before it
        try (AdminServer admin = new AdminServer("127.0.0.1", 0, stats, AdminAccess.of(TOKEN, tmp.toString()))) {
            admin.onResize(threads -> "lab: resized " + resized.incrementAndGet());
            stats.requestStarted();
            stats.requestFinished(200);
            for (String auth : new String[] {null, "Bearer wrong", "Bearer " + TOKEN + "x", "Basic " + TOKEN, TOKEN}) {
                for (String path : new String[] {"/pool?threads=4", "/stats/reset", "/profile/start", "/profile/stop?dir=" + tmp}) {
                    HttpResponse<String> answer = call(admin, "POST", path, auth);
                    assertEquals(401, answer.statusCode(), path + " with " + auth + ": " + answer.body());
                    assertTrue(answer.body().contains("Authorization: Bearer"), answer.body());
                    assertEquals("Bearer realm=\"lab admin\"", answer.headers().firstValue("WWW-Authenticate").orElse(""));
                }
            }
            assertEquals(0, resized.get(), "POST /pool reached the app");
            assertTrue(stats.toJson().contains("\"completed\":1,"), "the counters were reset: " + stats.toJson());
            assertFalse(profiler.running(), "a profile was started");
            assertEquals(200, call(admin, "GET", "/stats", null).statusCode(), "GET /stats is open");

            assertEquals(200, call(admin, "POST", "/stats/reset", "Bearer " + TOKEN).statusCode());
            assertTrue(stats.toJson().contains("\"completed\":0,"), stats.toJson());
            assertEquals(200, call(admin, "POST", "/pool?threads=4", "Bearer " + TOKEN).statusCode());
            assertEquals(1, resized.get());
        }
    }

    @Test
    void aJvmStartedByHandRefusesEveryChange(@TempDir Path tmp) throws Exception {
        AdminAccess byHand = AdminAccess.of(null, null);
        AtomicInteger resized = new AtomicInteger();
        try (AdminServer admin = new AdminServer("127.0.0.1", 0, stats(), byHand)) {
            admin.onResize(threads -> "lab: resized " + resized.incrementAndGet());
            for (String auth : new String[] {null, "Bearer ", "Bearer null"}) {
                HttpResponse<String> answer = call(admin, "POST", "/pool?threads=4", auth);
                assertEquals(401, answer.statusCode(), answer.body());
                assertTrue(answer.body().contains("started without LAB_ADMIN_TOKEN"), answer.body());
            }
            assertEquals(0, resized.get());
            // Even with its own token (in-process only) no profile: there is nowhere it may write one.
            assertEquals(403, call(admin, "POST", "/profile/start", "Bearer " + byHand.token()).statusCode());
            assertEquals(200, call(admin, "GET", "/stats", null).statusCode());
        }
        assertTrue(byHand.token().length() >= 40, "a random token of 32 bytes");
        assertFalse(byHand.toString().contains(byHand.token()), "the token is never printed");
        assertFalse(AdminAccess.of(TOKEN, "relative/dir").toString().contains("relative"), "a relative root is none");
    }

    private static Stats stats() {
        return new Stats(LabConfig.forTest("sync", "jetty", 1, URI.create("http://127.0.0.1:9/")));
    }

    private HttpResponse<String> post(AdminServer admin, String pathAndQuery) throws Exception {
        return call(admin, "POST", pathAndQuery, "Bearer " + TOKEN);
    }

    private HttpResponse<String> call(AdminServer admin, String method, String pathAndQuery, String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + pathAndQuery))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(20));
        if (authorization != null) request.header("Authorization", authorization);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
