package lab.agent;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

import com.sun.net.httpserver.HttpExchange;

/**
 * How an admin port answers, the same on the lab's apps' ({@code lab.common.admin.AdminServer}) and on the
 * agent's ({@link AgentServer}): JSON bodies, {@code {"error":"..."}} for every 4xx and 5xx, and the run's
 * token checked before anything changes.
 */
public final class AdminHttp {

    private AdminHttp() {
    }

    /** False after answering 401 to a call without the run's token ({@link AdminAccess}). */
    public static boolean authorized(HttpExchange exchange, AdminAccess access) throws IOException {
        if (access.allows(exchange.getRequestHeaders().getFirst("Authorization"))) return true;
        exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"lab admin\"");
        send(exchange, 401, error(access.refusal()));
        return false;
    }

    /** {@code {"error":"..."}}: every 4xx and 5xx answer of an admin port. */
    public static String error(String message) {
        return "{\"error\":" + Json.str(message) + "}";
    }

    public static void send(HttpExchange exchange, int status, String json) throws IOException {
        byte[] body = (json + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
