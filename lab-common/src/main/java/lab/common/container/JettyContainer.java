package lab.common.container;

import java.time.Duration;
import java.util.EnumSet;

import jakarta.servlet.DispatcherType;

import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextRequest;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.QoSHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

import lab.common.Endpoint;
import lab.common.VirtualThreads;
import lab.common.config.LabConfig;
import lab.common.stats.Stats;
import lab.common.stats.StatsFilter;

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

    /**
     * {@code --qos}: how long a request may stay suspended, set explicitly to Jetty 12.1's own default
     * ({@code Duration.ZERO} in QoSHandler's field initializer: no limit, it waits until a permit frees).
     */
    static final Duration QOS_MAX_SUSPEND = Duration.ZERO;

    private final LabConfig config;
    /** Threads for application code now (the carriers with virtual threads): --threads, or what {@link #resize} made it. */
    private volatile int threads;
    private volatile boolean virtual;
    private final Server server;
    private final QueuedThreadPool pool;
    /** With virtual threads: the executor the platform pool hands every task to; else null. */
    private VirtualThreadPool virtualPool;
    /** {@code --qos N}: in front of the servlet context; null without the flag. */
    private final QoSHandler qos;
    /** QoSHandler's totals at the last {@link #resetLimitCounts} (it has no reset of its own). */
    private volatile long[] qosBase = new long[5];

    private JettyContainer(LabConfig config, Server server, QueuedThreadPool pool, VirtualThreadPool virtualPool, QoSHandler qos) {
        this.config = config;
        this.threads = config.threads();
        this.virtual = config.virtualThreads();
        this.server = server;
        this.pool = pool;
        this.virtualPool = virtualPool;
        this.qos = qos;
    }

    static Container start(LabConfig config, Endpoint endpoint, Stats stats) throws Exception {
        int poolSize = config.virtualThreads() ? PLATFORM_THREADS_FOR_VIRTUAL : config.threads() + 1;
        // min = max: no thread is started mid-run. The default job queue is unbounded: requests
        // beyond the pool wait there (our "queued"), none are rejected, as on Tomcat.
        QueuedThreadPool pool = new QueuedThreadPool(poolSize, poolSize);
        pool.setReservedThreads(0);
        pool.setName("jetty");
        Server server = new Server(pool);
        VirtualThreadPool virtual = config.virtualThreads() ? useVirtualThreads(server, pool) : null;
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
        QoSHandler qos = config.qos() > 0 ? qosHandler(context, config) : null;
        server.setHandler(qos != null ? qos : context);
        server.start();
        return new JettyContainer(config, server, pool, virtual, qos);
    }

    private static QoSHandler qosHandler(ServletContextHandler context, LabConfig config) {
        // --qos N: Jetty 12.1's QoSHandler, a core handler, so it wraps the whole servlet context:
        // Server -> QoSHandler -> ServletContextHandler -> StatsFilter -> servlet. A request it
        // suspends (or answers 503) has not reached StatsFilter yet: /stats' inFlight and
        // completed do not count it, its own "qos" object does (qosJson).
        //
        // How it counts, read in jetty-server 12.1.14 (QoSHandler.class, and its source in
        // jetty/jetty.project): process() takes a permit (state.decrementAndGet()); with none left it
        // suspends the request in a queue unless maxSuspendedRequestCount are suspended already, then
        // it answers rejectStatusCode (503) at once. A request with a permit goes through
        // handleWithPermit(), which calls Request.addCompletionListener(request, this::resume) before
        // the next handler: the permit comes back when the core request's exchange completes (its
        // callback succeeded or failed), not when the handler returns. So a Servlet async request
        // holds its permit until it completes, as Admission's does, and a suspended request holds no
        // thread: resume() runs the oldest one of the highest priority on the pool's executor.
        QoSHandler qos = new QoSHandler(context);
        qos.setMaxRequestCount(config.qos());
        qos.setMaxSuspendedRequestCount(config.qosSuspended());
        qos.setMaxSuspend(QOS_MAX_SUSPEND);
        return qos;
    }

    private static VirtualThreadPool useVirtualThreads(Server server, QueuedThreadPool pool) {
        // docs/traps.md #16 (virtual-thread bounds differ by container): the pool's semaphore
        // bounds running tasks, 200 by default, and a task blocked on a 1 s remote is running.
        // 0 = no bound, as on Tomcat.
        VirtualThreadPool virtual = new VirtualThreadPool(0);
        virtual.setName("jetty-virtual-");
        pool.setVirtualThreadsExecutor(virtual);
        server.addBean(virtual);
        return virtual;
    }

    @Override
    public String describe() {
        int n = threads;
        return (virtual
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
    public String describeLimits() {
        return "containerQueue=unbounded (QueuedThreadPool's job queue; use --qos)"
                + (qos == null ? " qos=none"
                    : " qos=QoSHandler maxRequestCount=" + qos.getMaxRequestCount()
                        + " maxSuspendedRequestCount=" + qos.getMaxSuspendedRequestCount()
                        + " maxSuspend=" + qos.getMaxSuspend().toMillis() + "ms"
                        + (qos.getMaxSuspend().isZero() ? " (Jetty's default: no limit)" : "")
                        + " rejectStatus=" + qos.getRejectStatusCode()
                        + " (beyond " + qos.getMaxRequestCount() + " at once, up to " + qos.getMaxSuspendedRequestCount()
                        + " wait suspended, holding no thread, then " + qos.getRejectStatusCode() + " at once; a permit is"
                        + " released when its request completes; in front of the servlet context, so a suspended or"
                        + " refused request is not in /stats inFlight)");
    }

    /**
     * {@code {"limit":N,"maxSuspended":M,"suspended":now,"requests":..,"suspendedTotal":..,"resumed":..,
     * "expired":..,"rejected":..}}: QoSHandler's own counters, the totals since the last reset.
     */
    @Override
    public String qosJson() {
        if (qos == null) return null;
        long[] now = qosTotals();
        long[] base = qosBase;
        return "{\"limit\":" + qos.getMaxRequestCount() + ",\"maxSuspended\":" + qos.getMaxSuspendedRequestCount()
                + ",\"suspended\":" + qos.getSuspendedRequestCount()
                + ",\"requests\":" + (now[0] - base[0]) + ",\"suspendedTotal\":" + (now[1] - base[1])
                + ",\"resumed\":" + (now[2] - base[2]) + ",\"expired\":" + (now[3] - base[3])
                + ",\"rejected\":" + (now[4] - base[4]) + "}";
    }

    @Override
    public void resetLimitCounts() {
        if (qos != null) qosBase = qosTotals();
    }

    private long[] qosTotals() {
        return new long[] {qos.getTotalRequestCount(), qos.getTotalSuspendedRequestCount(),
                qos.getTotalResumedRequestCount(), qos.getTotalExpiredRequestCount(), qos.getTotalExceededRequestCount()};
    }

    @Override
    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /**
     * A platform pool: N + 1 again (the selector keeps its one), min = max as at start, and
     * setMinThreads starts them now. Virtual threads: the pool of a vN start (the selector and a
     * spare) and a VirtualThreadPool as its executor. A switch between the two restarts the
     * connector on the same port: its selectors chose their executor once, when made
     * (AdaptiveExecutionStrategy's constructor reads VirtualThreads.getExecutor, jetty-util 12.1.14's
     * bytecode), and SelectorManager.doStart makes new ones. Nothing is in flight (Launcher.resize).
     */
    @Override
    public synchronized void resize(int n, boolean toVirtual) {
        int size = toVirtual ? PLATFORM_THREADS_FOR_VIRTUAL : n + 1;
        if (size < pool.getMaxThreads()) {
            throw new IllegalArgumentException("the pool only grows (" + (virtual ? "v" : "") + threads + " now, asked "
                    + (toVirtual ? "v" + n + ", which runs on " + size + " platform threads, not " + pool.getMaxThreads() : n) + ")");
        }
        ServerConnector connector = (ServerConnector) server.getConnectors()[0];
        try {
            if (toVirtual != virtual) {
                connector.setPort(connector.getLocalPort());   // a test's port 0 would get a new one
                connector.stop();
            }
            if (toVirtual && virtualPool == null) {
                virtualPool = useVirtualThreads(server, pool);
                virtualPool.start();
            } else if (!toVirtual && virtualPool != null) {
                pool.setVirtualThreadsExecutor(null);
                server.removeBean(virtualPool);
                virtualPool.stop();
                virtualPool = null;
            }
            pool.setMinThreads(size);
            pool.setMaxThreads(size);
            if (!connector.isStarted()) connector.start();
        } catch (Exception e) {
            throw new IllegalStateException("jetty could not switch its pool: " + e, e);
        }
        threads = n;
        virtual = toVirtual;
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
