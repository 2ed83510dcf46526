package lab.common;

import java.util.Arrays;
import java.util.List;

/**
 * Starts one app: its container on the pinned pool, the admin endpoint beside it, the shared
 * client. Each module's {@code main} is one call to {@link #main}; tests call {@link #start} with
 * port 0 and close what it returns.
 */
public final class Launcher implements AutoCloseable {

    private final LabConfig config;
    private final Stats stats;
    private final Remote remote;
    private final Container container;
    private final AdminServer admin;
    private final Endpoint endpoint;

    private Launcher(LabConfig config, Stats stats, Remote remote, Container container, AdminServer admin, Endpoint endpoint) {
        this.config = config;
        this.stats = stats;
        this.remote = remote;
        this.container = container;
        this.admin = admin;
        this.endpoint = endpoint;
    }

    /** Parses the flags (exit 2 with usage on bad input), starts, prints the effective configuration. */
    public static void main(String[] args, List<String> apps, Endpoint.Factory factory) throws Exception {
        // Lab-notes trap 9: on JDK 17 with 2 CPUs the common pool has parallelism 1, and
        // CompletableFuture's async pool (where HttpClient.sendAsync completes) then starts a new
        // thread per callback. Must be set before anything touches ForkJoinPool.
        if (System.getProperty("java.util.concurrent.ForkJoinPool.common.parallelism") == null) {
            System.setProperty("java.util.concurrent.ForkJoinPool.common.parallelism",
                    String.valueOf(Math.max(2, Runtime.getRuntime().availableProcessors() - 1)));
        }
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.println(LabConfig.USAGE + "\n       apps in this jar: " + String.join(", ", apps));
            return;
        }
        LabConfig config;
        try {
            config = LabConfig.parse(args, apps);
        } catch (IllegalArgumentException e) {
            System.err.println("ERROR: " + e.getMessage());
            System.err.println(LabConfig.USAGE + "\n       apps in this jar: " + String.join(", ", apps));
            System.exit(2);
            return;
        }
        // Before anything makes a virtual thread: the scheduler reads these once (docs/traps.md #17).
        if (config.virtualThreads()) VirtualThreads.pinCarriers(config.threads());
        Launcher lab;
        try {
            lab = start(config, factory);
        } catch (Exception e) {
            // A port in use must end the process: the container's non-daemon threads would
            // otherwise keep a half-started JVM alive.
            System.err.println("ERROR: could not start " + config.app() + " on " + config.container() + ": " + e);
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(lab::close, "shutdown"));
        System.out.println(lab.describe());
    }

    /**
     * Starts in this JVM (tests do, with port 0). A vN config must find the virtual-thread
     * scheduler pinned to N carriers already ({@link VirtualThreads#checkCarriers}).
     */
    public static Launcher start(LabConfig config, Endpoint.Factory factory) throws Exception {
        if (config.virtualThreads()) {
            if (VirtualThreads.unsupportedReason() != null) throw new IllegalStateException(VirtualThreads.unsupportedReason());
            VirtualThreads.checkCarriers(config.threads());
        }
        Stats stats = new Stats(config);
        Remote remote = new Remote(config, stats);
        Container container = null;
        try {
            Endpoint endpoint = factory.create(config, remote);
            container = Container.start(config, endpoint, stats);
            stats.queueOf(container::queued);
            AdminServer admin = new AdminServer(config.host(), config.adminPort(), stats);
            return new Launcher(config, stats, remote, container, admin, endpoint);
        } catch (Exception e) {
            // Whatever did start must stop, or its non-daemon threads outlive the failure.
            if (container != null) container.close();
            remote.close();
            throw e;
        }
    }

    public int port() {
        return container.port();
    }

    public int adminPort() {
        return admin.port();
    }

    public Stats stats() {
        return stats;
    }

    /** The one line every log and result starts from. */
    public String describe() {
        return "lab: app=" + config.app() + " container=" + config.container() + " threads=" + config.threadsFlag()
                + " [" + container.describe() + "]"
                + " listen=http://" + config.host() + ":" + port() + endpoint.path()
                + (endpoint.path().equals("/call") ? " (bytes<=" + Filler.MAX + ", filler chunks of " + Filler.CHUNK + ")" : "")
                + (endpoint.limits().isEmpty() ? "" : " [" + endpoint.limits() + "]")
                + " admin=http://" + config.host() + ":" + adminPort() + "/stats"
                + " remote=" + config.remote()
                + " [" + remote.describe() + "]"
                + " commonPoolParallelism=" + java.util.concurrent.ForkJoinPool.getCommonPoolParallelism()
                + " jdk=" + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ", "
                + System.getProperty("java.home") + ")";
    }

    @Override
    public void close() {
        try {
            container.close();
        } catch (Exception e) {
            System.err.println("WARN: stopping the container: " + e);
        }
        admin.close();
        remote.close();
    }
}
