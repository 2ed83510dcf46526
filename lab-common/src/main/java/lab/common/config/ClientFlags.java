package lab.common.config;

import java.net.URI;

/**
 * The remote and the outbound HTTP client: {@code --remote --client --client-timeout-ms
 * --client-connect-timeout-ms --client-max-connections --client-executor-threads}. One of {@link
 * LabConfig#parse}'s small parsers.
 */
final class ClientFlags {

    URI remote;
    String client = LabConfig.JDK;
    int timeoutMs = 10_000;
    int connectTimeoutMs = 2_000;
    int maxConnections = 0;
    int executorThreads = 2;

    /** Reads {@code flag} if it is one of these (a bad value throws); false if it is not. */
    boolean take(String flag, String value) {
        switch (flag) {
            case "--remote" -> remote = httpUri(flag, value);
            case "--client" -> client = LabConfig.oneOf(flag, value, LabConfig.CLIENTS);
            case "--client-timeout-ms" -> timeoutMs = LabConfig.intIn(flag, value, 1, 600_000);
            case "--client-connect-timeout-ms" -> connectTimeoutMs = LabConfig.intIn(flag, value, 1, 600_000);
            case "--client-max-connections" -> maxConnections = LabConfig.intIn(flag, value, 0, 1_000_000);
            case "--client-executor-threads" -> executorThreads = LabConfig.intIn(flag, value, 1, 1_000);
            default -> {
                return false;
            }
        }
        return true;
    }

    /** The HTTP backend (the default) calls {@code --remote}; {@code --backend postgres} calls none. */
    void requireRemote(boolean postgres) {
        if (remote == null && !postgres) throw new IllegalArgumentException("missing --remote");
    }

    /**
     * The clients an app calls out with: catalog.tsv's clients column. The fan-out apps compare executors
     * and dispatchers around one client; their calls go through Remote.call/callAsync only, and they are
     * measured on the JDK client alone.
     */
    void checkApp(String app) {
        Catalog.App row = Catalog.app(app);
        if (!client.equals(LabConfig.JDK) && !row.clients().contains(client)) {
            throw new IllegalArgumentException("--client " + client + ": the " + row.family() + " apps run on the "
                    + String.join(", ", row.clients()) + " client only (catalog.tsv's clients)");
        }
    }

    private static URI httpUri(String flag, String raw) {
        try {
            URI uri = URI.create(raw.endsWith("/") ? raw.substring(0, raw.length() - 1) : raw);
            if (!"http".equals(uri.getScheme()) || uri.getHost() == null) throw new IllegalArgumentException();
            return uri;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + " must be an http://host:port URL, got '" + raw + "'");
        }
    }
}
