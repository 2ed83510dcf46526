package lab.common.container;

import java.time.Duration;

import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;

import io.netty.channel.ChannelOption;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

import lab.common.Endpoint;
import lab.common.config.LabConfig;
import lab.common.stats.Stats;
import lab.common.stats.StatsHttpHandler;

/**
 * WebFlux on its native runtime. Reactor Netty has no pool for application code: N event
 * loops accept, read, run the handler and write, and must never block. {@code LoopResources}
 * with 3 arguments makes one group that also accepts (the 4-argument form adds a separate
 * select group, N + 1 threads); non-daemon, so the process lives on like Jetty's and Tomcat's.
 */
public final class NettyContainer implements Container {
    public static final String LOOP_PREFIX = "netty";

    private final LabConfig config;
    private final DisposableServer server;
    private final LoopResources loops;

    private NettyContainer(LabConfig config, DisposableServer server, LoopResources loops) {
        this.config = config;
        this.server = server;
        this.loops = loops;
    }

    /** The server's N event loops; made by {@code ReactorNettyOutbound} when its client shares them. */
    public static LoopResources newLoops(LabConfig config) {
        return LoopResources.create(LOOP_PREFIX, config.threads(), false);
    }

    /**
     * @param shared the loops a Reactor Netty client already runs on ({@code --client reactor-netty}),
     *               or null: new ones. Either way the server owns them from here and stops them.
     */
    static Container start(LabConfig config, Endpoint endpoint, Stats stats, LoopResources shared) {
        LoopResources loops = shared != null ? shared : newLoops(config);
        try {
            DisposableServer server = HttpServer.create()
                    .runOn(loops, false) // plain NIO, as the other containers
                    .host(config.host())
                    .port(config.port())
                    .option(ChannelOption.SO_BACKLOG, config.acceptQueue())
                    .idleTimeout(Duration.ofMillis(IDLE_TIMEOUT_MS))
                    .handle(new ReactorHttpHandlerAdapter(new StatsHttpHandler(endpoint.httpHandler(), stats)))
                    .bindNow();
            return new NettyContainer(config, server, loops);
        } catch (RuntimeException e) {
            // A port in use: the loops are non-daemon threads and would keep the JVM alive.
            stopLoops(loops);
            throw e;
        }
    }

    @Override
    public String describe() {
        int n = config.threads();
        return "reactor-netty " + n + " event loop" + (n == 1 ? "" : "s") + " (" + LOOP_PREFIX
                + "-nio-1.." + n + ", plain NIO) that also accept and run application code; nothing else does;"
                + " no request queue (queued=0: a loop reads the next request when it gets to it)"
                + " acceptQueue(SO_BACKLOG)=" + config.acceptQueue() + " maxConnections=unlimited maxKeepAliveRequests=unlimited"
                + " idleTimeout=" + IDLE_TIMEOUT_MS + "ms no container async timeout (the client's timeout ends a slow call as 504)";
    }

    @Override
    public String describeLimits() {
        return "containerQueue=none (no request queue) qos=none";
    }

    @Override
    public int port() {
        return server.port();
    }

    /** Nothing queues: a request is read when its event loop gets to it. */
    @Override
    public int queued() {
        return 0;
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
        stopLoops(loops);
    }

    /** No 2 s quiet period (Netty's default): tests start and stop many servers. */
    private static void stopLoops(LoopResources loops) {
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block();
    }
}
