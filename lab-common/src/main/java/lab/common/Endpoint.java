package lab.common;

import jakarta.servlet.Servlet;

import org.springframework.http.server.reactive.HttpHandler;

import lab.common.config.LabConfig;
import lab.common.outbound.Remote;

/**
 * What an app hands the container: one servlet and where it is mapped, or, for Reactor Netty
 * (no servlet API), Spring's reactive {@link HttpHandler}. Plain servlets take {@code /call} only
 * (anything else is the container's 404); Spring's servlets take {@code /*} and route themselves.
 *
 * <p>spring-web is an optional dependency of lab-common: a servlet-only module such as nio-servlet
 * never loads {@code HttpHandler}, because its endpoints hold null there.
 *
 * @param path   what to call, for the start line ({@code /call}, or {@code /fanout} for the fan-out apps)
 * @param limits the app's own limits beyond the container's and the client's (a fan-out app's
 *               executor, concurrency...), printed in the start line; empty when it has none
 */
public record Endpoint(Servlet servlet, String mapping, HttpHandler httpHandler, String path, String limits) {

    public Endpoint(Servlet servlet, String mapping, HttpHandler httpHandler) {
        this(servlet, mapping, httpHandler, "/call", "");
    }

    /** A servlet serving {@code path} with limits of its own (the fan-out apps). */
    public Endpoint(Servlet servlet, String mapping, String path, String limits) {
        this(servlet, mapping, null, path, limits);
    }

    public static Endpoint call(Servlet servlet) {
        return new Endpoint(servlet, "/call", null);
    }

    public static Endpoint everything(Servlet servlet) {
        return new Endpoint(servlet, "/*", null);
    }

    /** For {@code --container netty}: Spring's handler, run on the event loops. */
    public static Endpoint reactive(HttpHandler handler) {
        return new Endpoint(null, "/*", handler);
    }

    /** How each app builds its endpoint; tests call it with port 0 like {@code main} does. */
    @FunctionalInterface
    public interface Factory {
        Endpoint create(LabConfig config, Remote remote) throws Exception;
    }
}
