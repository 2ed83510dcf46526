package lab.common.container;

import reactor.netty.resources.LoopResources;

import lab.common.Endpoint;
import lab.common.config.LabConfig;
import lab.common.outbound.Remote;
import lab.common.stats.Stats;

/**
 * An embedded container whose request pool is pinned so that {@code --threads N} means the same
 * on all: exactly N threads may run application code (docs/traps.md #4); with {@code vN}, a
 * virtual thread per request on N carriers. Every other limit that could cap a run (accept queue,
 * connections, keep-alive, async timeout) is set on purpose by each container's class
 * ({@link JettyContainer}, {@link TomcatContainer}, {@link NettyContainer}), which prints them in
 * its {@link #describe}.
 */
public interface Container extends AutoCloseable {

    int IDLE_TIMEOUT_MS = 30_000;

    int port();

    /** Requests waiting in the container's queue for a pool thread (not yet in application code). */
    int queued();

    /** What "N threads" is on this container, and the limits around it (the {@code [...]} of the lab: line). */
    String describe();

    /**
     * The container's own protections, for the {@code lab:} line: {@code containerQueue=...} (Tomcat's
     * bounded executor queue, {@code --container-queue}) and {@code qos=...} (Jetty's QoSHandler,
     * {@code --qos}); each says "unbounded" / "none" where it is not set or the container has none.
     */
    String describeLimits();

    /** Jetty's QoSHandler counts for /stats' {@code "qos"} since the last {@link #resetLimitCounts}; null without {@code --qos}. */
    default String qosJson() {
        return null;
    }

    /**
     * Gives a running container the next pool of the bench's matrix, so that it can measure it on a
     * JVM it has already warmed up instead of starting and warming a new one (~30 s each, 24 in the
     * default matrix): the platform pool grown to {@code threads}, or a virtual thread per request
     * ({@code virtual}: on the carriers pinned at the JVM's start), or back to a platform pool. What
     * a fresh start would have, no more: the platform threads only grow, since a shrunk pool keeps
     * its extra threads until they idle out and "handler threads seen" and the OS threads would count
     * them. Throws UnsupportedOperationException where the pool is fixed at start (Netty's event
     * loops) and IllegalArgumentException where the platform threads would shrink.
     */
    default void resize(int threads, boolean virtual) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot resize its pool");
    }

    /** Between warm-up and measurement ({@link Stats#reset}). */
    default void resetLimitCounts() {
    }

    /** The one place that picks the container's class. */
    static Container start(LabConfig config, Endpoint endpoint, Stats stats) throws Exception {
        return start(config, endpoint, stats, null);
    }

    /** The same; on Netty, with {@code remote}'s client sharing the server's event loops if it runs on them. */
    static Container start(LabConfig config, Endpoint endpoint, Stats stats, Remote remote) throws Exception {
        return switch (config.container()) {
            case "jetty" -> JettyContainer.start(config, endpoint, stats);
            case "tomcat" -> TomcatContainer.start(config, endpoint, stats);
            case LabConfig.NETTY -> NettyContainer.start(config, endpoint, stats,
                    remote == null ? null : (LoopResources) remote.nettyServerLoops());
            default -> throw new IllegalArgumentException("unknown container " + config.container());
        };
    }
}
