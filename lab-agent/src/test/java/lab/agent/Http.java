package lab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/** The tests' HTTP: calls to the agent's port and the app's, and bounded waits on /stats. */
final class Http {

    static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private Http() {
    }

    static HttpResponse<String> call(int port, String method, String path, String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(20));
        if (authorization != null) request.header("Authorization", authorization);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** GET /stats on the agent's port, parsed (200 asserted). */
    static Map<String, Object> stats(int port) throws Exception {
        HttpResponse<String> answer = call(port, "GET", "/stats", null);
        assertEquals(200, answer.statusCode(), answer.body());
        assertEquals("application/json", answer.headers().firstValue("Content-Type").orElse(""));
        return MiniJson.object(answer.body());
    }

    /** /stats once {@code until} holds of it, within 20 s; else the test fails with the last one. */
    static Map<String, Object> statsUntil(int port, Predicate<Map<String, Object>> until, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        Map<String, Object> stats = stats(port);
        while (!until.test(stats)) {
            if (System.nanoTime() > deadline) fail("no " + what + " within 20 s: " + stats);
            Thread.sleep(50);
            stats = stats(port);
        }
        return stats;
    }

    /** {@code n} GETs of {@code path} at once, each on its own connection (HTTP/1.1). */
    static List<CompletableFuture<HttpResponse<String>>> concurrently(int port, String path, int n) {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(CLIENT.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(40)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        return calls;
    }

    static long number(Map<String, Object> json, String key) {
        Object value = json.get(key);
        if (!(value instanceof Long n)) throw new AssertionError(key + " is " + value + " in " + json);
        return n;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> member(Map<String, Object> json, String key) {
        Object value = json.get(key);
        if (!(value instanceof Map)) throw new AssertionError(key + " is " + value + " in " + json);
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<String> names(Map<String, Object> json, String key) {
        Object value = json.get(key);
        if (!(value instanceof List)) throw new AssertionError(key + " is " + value + " in " + json);
        return (List<String>) value;
    }
}
