package lab.agent;

import java.util.List;
import java.util.Map;

import javax.management.ObjectName;

/**
 * {@code threads}, {@code queued}, {@code carrierThreads} and {@code pool} of one Tomcat connector:
 * its ThreadPool bean's attributes and its executor, as {@link TomcatReader} documents them.
 * <ul>
 *   <li>platform: {@code threads} and {@code pool.max} are {@code maxThreads} (the executor's own most
 *       threads where the bean answers -1: an external pool), {@code queued} the executor's queue,
 *       {@code pool.busy} {@code currentThreadsBusy} (threads running a socket's task: a request, or
 *       Tomcat reading one), {@code pool.current} {@code currentThreadCount};</li>
 *   <li>virtual: {@code threads} is "v" + the scheduler's carriers ({@code pool.carriers}, and
 *       {@code pool.carriersFrom}: the -D that set them, or the JDK's default), {@code carrierThreads}
 *       the live carriers, {@code queued} 0 (a virtual thread per task: nothing waits for one).</li>
 * </ul>
 */
final class TomcatPool {

    private final ObjectName bean;
    private final Map<String, Object> attributes;
    private final TomcatExecutor executor;
    /** "platform", "virtual", or null where neither the executor's class nor its threads have told. */
    private final String kind;

    TomcatPool(ObjectName bean, Map<String, Object> attributes, TomcatExecutor executor, String kind) {
        this.bean = bean;
        this.attributes = attributes;
        this.executor = executor;
        this.kind = kind;
    }

    void read(Reading out, ContainerReader.Sample now, Sampler.Peaks peaks) {
        out.pool("source", bean.toString());
        if (kind == null) {
            String why = executor.className.equals("none") ? "the connector bean gave no executor (not started?)"
                    : "the connector's executor is a " + executor.className + ", which the agent cannot read";
            out.unknown("pool.executor", why + ": whether its threads are virtual shows once a request runs on one");
            out.unknown(List.of("threads", "queued"), why);
        } else {
            out.pool("executor", kind);
        }
        out.pool("executorClass", executor.className);
        if ("virtual".equals(kind)) virtual(out, now);
        else if ("platform".equals(kind)) platform(out);
        busy(out, now, peaks);
        Long current = nonNegative("currentThreadCount");
        if (current != null && !"virtual".equals(kind)) out.pool("current", current);
        Long connections = nonNegative("connectionCount");
        if (connections != null) out.pool("connections", connections);
        else out.unknown("pool.connections", "Tomcat counts connections only while maxConnections limits them (it is -1: unlimited)");
        if (attributes.get("maxConnections") instanceof Number max) out.pool("maxConnections", max.longValue());
    }

    private void platform(Reading out) {
        Long max = nonNegative("maxThreads");
        if (max == null && executor.max != null) max = (long) executor.max;   // -1: an external executor; its own size, if it tells
        if (max != null) {
            out.threads(Long.toString(max));
            out.pool("max", max);
        } else {
            out.unknown(List.of("threads", "pool.max"), "the connector's executor (" + executor.className + ") does not tell its size");
        }
        if (executor.queued != null) out.put("queued", executor.queued);
        else out.unknown("queued", "the connector's executor (" + executor.className + ") does not tell its queue");
    }

    private void virtual(Reading out, ContainerReader.Sample now) {
        Threads.Carriers carriers = Threads.carrierCount();
        if (carriers.count() != null) {
            out.threads("v" + carriers.count());
            out.pool("carriers", carriers.count());
        } else {
            out.unknown("threads", carriers.from());
        }
        out.pool("carriersFrom", carriers.from());
        out.put("queued", 0);
        out.names("carrierThreads", Threads.carriers());
    }

    /** pool.busy: the bean's figure, or on virtual threads the requests on one; pool.peakBusy: the sampled peak. */
    private void busy(Reading out, ContainerReader.Sample now, Sampler.Peaks peaks) {
        Long busy = "virtual".equals(kind) ? Long.valueOf(now.busy()) : nonNegative("currentThreadsBusy");
        if (busy != null && busy >= 0) {
            out.pool("busy", busy);
            out.pool("peakBusy", Math.max(peaks.peakBusy(), busy));
        } else {
            out.unknown(List.of("pool.busy", "pool.peakBusy"), "currentThreadsBusy is -1: the connector's executor ("
                    + executor.className + ") does not count its busy threads");
        }
    }

    /** A numeric attribute where it is 0 or more; null where it is absent or negative (Tomcat's "not counted"). */
    private Long nonNegative(String attribute) {
        return attributes.get(attribute) instanceof Number n && n.longValue() >= 0 ? n.longValue() : null;
    }
}
