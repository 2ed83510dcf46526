package lab.common;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * {@code GET /stats} and {@code POST /stats/reset} on their own port and thread, outside the
 * measured container: a 1-thread sync server with 99 requests queued still answers here at once.
 */
public final class AdminServer implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService thread;

    public AdminServer(String host, int port, Stats stats) throws IOException {
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
                    send(exchange, 200, stats.toJson());
                } else if (path.equals("/stats/reset") && method.equals("POST")) {
                    stats.reset();
                    send(exchange, 200, stats.toJson());
                } else {
                    send(exchange, 404, "{\"error\":\"try GET /stats or POST /stats/reset\"}");
                }
            }
        });
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void send(HttpExchange exchange, int status, String json) throws IOException {
        byte[] body = (json + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }
}
