package lab.agent;

import java.lang.reflect.Method;
import java.util.Collection;
import java.util.Set;

/**
 * What runs a Tomcat connector's requests, told from the live executor object its Connector bean
 * answers for {@code executor}. (The ThreadPool bean has no such attribute: its descriptor lists
 * none. The Connector's {@code ConnectorMBean.getAttribute} falls through {@code IntrospectionUtils}
 * to {@code Connector.getProperty}, which asks the protocol handler's {@code getExecutor()}: the
 * object itself, since the agent reads in-process.) Only public API of public classes is called on
 * it, by reflection: the agent cannot link against the app's Tomcat, which its own class loader
 * (a Spring Boot jar's, say) holds.
 * <ul>
 *   <li>platform: Tomcat's {@code org.apache.tomcat.util.threads.ThreadPoolExecutor} (its internal
 *       pool, {@code maxThreads}), a JDK {@code ThreadPoolExecutor}, or a shared
 *       {@code StandardThreadExecutor} ({@code <Executor>} in server.xml): max and queue are read;</li>
 *   <li>virtual: Tomcat's {@code VirtualThreadExecutor} (its own with {@code useVirtualThreads=true},
 *       and Spring Boot's {@code spring.threads.virtual.enabled=true}, which sets
 *       {@code new VirtualThreadExecutor("tomcat-handler-")} on the protocol handler) or
 *       {@code StandardVirtualThreadExecutor}: a virtual thread per task, nothing queues (0);</li>
 *   <li>other: any other class (an {@code Executors.newVirtualThreadPerTaskExecutor()}, a metrics
 *       wrapper): neither max nor queue can be read, and whether its threads are virtual is told by
 *       the threads themselves ({@link TomcatReader}).</li>
 * </ul>
 */
final class TomcatExecutor {

    enum Kind { PLATFORM, VIRTUAL, OTHER }

    static final String TOMCAT_POOL = "org.apache.tomcat.util.threads.ThreadPoolExecutor";
    static final String SHARED_POOL = "org.apache.catalina.core.StandardThreadExecutor";
    static final Set<String> VIRTUAL = Set.of("org.apache.tomcat.util.threads.VirtualThreadExecutor",
            "org.apache.catalina.core.StandardVirtualThreadExecutor");

    final Kind kind;
    final String className;
    /** Tasks waiting for a thread; null where it cannot be read. */
    final Integer queued;
    /** The pool's most threads; null where it cannot be read (and for virtual: there is no such thing). */
    final Integer max;
    /** Which executor object it was (its identity hash): what is learnt of an OTHER one holds for it alone. */
    final int identity;

    private TomcatExecutor(Kind kind, String className, Integer queued, Integer max, int identity) {
        this.kind = kind;
        this.className = className;
        this.queued = queued;
        this.max = max;
        this.identity = identity;
    }

    /**
     * {@code executor}: what the Connector bean answered (null where it gave none); {@code useVirtualThreads}:
     * the ThreadPool bean's attribute, which alone tells Tomcat's own virtual executor before it is made.
     */
    static TomcatExecutor of(Object executor, boolean useVirtualThreads) {
        if (executor == null) {
            return new TomcatExecutor(useVirtualThreads ? Kind.VIRTUAL : Kind.OTHER, "none", useVirtualThreads ? 0 : null, null, 0);
        }
        String type = executor.getClass().getName();
        int identity = System.identityHashCode(executor);
        if (executor instanceof java.util.concurrent.ThreadPoolExecutor pool) {
            return new TomcatExecutor(Kind.PLATFORM, type, pool.getQueue().size(), pool.getMaximumPoolSize(), identity);
        }
        if (type.equals(TOMCAT_POOL)) {
            Object queue = call(executor, "getQueue");
            return new TomcatExecutor(Kind.PLATFORM, type, queue instanceof Collection<?> c ? c.size() : null,
                    asInt(call(executor, "getMaximumPoolSize")), identity);
        }
        if (type.equals(SHARED_POOL)) {
            return new TomcatExecutor(Kind.PLATFORM, type, asInt(call(executor, "getQueueSize")),
                    asInt(call(executor, "getMaxThreads")), identity);
        }
        if (VIRTUAL.contains(type)) return new TomcatExecutor(Kind.VIRTUAL, type, 0, null, identity);
        return new TomcatExecutor(Kind.OTHER, type, null, null, identity);
    }

    /** A public no-argument method of the executor's public class, or null where it cannot be called. */
    private static Object call(Object target, String method) {
        try {
            Method m = target.getClass().getMethod(method);
            return m.invoke(target);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;   // not public, or in a module that does not open it to us: unread, not guessed
        }
    }

    private static Integer asInt(Object value) {
        return value instanceof Number n ? n.intValue() : null;
    }

    /** /stats' {@code pool.executor}: "platform", "virtual", or null where the class does not say. */
    String label() {
        return kind == Kind.PLATFORM ? "platform" : kind == Kind.VIRTUAL ? "virtual" : null;
    }
}
