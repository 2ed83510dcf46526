package lab.common.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import lab.agent.AdminAccess;
import lab.common.admin.AdminServer;
import lab.common.config.LabConfig;
import lab.common.stats.Stats;

/**
 * The profile endpoints of {@link AdminServer} (issue 15): start, about 1 s of CPU in a named
 * thread, stop into a directory; async-profiler where its library loads, JFR when forced. The
 * directory is the bench's or under it (issue 40: LAB_PROFILE_DIR), every call with the run's token.
 */
@Timeout(60)
public class ProfilerTest {

    private static final String BURNER = "lab-burner";
    private static final String TOKEN = "token-of-the-run";
    private static final Pattern STACK_LINE = Pattern.compile("^\\[[^;]+ tid=-?\\d+\\](;[^;]+)* (\\d+)$");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void asyncProfilerProfilesABusyThread(@TempDir Path tmp) throws Exception {
        Assumptions.assumeTrue(Profiler.libraryResource() != null, "no async-profiler library for this OS/arch");
        try (AdminServer admin = new AdminServer("127.0.0.1", 0, stats(), new Profiler(false), access(tmp))) {
            profileAndCheck(admin, tmp, "async-profiler");
            // each Java frame says how it ran (interpreted, C1, C2, inlined): the cost card's tiers
            String burner = Files.readAllLines(tmp.resolve("out/a").resolve("collapsed.txt")).stream()
                    .filter(l -> l.startsWith("[" + BURNER + " tid=")).findFirst().orElse("");
            assertTrue(Pattern.compile("ProfilerTest\\.burn\\w*_\\[[01ji]\\]").matcher(burner).find(), burner);
            Path flame = tmp.resolve("out/a").resolve("flame.html");
            assertTrue(Files.size(flame) > 1000, "async-profiler flame graph " + flame);
        }
    }

    @Test
    void jfrFallbackWhenForced(@TempDir Path tmp) throws Exception {
        try (AdminServer admin = new AdminServer("127.0.0.1", 0, stats(), new Profiler(true), access(tmp))) {
            String started = profileAndCheck(admin, tmp, "jfr");
            assertTrue(started.contains("\"fallback_reason\":\"JFR forced\""), started);
            String flame = Files.readString(tmp.resolve("out/a").resolve("flame.html"));
            assertTrue(flame.startsWith("<!DOCTYPE html>") && flame.contains("ProfilerTest.burn"), flame);
        }
    }

    @Test
    void badRequestsAnswer4xxAndTheServerLivesOn(@TempDir Path tmp) throws Exception {
        try (AdminServer admin = new AdminServer("127.0.0.1", 0, stats(), new Profiler(true), access(tmp))) {
            assertEquals(405, call(admin, "GET", "/profile/start").statusCode());
            assertEquals(404, call(admin, "POST", "/profile/nope").statusCode());
            assertEquals(400, call(admin, "POST", "/profile/start?interval_ms=abc").statusCode());
            assertEquals(400, call(admin, "POST", "/profile/start?interval_ms=0").statusCode());
            assertEquals(400, call(admin, "POST", "/profile/stop?dir=%2E%2Frel").statusCode());
            assertEquals(400, call(admin, "POST", "/profile/stop").statusCode());
            assertEquals(409, call(admin, "POST", "/profile/stop?dir=" + tmp).statusCode());
            assertEquals(200, call(admin, "POST", "/profile/start?interval_ms=20").statusCode());
            assertEquals(400, call(admin, "POST", "/profile/stop?dir=a,b").statusCode());
            assertEquals(200, call(admin, "POST", "/profile/stop?dir=" + tmp.resolve("x")).statusCode());
            assertEquals(200, call(admin, "GET", "/stats").statusCode());
        }
    }

    /** Issue 40: only under LAB_PROFILE_DIR, canonically; a refused stop creates nothing and the profile runs on. */
    @Test
    void aProfileIsWrittenOnlyUnderTheBenchsDirectory(@TempDir Path tmp) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("run"));
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.createSymbolicLink(root.resolve("link"), outside);
        Profiler profiler = new Profiler(true);
        try (AdminServer admin = new AdminServer("127.0.0.1", 0, stats(), profiler, AdminAccess.of(TOKEN, root.toString()))) {
            assertEquals(200, call(admin, "POST", "/profile/start?interval_ms=20").statusCode());
            for (String dir : new String[] {outside.resolve("p").toString(), tmp + "/elsewhere/p", root + "/../outside/p",
                    root + "/link/p", root + "/link", tmp + "/run2/p"}) {
                HttpResponse<String> answer = call(admin, "POST", "/profile/stop?dir=" + URLEncoder.encode(dir, StandardCharsets.UTF_8));
                assertEquals(403, answer.statusCode(), dir + ": " + answer.body());
                assertTrue(profiler.running(), "a refused stop ended the profile");
            }
            try (var left = Files.list(outside)) {
                assertEquals(0, left.count(), "something was written outside the run's directory");
            }
            assertFalse(Files.exists(tmp.resolve("elsewhere")));
            assertFalse(Files.exists(tmp.resolve("run2")));
            Path dir = root.resolve("cells/01/profile");
            assertEquals(200, call(admin, "POST", "/profile/stop?dir=" + dir).statusCode());
            assertTrue(Files.exists(dir.resolve("collapsed.txt")) && Files.exists(dir.resolve("flame.html")), dir.toString());
        }
    }

    private static Stats stats() {
        return new Stats(LabConfig.forTest("sync", "jetty", 1, URI.create("http://127.0.0.1:9/")));
    }

    /** The whole round; answers the start JSON. */
    private String profileAndCheck(AdminServer admin, Path tmp, String engine) throws Exception {
        HttpResponse<String> start = call(admin, "POST", "/profile/start?interval_ms=10");
        assertEquals(200, start.statusCode(), start.body());
        assertTrue(start.body().contains("\"engine\":\"" + engine + "\""), start.body());
        assertTrue(start.body().contains("\"interval_ms\":10"), start.body());
        assertEquals(409, call(admin, "POST", "/profile/start").statusCode());

        Thread burner = new Thread(ProfilerTest::burnOneCpuSecond, BURNER);
        burner.start();
        burner.join(30_000);

        assertEquals(400, call(admin, "POST", "/profile/stop?dir=relative/dir").statusCode());
        Path dir = tmp.resolve("out/a");   // not there yet: stop creates it
        HttpResponse<String> stop = call(admin, "POST", "/profile/stop?dir=" + dir);
        assertEquals(200, stop.statusCode(), stop.body());
        assertTrue(stop.body().contains("\"engine\":\"" + engine + "\""), stop.body());
        assertTrue(stop.body().contains("\"files\":[\"flame.html\",\"collapsed.txt\"]"), stop.body());
        Matcher m = Pattern.compile("\"samples\":(\\d+)").matcher(stop.body());
        assertTrue(m.find(), stop.body());
        long samples = Long.parseLong(m.group(1));

        List<String> lines = Files.readAllLines(dir.resolve("collapsed.txt"));
        long sum = 0;
        boolean burnSeen = false;
        for (String line : lines) {
            Matcher l = STACK_LINE.matcher(line);
            assertTrue(l.matches(), "not a collapsed stack: " + line);
            sum += Long.parseLong(l.group(2));
            burnSeen |= line.startsWith("[" + BURNER + " tid=") && line.contains("lab/common/profile/ProfilerTest.burn");
        }
        assertEquals(samples, sum, "samples in the answer vs collapsed.txt");
        assertTrue(samples >= 10, "samples " + samples);
        assertTrue(burnSeen, "no [" + BURNER + "] stack with ProfilerTest.burn in\n" + String.join("\n", lines));
        assertEquals(409, call(admin, "POST", "/profile/stop?dir=" + dir).statusCode());
        return start.body();
    }

    /** About 1 s of this thread's CPU (bounded by 15 s of wall time on a loaded machine). */
    private static void burnOneCpuSecond() {
        burnCpu(1_000);
    }

    /** About {@code ms} of this thread's CPU (bounded by 15 s of wall time); the thread CPU ns it used. */
    public static long burnCpu(long ms) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpuStart = mx.getCurrentThreadCpuTime();
        long cpuEnd = cpuStart + ms * 1_000_000L;
        long wallEnd = System.nanoTime() + 15_000_000_000L;
        double x = 0;
        while (mx.getCurrentThreadCpuTime() < cpuEnd && System.nanoTime() < wallEnd) {
            x += burn(100_000);
        }
        if (x == 42) System.out.println(x);   // keep x alive
        return mx.getCurrentThreadCpuTime() - cpuStart;
    }

    static double burn(int n) {
        double x = 0;
        for (int i = 0; i < n; i++) {
            x += Math.sqrt(x + i);
        }
        return x;
    }

    /** The run's token, and its directory: every profile of these tests is written under tmp. */
    private static AdminAccess access(Path tmp) {
        return AdminAccess.of(TOKEN, tmp.toString());
    }

    private HttpResponse<String> call(AdminServer admin, String method, String pathAndQuery) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + pathAndQuery))
                .header("Authorization", "Bearer " + admin.token())
                .method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(20))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
