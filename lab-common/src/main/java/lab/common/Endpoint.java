package lab.common;

import jakarta.servlet.Servlet;

/**
 * What an app hands the container: one servlet and where it is mapped. Plain servlets take
 * {@code /call} only (anything else is the container's 404); Spring's servlets take {@code /*}
 * and route themselves.
 *
 * @param path   what to call, for the start line ({@code /call}, or {@code /fanout} for the fan-out apps)
 * @param limits the app's own limits beyond the container's and the client's (a fan-out app's
 *               executor, concurrency...), printed in the start line; empty when it has none
 */
public record Endpoint(Servlet servlet, String mapping, String path, String limits) {

    public Endpoint(Servlet servlet, String mapping) {
        this(servlet, mapping, "/call", "");
    }

    public static Endpoint call(Servlet servlet) {
        return new Endpoint(servlet, "/call");
    }

    public static Endpoint everything(Servlet servlet) {
        return new Endpoint(servlet, "/*");
    }

    /** How each app builds its endpoint; tests call it with port 0 like {@code main} does. */
    @FunctionalInterface
    public interface Factory {
        Endpoint create(LabConfig config, Remote remote) throws Exception;
    }
}
