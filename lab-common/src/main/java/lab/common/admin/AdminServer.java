package lab.common.admin;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import lab.agent.AdminAccess;
import lab.agent.AdminHttp;
import lab.agent.Json;
import lab.common.Launcher;
import lab.common.config.LabConfig;
import lab.common.profile.Profiler;
import lab.common.stats.Stats;

/**
 * {@code GET /stats} and {@code POST /stats/reset} on their own port and thread, outside the
 * measured container: a 1-thread sync server with 99 requests queued still answers here at once.
 *
 * <p>And a CPU profile of this JVM on demand ({@link Profiler}, issue 15):
 * <ul>
 * <li>{@code POST /profile/start[?interval_ms=N]} (1..1000, default 10): 200 with
 *     {@code {"engine":"async-profiler","version":"4.4","event":"itimer","interval_ms":10,"threads":true}}
 *     or {@code {"engine":"jfr","settings":"profile","event":"jdk.ExecutionSample","interval_ms":10,"threads":true,"fallback_reason":"..."}};
 *     409 if a profile is running.
 * <li>{@code POST /profile/stop?dir=/abs/path}: stops, writes {@code flame.html} and {@code collapsed.txt}
 *     into dir (created), 200 with {@code {"engine":...,"samples":N,"duration_ms":M,"files":["flame.html","collapsed.txt"],"flame":"..."}};
 *     409 if none is running; 400 for a missing, relative or comma-holding dir, 403 for one outside
 *     {@code LAB_PROFILE_DIR} (the profile runs on). Without {@code LAB_PROFILE_DIR}, start answers 403.
 * </ul>
 * And {@code POST /pool?threads=N|vN} ({@link Launcher#resize}): grows the container's platform pool
 * to N (1..10000) on the running JVM, or switches it to virtual threads on N carriers and back; 200
 * with {@code {"lab":"<the new lab: line>"}}; 400 for a bad value or a smaller platform pool; 409
 * where it cannot be done here (Netty's event loops, carriers not pinned to N at start, JDK 17) or a
 * request is in flight or queued.
 * Other bad requests: 400/404/405 with {@code {"error":...}}; the server lives on.
 *
 * <p>Every call that changes state ({@code POST /stats/reset}, {@code /pool}, {@code /profile/*})
 * needs the run's token ({@link AdminAccess}: {@code Authorization: Bearer ...}), else 401 and
 * nothing changes; {@code /profile/stop} writes only under the bench's directory, else 403.
 * {@code GET /stats} is open: it reads counters and changes nothing, and a person watching a run
 * (or remote-sleep's own {@code /stats}, on the port every app calls) needs no secret for that.
 */
public final class AdminServer implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService thread;
    private final Profiler profiler;
    private final AdminAccess access;
    private volatile boolean profiling;   // this server started the running profile
    private volatile UnaryOperator<String> resizer;   // Launcher::resize, once the app has started

    public AdminServer(String host, int port, Stats stats, AdminAccess access) throws IOException {
        this(host, port, stats, Profiler.shared(), access);
    }

    /** With a profiler of its own: ProfilerTest's, which may force the JFR fallback. */
    public AdminServer(String host, int port, Stats stats, Profiler profiler, AdminAccess access) throws IOException {
        this.profiler = profiler;
        this.access = access;
        server = HttpServer.create(new InetSocketAddress(host, port), 64);
        thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "admin");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(thread);
        server.createContext("/stats", exchange -> {
            try (exchange) {
                String path = exchange.getRequestURI().getPath();
                String method = exchange.getRequestMethod();
                if (path.equals("/stats") && method.equals("GET")) {
                    AdminHttp.send(exchange, 200, stats.toJson());
                } else if (path.equals("/stats/reset") && method.equals("POST")) {
                    if (!AdminHttp.authorized(exchange, access)) return;
                    stats.reset();
                    AdminHttp.send(exchange, 200, stats.toJson());
                } else {
                    AdminHttp.send(exchange, 404, "{\"error\":\"try GET /stats or POST /stats/reset\"}");
                }
            }
        });
        server.createContext("/profile", exchange -> {
            try (exchange) {
                try {
                    profile(exchange);
                } catch (RuntimeException | IOException e) {
                    AdminHttp.send(exchange, 500, AdminHttp.error(e.toString()));
                }
            }
        });
        server.createContext("/pool", exchange -> {
            try (exchange) {
                pool(exchange);
            }
        });
        server.start();
    }

    /** Where {@code POST /pool} goes: the app's {@link Launcher#resize}. */
    public void onResize(UnaryOperator<String> resize) {
        this.resizer = resize;
    }

    private void pool(HttpExchange exchange) throws IOException {
        if (!exchange.getRequestURI().getPath().equals("/pool")) {
            AdminHttp.send(exchange, 404, "{\"error\":\"try POST /pool?threads=N or vN\"}");
            return;
        }
        if (!postOnly(exchange) || !AdminHttp.authorized(exchange, access)) return;
        UnaryOperator<String> resize = resizer;
        try {
            String threads = query(exchange.getRequestURI().getRawQuery()).getOrDefault("threads", "");
            LabConfig.threadCount(threads);     // 400 for anything --threads would refuse
            if (resize == null) {
                AdminHttp.send(exchange, 409, "{\"error\":\"the app has not started\"}");
                return;
            }
            AdminHttp.send(exchange, 200, "{\"lab\":" + Json.str(resize.apply(threads)) + "}");
        } catch (IllegalArgumentException e) {
            AdminHttp.send(exchange, 400, AdminHttp.error(e.getMessage()));
        } catch (IllegalStateException | UnsupportedOperationException e) {
            AdminHttp.send(exchange, 409, AdminHttp.error(e.getMessage()));
        }
    }

    private void profile(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        boolean start = path.equals("/profile/start");
        if (!start && !path.equals("/profile/stop")) {
            AdminHttp.send(exchange, 404, "{\"error\":\"try POST /profile/start?interval_ms=N or POST /profile/stop?dir=/abs/path\"}");
            return;
        }
        if (!postOnly(exchange) || !AdminHttp.authorized(exchange, access)) return;
        try {
            Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
            if (start) {
                String interval = query.getOrDefault("interval_ms", String.valueOf(Profiler.DEFAULT_INTERVAL_MS));
                int ms;
                try {
                    ms = Integer.parseInt(interval);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("interval_ms must be a whole number of milliseconds, not " + interval);
                }
                access.checkProfiling();       // a profile that could be written nowhere is not started
                String json = profiler.start(ms);
                profiling = true;
                AdminHttp.send(exchange, 200, json);
            } else {
                String dir = query.get("dir");
                if (dir == null || dir.isEmpty()) {
                    throw new IllegalArgumentException("dir is required: POST /profile/stop?dir=/abs/path");
                }
                Path d;
                try {
                    d = Path.of(dir);
                } catch (InvalidPathException e) {
                    throw new IllegalArgumentException("dir is not a path: " + e.getMessage());
                }
                // Relative or comma-holding: Profiler's 400; else only under the bench's directory.
                String json = profiler.stop(d.isAbsolute() ? access.profileDir(d) : d);
                profiling = false;
                AdminHttp.send(exchange, 200, json);
            }
        } catch (IllegalArgumentException e) {
            AdminHttp.send(exchange, 400, AdminHttp.error(e.getMessage()));
        } catch (Profiler.StateException e) {
            AdminHttp.send(exchange, 409, AdminHttp.error(e.getMessage()));
        } catch (AdminAccess.Forbidden e) {
            AdminHttp.send(exchange, 403, AdminHttp.error(e.getMessage()));
        }
    }

    /** name=value pairs of a raw query, decoded; a malformed escape is an IllegalArgumentException (400). */
    private static Map<String, String> query(String raw) {
        Map<String, String> params = new HashMap<>();
        if (raw == null) return params;
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            params.put(name, value);
        }
        return params;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** The token its state-changing calls need (for in-process callers: {@link AdminAccess#token()}). */
    public String token() {
        return access.token();
    }

    /** False after answering 405 to anything but a POST (both /pool and /profile change state). */
    private static boolean postOnly(HttpExchange exchange) throws IOException {
        if (exchange.getRequestMethod().equals("POST")) return true;
        exchange.getResponseHeaders().set("Allow", "POST");
        AdminHttp.send(exchange, 405, "{\"error\":\"POST only\"}");
        return false;
    }




    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
        if (profiling) {
            profiler.discard();   // a profile this server started must not outlive it
        }
    }
}
