package lab.common.config;

import java.util.List;

import lab.common.VirtualThreads;

/**
 * What runs and where: {@code --app --container --threads --host --port --admin-port --accept-queue
 * --shutdown-grace-ms}. One of {@link LabConfig#parse}'s small parsers: each reads its own flags
 * and checks them, {@code parse} calls the checks across them in order.
 */
final class ServerFlags {

    private final List<String> apps;
    String app;
    String container;
    /** {@code --threads} as given, read by {@link #checkThreads} into {@link #threads} and {@link #virtual}. */
    String threadsFlag;
    int threads;
    boolean virtual;
    String host = "127.0.0.1";
    Integer port;
    Integer adminPort;
    int acceptQueue = 8192;
    int shutdownGraceMs = LabConfig.DEFAULT_SHUTDOWN_GRACE_MS;

    ServerFlags(List<String> apps) {
        this.apps = apps;
        this.app = apps.size() == 1 ? apps.get(0) : null;   // a jar of one app needs no --app
    }

    /** Reads {@code flag} if it is one of these (a bad value throws); false if it is not. */
    boolean take(String flag, String value) {
        switch (flag) {
            case "--app" -> app = LabConfig.oneOf(flag, value, apps);
            case "--container" -> container = LabConfig.oneOf(flag, value, List.of("jetty", "tomcat", LabConfig.NETTY));
            case "--threads" -> threadsFlag = value;
            case "--host" -> host = value;
            case "--port" -> port = LabConfig.intIn(flag, value, 0, 65535);
            case "--admin-port" -> adminPort = LabConfig.intIn(flag, value, 0, 65535);
            case "--accept-queue" -> acceptQueue = LabConfig.intIn(flag, value, 1, 65535);
            case "--shutdown-grace-ms" -> shutdownGraceMs = LabConfig.intIn(flag, value, 0, LabConfig.MAX_SHUTDOWN_GRACE_MS);
            default -> {
                return false;
            }
        }
        return true;
    }

    void requireGiven() {
        if (app == null) throw new IllegalArgumentException("missing --app (one of " + String.join(", ", apps) + ")");
        if (container == null) throw new IllegalArgumentException("missing --container (jetty, tomcat or netty)");
        if (threadsFlag == null) throw new IllegalArgumentException("missing --threads");
        if (port == null) throw new IllegalArgumentException("missing --port");
        if (adminPort == null) throw new IllegalArgumentException("missing --admin-port");
    }

    /** {@code N} or {@code vN}, and what Reactor Netty cannot run: a servlet app, or virtual threads. */
    void checkThreads() {
        virtual = threadsFlag.startsWith("v");
        threads = LabConfig.threadCount(threadsFlag);
        if (container.equals(LabConfig.NETTY) && !LabConfig.NETTY_APPS.contains(app)) {
            throw new IllegalArgumentException("--container netty runs only the " + String.join(", ", LabConfig.NETTY_APPS)
                    + " app (Reactor Netty has no servlet API)");
        }
        if (virtual && container.equals(LabConfig.NETTY)) {
            throw new IllegalArgumentException("--threads v" + threads + ": virtual threads do not apply to netty's event loops"
                    + " (nothing there blocks; use --threads " + threads + ")");
        }
    }

    /** vN on a JDK without virtual threads (17). */
    void requireVirtualThreadsSupported() {
        if (virtual && VirtualThreads.unsupportedReason() != null) {
            throw new IllegalArgumentException("--threads v" + threads + ": " + VirtualThreads.unsupportedReason());
        }
    }
}
