package lab.common;

import java.util.EnumSet;

import jakarta.servlet.DispatcherType;

import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextRequest;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * Jetty leases its selector (and by default acceptors and reserved threads) from the same
 * pool, and refuses to start when the pool is not larger than what it leases. So the pool is
 * N + 1: one selector that also accepts (0 acceptors), no reserved threads, N left for us.
 */
final class JettyContainer implements Container {
    /**
     * With vN the platform pool runs no application code, only the selector; Jetty refuses a
     * pool no larger than what it leases, so one spare thread.
     */
    static final int PLATFORM_THREADS_FOR_VIRTUAL = 2;

    private final LabConfig config;
    private final Server server;
    private final QueuedThreadPool pool;

    private JettyContainer(LabConfig config, Server server, QueuedThreadPool pool) {
        this.config = config;
        this.server = server;
        this.pool = pool;
    }

    static Container start(LabConfig config, Endpoint endpoint, Stats stats) throws Exception {
        int poolSize = config.virtualThreads() ? PLATFORM_THREADS_FOR_VIRTUAL : config.threads() + 1;
        // min = max: no thread is started mid-run. The default job queue is unbounded: requests
        // beyond the pool wait there (our "queued"), none are rejected, as on Tomcat.
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
        // The core request's completion listener runs when the exchange has ended, failed writes
        // included, where Jetty may never call the AsyncListener's onComplete: it backs up the
        // release of an async request's admission permit (StatsFilter).
        FilterHolder filter = new FilterHolder(new StatsFilter(stats, config.asyncTimeoutMs(),
                (request, task) -> Request.addCompletionListener(
                        ServletContextRequest.getServletContextRequest(request), failure -> task.run())));
        filter.setAsyncSupported(true);
        context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
        server.setHandler(context);
        server.start();
        return new JettyContainer(config, server, pool);
    }

    @Override
    public String describe() {
        int n = config.threads();
        return (config.virtualThreads()
                ? "jetty VirtualThreadPool maxConcurrentTasks=unbounded (a virtual thread per task; Jetty's default"
                    + " of 200 would cap a 1 s remote at ~200 req/s) runs every request and dispatch; platform"
                    + " QueuedThreadPool max=" + PLATFORM_THREADS_FOR_VIRTUAL + " (1 selector that also accepts"
                    + " + 1 spare, no application code; 0 acceptors, 0 reserved) " + VirtualThreads.describeCarriers()
                : "jetty QueuedThreadPool max=" + (n + 1) + " (" + n
                    + " for application code + 1 selector that also accepts; 0 acceptors, 0 reserved) jobQueue=unbounded")
                + " acceptQueue=" + config.acceptQueue() + " maxConnections=unlimited idleTimeout=" + IDLE_TIMEOUT_MS + "ms"
                + " asyncTimeout=" + config.asyncTimeoutMs() + "ms";
    }

    @Override
    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** Jobs waiting in the pool's unbounded job queue for a thread. */
    @Override
    public int queued() {
        return pool.getQueueSize();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
