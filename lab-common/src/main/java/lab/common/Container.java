package lab.common;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.concurrent.Executor;
import java.util.stream.Stream;

import jakarta.servlet.DispatcherType;

import org.apache.catalina.LifecycleState;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.VirtualThreadPool;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;

import io.netty.channel.ChannelOption;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * An embedded container whose request pool is pinned so that {@code --threads N} means the same
 * on all: exactly N threads may run application code (lab-notes trap 4); with {@code vN}, a
 * virtual thread per request on N carriers. Every other limit that could cap a run (accept queue,
 * connections, keep-alive, async timeout) is set here on purpose and printed by {@link #describe}.
 */
public interface Container extends AutoCloseable {

    int IDLE_TIMEOUT_MS = 30_000;

    int port();

    /** Requests waiting in the container's queue for a pool thread (not yet in application code). */
    int queued();

    static Container start(LabConfig config, Endpoint endpoint, Stats stats) throws Exception {
        return start(config, endpoint, stats, null);
    }

    /** The same; on Netty, with {@code remote}'s client sharing the server's event loops if it runs on them. */
    static Container start(LabConfig config, Endpoint endpoint, Stats stats, Remote remote) throws Exception {
        StatsFilter filter = new StatsFilter(stats, config.asyncTimeoutMs());
        return switch (config.container()) {
            case "jetty" -> Jetty.start(config, endpoint, filter);
            case "tomcat" -> Tomcat11.start(config, endpoint, filter);
            case LabConfig.NETTY -> Netty.start(config, endpoint, stats,
                    remote == null ? null : (LoopResources) remote.nettyServerLoops());
            default -> throw new IllegalArgumentException("unknown container " + config.container());
        };
    }

    /** What "N threads" is on this container, and the limits around it. */
    static String describe(LabConfig config) {
        int n = config.threads();
        String asyncTimeout = " asyncTimeout=" + config.asyncTimeoutMs() + "ms";
        String carriers = config.virtualThreads() ? " " + VirtualThreads.describeCarriers() : "";
        return switch (config.container()) {
            case "jetty" -> (config.virtualThreads()
                    ? "jetty VirtualThreadPool maxConcurrentTasks=unbounded (a virtual thread per task; Jetty's default"
                        + " of 200 would cap a 1 s remote at ~200 req/s) runs every request and dispatch; platform"
                        + " QueuedThreadPool max=" + Jetty.PLATFORM_THREADS_FOR_VIRTUAL + " (1 selector that also accepts"
                        + " + 1 spare, no application code; 0 acceptors, 0 reserved)" + carriers
                    : "jetty QueuedThreadPool max=" + (n + 1) + " (" + n
                        + " for application code + 1 selector that also accepts; 0 acceptors, 0 reserved) jobQueue=unbounded")
                    + " acceptQueue=" + config.acceptQueue() + " maxConnections=unlimited idleTimeout=" + IDLE_TIMEOUT_MS + "ms" + asyncTimeout;
            case "tomcat" -> (config.virtualThreads()
                    ? "tomcat useVirtualThreads=true (a virtual thread per request; maxThreads does not apply, nothing"
                        + " queues: only maxConnections could limit it)" + carriers
                    : "tomcat maxThreads=" + n + " (exec threads run application code; acceptor and poller are outside the pool)"
                        + " maxQueueSize=unbounded")
                    + " acceptCount=" + config.acceptQueue() + " maxConnections=unlimited maxKeepAliveRequests=unlimited"
                    + " keepAliveTimeout=" + IDLE_TIMEOUT_MS + "ms" + asyncTimeout;
            case LabConfig.NETTY -> "reactor-netty " + n + " event loop" + (n == 1 ? "" : "s") + " (" + Netty.LOOP_PREFIX
                    + "-nio-1.." + n + ", plain NIO) that also accept and run application code; nothing else does;"
                    + " no request queue (queued=0: a loop reads the next request when it gets to it)"
                    + " acceptQueue(SO_BACKLOG)=" + config.acceptQueue() + " maxConnections=unlimited maxKeepAliveRequests=unlimited"
                    + " idleTimeout=" + IDLE_TIMEOUT_MS + "ms no container async timeout (the client's timeout ends a slow call as 504)";
            default -> config.container();
        };
    }

    /**
     * Jetty leases its selector (and by default acceptors and reserved threads) from the same
     * pool, and refuses to start when the pool is not larger than what it leases. So the pool is
     * N + 1: one selector that also accepts (0 acceptors), no reserved threads, N left for us.
     */
    final class Jetty implements Container {
        /**
         * With vN the platform pool runs no application code, only the selector; Jetty refuses a
         * pool no larger than what it leases, so one spare thread.
         */
        static final int PLATFORM_THREADS_FOR_VIRTUAL = 2;

        private final Server server;
        private final QueuedThreadPool pool;

        private Jetty(Server server, QueuedThreadPool pool) {
            this.server = server;
            this.pool = pool;
        }

        static Container start(LabConfig config, Endpoint endpoint, StatsFilter filter) throws Exception {
            int poolSize = config.virtualThreads() ? PLATFORM_THREADS_FOR_VIRTUAL : config.threads() + 1;
            QueuedThreadPool pool = new QueuedThreadPool(poolSize, poolSize);
            pool.setReservedThreads(0);
            pool.setName("jetty");
            Server server = new Server(pool);
            if (config.virtualThreads()) {
                // Lab-notes trap 16: the pool's semaphore bounds running tasks, 200 by default,
                // and a task blocked on a 1 s remote is running. 0 = no bound, as on Tomcat.
                VirtualThreadPool virtual = new VirtualThreadPool(0);
                virtual.setName("jetty-virtual-");
                pool.setVirtualThreadsExecutor(virtual);
                server.addBean(virtual);
            }
            ServerConnector connector = new ServerConnector(server, 0, 1);
            connector.setHost(config.host());
            connector.setPort(config.port());
            connector.setAcceptQueueSize(config.acceptQueue());
            connector.setIdleTimeout(IDLE_TIMEOUT_MS);
            server.addConnector(connector);

            ServletContextHandler context = new ServletContextHandler();
            context.setContextPath("/");
            ServletHolder servlet = new ServletHolder("app", endpoint.servlet());
            servlet.setAsyncSupported(true);
            context.addServlet(servlet, endpoint.mapping());
            FilterHolder stats = new FilterHolder(filter);
            stats.setAsyncSupported(true);
            context.addFilter(stats, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
            server.setHandler(context);
            server.start();
            return new Jetty(server, pool);
        }

        @Override
        public int port() {
            return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
        }

        @Override
        public int queued() {
            return pool.getQueueSize();
        }

        @Override
        public void close() throws Exception {
            server.stop();
        }
    }

    /** Tomcat's acceptor and poller threads live outside its executor, so maxThreads=N is N. */
    final class Tomcat11 implements Container {
        private final Tomcat tomcat;
        private final Connector connector;
        private final Path baseDir;

        private Tomcat11(Tomcat tomcat, Connector connector, Path baseDir) {
            this.tomcat = tomcat;
            this.connector = connector;
            this.baseDir = baseDir;
        }

        static Container start(LabConfig config, Endpoint endpoint, StatsFilter filter) throws Exception {
            Tomcat tomcat = new Tomcat();
            // Tomcat needs a work directory. One per fixed port is reused, so a process killed
            // with -9 (as the bench does) leaves nothing new behind; tests (port 0) get a fresh one.
            Path baseDir = config.port() > 0
                    ? Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"), "lab-tomcat-" + config.port()))
                    : Files.createTempDirectory("lab-tomcat");
            tomcat.setBaseDir(baseDir.toString());
            Connector connector = new Connector("HTTP/1.1");
            connector.setPort(config.port());
            set(connector, "address", config.host());
            if (config.virtualThreads()) {
                // Tomcat's VirtualThreadExecutor: a virtual thread per request, no pool, no queue;
                // maxThreads is ignored (lab-notes traps 11 and 16).
                set(connector, "useVirtualThreads", true);
            } else {
                set(connector, "maxThreads", config.threads());
                set(connector, "minSpareThreads", config.threads());
                // Requests beyond the pool wait in the executor's queue, none are rejected: that queue
                // is what a 1-thread sync row measures (Jetty's job queue is unbounded as well).
                set(connector, "maxQueueSize", Integer.MAX_VALUE);
            }
            set(connector, "acceptCount", config.acceptQueue());
            set(connector, "maxConnections", "-1");
            set(connector, "maxKeepAliveRequests", "-1");
            set(connector, "keepAliveTimeout", IDLE_TIMEOUT_MS);
            set(connector, "connectionTimeout", IDLE_TIMEOUT_MS);
            tomcat.setConnector(connector);

            StandardContext context = (StandardContext) tomcat.addContext("", null);
            // Start the servlet (Spring's context refresh) now, not lazily on the first measured
            // request and its pinned thread, and fail the start if it fails (Jetty does both).
            context.setFailCtxIfServletStartFails(true);
            Wrapper servlet = Tomcat.addServlet(context, "app", endpoint.servlet());
            servlet.setLoadOnStartup(1);
            servlet.setAsyncSupported(true);
            context.addServletMappingDecoded(endpoint.mapping(), "app");
            FilterDef def = new FilterDef();
            def.setFilterName("stats");
            def.setFilter(filter);
            def.setAsyncSupported("true");
            context.addFilterDef(def);
            FilterMap map = new FilterMap();
            map.setFilterName("stats");
            map.addURLPattern("/*");
            map.setDispatcher(DispatcherType.REQUEST.name());
            map.setDispatcher(DispatcherType.ASYNC.name());
            context.addFilterMap(map);
            tomcat.start();
            Tomcat11 started = new Tomcat11(tomcat, connector, baseDir);
            if (context.getState() != LifecycleState.STARTED) {
                started.close();
                throw new IllegalStateException("Tomcat could not start the app's servlet (see its log above)");
            }
            if (connector.getState() != LifecycleState.STARTED || connector.getLocalPort() <= 0) {
                // Tomcat logs a failed bind and carries on without its connector; we must not.
                started.close();
                throw new IOException("Tomcat could not listen on " + config.host() + ":" + config.port() + " (see its log above)");
            }
            return started;
        }

        /** A limit that silently failed to apply would cap a run unseen, so fail instead. */
        private static void set(Connector connector, String name, Object value) {
            if (!connector.setProperty(name, String.valueOf(value))) {
                throw new IllegalStateException("Tomcat connector did not take " + name + "=" + value);
            }
        }

        @Override
        public int port() {
            return connector.getLocalPort();
        }

        @Override
        public int queued() {
            Executor executor = connector.getProtocolHandler().getExecutor();
            return executor instanceof ThreadPoolExecutor pool ? pool.getQueue().size() : 0;
        }

        @Override
        public void close() throws Exception {
            tomcat.stop();
            tomcat.destroy();
            try (Stream<Path> files = Files.walk(baseDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    /**
     * WebFlux on its native runtime. Reactor Netty has no pool for application code: N event
     * loops accept, read, run the handler and write, and must never block. {@code LoopResources}
     * with 3 arguments makes one group that also accepts (the 4-argument form adds a separate
     * select group, N + 1 threads); non-daemon, so the process lives on like Jetty's and Tomcat's.
     */
    final class Netty implements Container {
        static final String LOOP_PREFIX = "netty";

        private final DisposableServer server;
        private final LoopResources loops;

        private Netty(DisposableServer server, LoopResources loops) {
            this.server = server;
            this.loops = loops;
        }

        /** The server's N event loops; made by {@link ReactorNettyOutbound} when its client shares them. */
        static LoopResources newLoops(LabConfig config) {
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
                return new Netty(server, loops);
            } catch (RuntimeException e) {
                // A port in use: the loops are non-daemon threads and would keep the JVM alive.
                stopLoops(loops);
                throw e;
            }
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
}
