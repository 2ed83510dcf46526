package lab.common;

import java.io.IOException;
import java.nio.file.Files;
import java.util.EnumSet;

import jakarta.servlet.DispatcherType;

import org.apache.catalina.Context;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * An embedded container whose request pool is pinned so that {@code --threads N} means the same
 * on both: exactly N threads may run application code (lab-notes trap 4). Every other limit that
 * could cap a run (accept queue, connections, keep-alive, async timeout) is set here on purpose
 * and printed by {@link #describe}.
 */
public interface Container extends AutoCloseable {

    int IDLE_TIMEOUT_MS = 30_000;

    int port();

    static Container start(LabConfig config, Endpoint endpoint, StatsFilter filter) throws Exception {
        // The one switch to extend for a Reactor Netty container or a virtual-thread pool mode.
        return switch (config.container()) {
            case "jetty" -> Jetty.start(config, endpoint, filter);
            case "tomcat" -> Tomcat11.start(config, endpoint, filter);
            default -> throw new IllegalArgumentException("unknown container " + config.container());
        };
    }

    /** What "N threads" is on this container, and the limits around it. */
    static String describe(LabConfig config) {
        int n = config.threads();
        return switch (config.container()) {
            case "jetty" -> "jetty QueuedThreadPool max=" + (n + 1) + " (" + n
                    + " for application code + 1 selector that also accepts; 0 acceptors, 0 reserved)"
                    + " jobQueue=unbounded acceptQueue=" + config.acceptQueue() + " maxConnections=unlimited idleTimeout=" + IDLE_TIMEOUT_MS + "ms";
            case "tomcat" -> "tomcat maxThreads=" + n + " (exec threads run application code; acceptor and poller are outside the pool)"
                    + " maxQueueSize=unbounded acceptCount=" + config.acceptQueue() + " maxConnections=unlimited maxKeepAliveRequests=unlimited"
                    + " keepAliveTimeout=" + IDLE_TIMEOUT_MS + "ms";
            default -> config.container();
        };
    }

    /**
     * Jetty leases its selector (and by default acceptors and reserved threads) from the same
     * pool, and refuses to start when the pool is not larger than what it leases. So the pool is
     * N + 1: one selector that also accepts (0 acceptors), no reserved threads, N left for us.
     */
    final class Jetty implements Container {
        private final Server server;

        private Jetty(Server server) {
            this.server = server;
        }

        static Container start(LabConfig config, Endpoint endpoint, StatsFilter filter) throws Exception {
            int poolSize = config.threads() + 1;
            QueuedThreadPool pool = new QueuedThreadPool(poolSize, poolSize);
            pool.setReservedThreads(0);
            pool.setName("jetty");
            Server server = new Server(pool);
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
            return new Jetty(server);
        }

        @Override
        public int port() {
            return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
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

        private Tomcat11(Tomcat tomcat, Connector connector) {
            this.tomcat = tomcat;
            this.connector = connector;
        }

        static Container start(LabConfig config, Endpoint endpoint, StatsFilter filter) throws Exception {
            Tomcat tomcat = new Tomcat();
            tomcat.setBaseDir(Files.createTempDirectory("lab-tomcat").toString());
            Connector connector = new Connector("HTTP/1.1");
            connector.setPort(config.port());
            set(connector, "address", config.host());
            set(connector, "maxThreads", config.threads());
            set(connector, "minSpareThreads", config.threads());
            // Requests beyond the pool wait in the executor's queue, none are rejected: that queue
            // is what a 1-thread sync row measures (Jetty's job queue is unbounded as well).
            set(connector, "maxQueueSize", Integer.MAX_VALUE);
            set(connector, "acceptCount", config.acceptQueue());
            set(connector, "maxConnections", "-1");
            set(connector, "maxKeepAliveRequests", "-1");
            set(connector, "keepAliveTimeout", IDLE_TIMEOUT_MS);
            set(connector, "connectionTimeout", IDLE_TIMEOUT_MS);
            tomcat.setConnector(connector);

            Context context = tomcat.addContext("", null);
            Wrapper servlet = Tomcat.addServlet(context, "app", endpoint.servlet());
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
            Tomcat11 started = new Tomcat11(tomcat, connector);
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
        public void close() throws Exception {
            tomcat.stop();
            tomcat.destroy();
        }
    }
}
