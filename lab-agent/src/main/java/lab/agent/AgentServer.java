package lab.agent;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * The agent's admin port, the bench's view of a foreign JVM (the JDK's own HTTP server: nothing the
 * app has is used):
 * <ul>
 *   <li>{@code GET /stats}: 200 with {@link AgentStats}' JSON;</li>
 *   <li>{@code POST /stats/reset}: with {@code Authorization: Bearer <token>} ({@link AdminAccess}:
 *       {@code LAB_ADMIN_TOKEN}, as on lab-common's admin port) 200 with the stats after the reset;
 *       without it 401 and nothing changes;</li>
 *   <li>{@code POST /pool}: 409 (after the token check, 401 without it): the agent cannot resize a
 *       foreign app's pool, which the app's own arguments set;</li>
 *   <li>{@code POST /profile/...}: 409 (after the token check): the agent does not profile;</li>
 *   <li>any other path 404, a known path with another method 405 ({@code Allow} says which); every
 *       4xx/5xx body is {@code {"error":"..."}}. A request the JDK's server cannot parse gets its 400,
 *       and the server lives on.</li>
 * </ul>
 * Two daemon threads ({@code lab-agent-http-1}, {@code -2}) answer, backlog 64. The JDK's server adds
 * a dispatcher and a timer thread of its own, which take the daemon flag of the thread that starts
 * it: it is started from a daemon thread, and they are renamed {@code lab-agent-*}, so that nothing
 * the agent started can keep the app's JVM alive, and each of its threads says whose it is.
 */
final class AgentServer implements AutoCloseable {

    static final String FOREIGN_POOL = "a foreign app's pool is its own: set it in its arguments (APP_ARGS)";
    static final String NO_PROFILE = "the agent does not profile";
    /** The JDK server's own threads (JDK 17 to 25: ServerImpl's dispatcher and its idle-connection timer). */
    private static final Set<String> JDK_SERVER_THREADS = Set.of("HTTP-Dispatcher", "idle-timeout-task", "server-timer");

    private final HttpServer server;
    private final ExecutorService executor;
    private final AgentStats stats;
    private final AdminAccess access;

    /** Listens on host:port (0: any free port) and answers at once; an IOException where it cannot listen. */
    AgentServer(String host, int port, AgentStats stats, AdminAccess access) throws IOException {
        this.stats = stats;
        this.access = access;
        Set<Thread> before = new HashSet<>(Threads.live());   // the JDK's server makes its timer thread in create()
        AtomicInteger n = new AtomicInteger();
        executor = Executors.newFixedThreadPool(2, r -> {
            Thread thread = new Thread(r, "lab-agent-http-" + n.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 64);
        } catch (IOException | RuntimeException e) {
            executor.shutdownNow();
            throw e;
        }
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        startAsDaemon(server, before);
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** Starts it from a daemon thread, then renames the threads the JDK's server made since {@code before}. */
    private static void startAsDaemon(HttpServer server, Set<Thread> before) {
        Thread starter = new Thread(server::start, "lab-agent-start");
        starter.setDaemon(true);
        starter.start();
        boolean interrupted = false;
        while (starter.isAlive()) {
            try {
                starter.join();
            } catch (InterruptedException e) {
                interrupted = true;   // finish starting; the caller's interrupt is kept for it
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
        for (Thread thread : Threads.live()) {
            if (!before.contains(thread) && JDK_SERVER_THREADS.contains(thread.getName())) thread.setName("lab-agent-" + thread.getName());
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            try {
                route(exchange, exchange.getRequestURI().getPath());
            } catch (RuntimeException e) {
                AdminHttp.send(exchange, 500, AdminHttp.error(e.toString()));
            }
        }
    }

    private void route(HttpExchange exchange, String path) throws IOException {
        if (path.equals("/stats")) {
            if (only(exchange, "GET")) AdminHttp.send(exchange, 200, stats.toJson());
        } else if (path.equals("/stats/reset")) {
            if (only(exchange, "POST") && AdminHttp.authorized(exchange, access)) AdminHttp.send(exchange, 200, stats.reset());
        } else if (path.equals("/pool")) {
            if (only(exchange, "POST") && AdminHttp.authorized(exchange, access)) AdminHttp.send(exchange, 409, AdminHttp.error(FOREIGN_POOL));
        } else if (path.equals("/profile") || path.startsWith("/profile/")) {
            if (only(exchange, "POST") && AdminHttp.authorized(exchange, access)) AdminHttp.send(exchange, 409, AdminHttp.error(NO_PROFILE));
        } else {
            AdminHttp.send(exchange, 404, AdminHttp.error("no " + path + " here: try GET /stats or POST /stats/reset"));
        }
    }

    /** False after answering 405 to any other method. */
    private static boolean only(HttpExchange exchange, String method) throws IOException {
        if (exchange.getRequestMethod().equals(method)) return true;
        exchange.getResponseHeaders().set("Allow", method);
        AdminHttp.send(exchange, 405, AdminHttp.error(method + " only"));
        return false;
    }




    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
