package lab.common.container;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.Executor;
import java.util.stream.Stream;

import jakarta.servlet.DispatcherType;

import org.apache.catalina.LifecycleException;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;

import lab.common.Endpoint;
import lab.common.VirtualThreads;
import lab.common.config.LabConfig;
import lab.common.stats.Stats;
import lab.common.stats.StatsFilter;

/** Tomcat's acceptor and poller threads live outside its executor, so maxThreads=N is N. */
final class TomcatContainer implements Container {
    private final LabConfig config;
    /** maxThreads now (the carriers with virtual threads): --threads, or what {@link #resize} made it. */
    private volatile int threads;
    private volatile boolean virtual;
    private final Tomcat tomcat;
    private final Connector connector;
    private final Path baseDir;

    private TomcatContainer(LabConfig config, Tomcat tomcat, Connector connector, Path baseDir) {
        this.config = config;
        this.threads = config.threads();
        this.virtual = config.virtualThreads();
        this.tomcat = tomcat;
        this.connector = connector;
        this.baseDir = baseDir;
    }

    static Container start(LabConfig config, Endpoint endpoint, Stats stats) throws Exception {
        Tomcat tomcat = new Tomcat();
        // Tomcat needs a work directory: a fresh one, private (0700, a name no one can make first;
        // a fixed /tmp/lab-tomcat-PORT was 0755 and outlived every KILLed app). The bench points
        // java.io.tmpdir into its run's own directory, which it deletes: a KILLed app's goes with it.
        Path baseDir = Files.createTempDirectory("lab-tomcat-");
        // A JVM can exit while a close is still waiting for Tomcat's stop (Launcher.stop joins it
        // only until its deadline): Tomcat had emptied the directory by then, and ~18 empty ones
        // were left in /tmp per test run. deleteOnExit removes it then, if empty.
        baseDir.toFile().deleteOnExit();
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = connector(config);
        tomcat.setConnector(connector);
        StandardContext context = context(tomcat, config, endpoint, stats);
        tomcat.start();
        TomcatContainer started = new TomcatContainer(config, tomcat, connector, baseDir);
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

    /** The HTTP connector with its pool (or virtual threads) and every limit set on purpose. */
    private static Connector connector(LabConfig config) {
        Connector connector = new Connector("HTTP/1.1");
        connector.setPort(config.port());
        set(connector, "address", config.host());
        if (config.virtualThreads() && config.containerQueue() > 0) {
            throw new IllegalArgumentException(LabConfig.containerLimitRefusal("tomcat", true, config.containerQueue(), 0));
        }
        if (config.virtualThreads()) {
            // Tomcat's VirtualThreadExecutor: a virtual thread per request, no pool, no queue;
            // maxThreads is ignored (docs/traps.md #11 and #16).
            set(connector, "useVirtualThreads", true);
        } else {
            set(connector, "maxThreads", config.threads());
            set(connector, "minSpareThreads", config.threads());
            // By default requests beyond the pool wait in the executor's queue, none are rejected:
            // that queue is what a 1-thread sync row measures (Jetty's job queue is unbounded as well).
            //
            // --container-queue N bounds it (AbstractEndpoint.createExecutor: new TaskQueue(maxQueueSize),
            // a LinkedBlockingQueue of that capacity). What Tomcat 11.0.25 then does with one more, read in
            // its classes: ThreadPoolExecutor.execute retries TaskQueue.force, which respects the capacity,
            // and throws RejectedExecutionException; AbstractEndpoint.processSocket catches it, logs WARN
            // "Executor rejected socket [...] for processing" and returns false; NioEndpoint.Poller.processKey
            // then closes the socket. No HTTP answer is written, no 503: the client reads end of stream
            // before any byte, within milliseconds (QueueLimitContract; a FIN, not a reset, though the
            // request is unread: the JDK shuts a Selector-registered channel down for writing first). What
            // queues is a socket's processing task, not a request: a kept-alive connection's next request
            // is rejected the same way. With the pool at maxThreads TaskQueue.offer queues every task, the
            // hand-off to an idle thread too, so a burst on an idle pool admits N to threads + N (traps.md #40).
            set(connector, "maxQueueSize", config.containerQueue() > 0 ? config.containerQueue() : Integer.MAX_VALUE);
        }
        set(connector, "acceptCount", config.acceptQueue());
        set(connector, "maxConnections", "-1");
        set(connector, "maxKeepAliveRequests", "-1");
        set(connector, "keepAliveTimeout", IDLE_TIMEOUT_MS);
        set(connector, "connectionTimeout", IDLE_TIMEOUT_MS);
        return connector;
    }

    /** The root context: the app's servlet, and the stats filter on every REQUEST and ASYNC dispatch. */
    private static StandardContext context(Tomcat tomcat, LabConfig config, Endpoint endpoint, Stats stats) {
        StandardContext context = (StandardContext) tomcat.addContext("", null);
        // Start the servlet (Spring's context refresh) now, not lazily on the first measured
        // request and its pinned thread, and fail the start if it fails (Jetty does both).
        context.setFailCtxIfServletStartFails(true);
        Wrapper servlet = Tomcat.addServlet(context, "app", endpoint.servlet());
        servlet.setLoadOnStartup(1);
        servlet.setAsyncSupported(true);
        map(context, endpoint.mapping(), "app");
        FilterDef def = new FilterDef();
        def.setFilterName("stats");
        def.setFilter(new StatsFilter(stats, config.asyncTimeoutMs()));
        def.setAsyncSupported("true");
        context.addFilterDef(def);
        FilterMap map = new FilterMap();
        map.setFilterName("stats");
        map.addURLPattern("/*");
        map.setDispatcher(DispatcherType.REQUEST.name());
        map.setDispatcher(DispatcherType.ASYNC.name());
        context.addFilterMap(map);
        return context;
    }

    /** A limit that silently failed to apply would cap a run unseen, so fail instead. */
    private static void set(Connector connector, String name, Object value) {
        if (!connector.setProperty(name, String.valueOf(value))) {
            throw new IllegalStateException("Tomcat connector did not take " + name + "=" + value);
        }
    }

    @Override
    public String describe() {
        return (virtual
                ? "tomcat useVirtualThreads=true (a virtual thread per request; maxThreads does not apply, nothing"
                    + " queues: only maxConnections could limit it) " + VirtualThreads.describeCarriers()
                : "tomcat maxThreads=" + threads + " (exec threads run application code; acceptor and poller"
                    + " are outside the pool) maxQueueSize=" + (config.containerQueue() > 0
                        ? config.containerQueue() + " (--container-queue: beyond it Tomcat closes the connection, no 503)"
                        : "unbounded"))
                + " acceptCount=" + config.acceptQueue() + " maxConnections=unlimited maxKeepAliveRequests=unlimited"
                + " keepAliveTimeout=" + IDLE_TIMEOUT_MS + "ms asyncTimeout=" + config.asyncTimeoutMs() + "ms";
    }

    @Override
    public String describeLimits() {
        return (config.containerQueue() > 0
                ? "containerQueue=" + config.containerQueue() + " (Tomcat executor maxQueueSize; a rejected connection is"
                    + " closed without an HTTP answer, no 503)"
                : "containerQueue=unbounded") + " qos=none";
    }

    @Override
    public int port() {
        return connector.getLocalPort();
    }

    /**
     * A platform pool: the endpoint passes maxThreads and minSpareThreads on to its running executor
     * (AbstractEndpoint.setMaxThreads / setMinSpareThreads, Tomcat 11.0.25); max first, as core may
     * not exceed it. prestartAllCoreThreads: all N running now, as a fresh start has them. A switch
     * between platform and virtual threads restarts the connector: Tomcat reads useVirtualThreads only
     * when it makes its executor (AbstractEndpoint.createExecutor, at start), and stop shuts the old
     * one down, its threads with it. The socket stays bound (bindOnInit), so the port is kept.
     * Nothing is in flight (Launcher.resize).
     */
    @Override
    public synchronized void resize(int n, boolean toVirtual) {
        if (!virtual && !toVirtual && n < threads) {
            throw new IllegalArgumentException("the pool only grows (" + threads + " now, asked " + n + ")");
        }
        try {
            if (toVirtual != virtual) {
                connector.stop();
                set(connector, "useVirtualThreads", toVirtual);
            }
            if (!toVirtual) {
                set(connector, "maxThreads", n);
                set(connector, "minSpareThreads", n);
            }
            if (connector.getState() != LifecycleState.STARTED) connector.start();
        } catch (LifecycleException e) {
            throw new IllegalStateException("tomcat could not switch its pool: " + e, e);
        }
        Executor executor = connector.getProtocolHandler().getExecutor();
        if (toVirtual) {
            if (executor instanceof ThreadPoolExecutor) throw new IllegalStateException("Tomcat kept its thread pool for useVirtualThreads");
        } else if (!(executor instanceof ThreadPoolExecutor pool) || pool.getMaximumPoolSize() != n || pool.getCorePoolSize() != n) {
            throw new IllegalStateException("Tomcat's executor did not take maxThreads=" + n);
        } else {
            pool.prestartAllCoreThreads();
        }
        threads = n;
        virtual = toVirtual;
    }

    /** The executor's queue; with vN there is no pool and so no queue (0). */
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

    /**
     * Tomcat 11 marks both forms of {@code addServletMappingDecoded} deprecated (their JSP wildcard
     * flag goes in Tomcat 12), yet it is still how an embedded context maps a servlet, and
     * {@code Wrapper.addMapping} alone does not reach the context's mapper. Kept in one place so the
     * build's console stays free of the warning.
     */
    @SuppressWarnings("deprecation")
    private static void map(StandardContext context, String pattern, String servletName) {
        context.addServletMappingDecoded(pattern, servletName);
    }

}
