package lab.agent;

import java.util.List;

import javax.management.ObjectName;

/**
 * Jetty with its pool's bean published: an app that adds Jetty's {@code MBeanContainer} to its
 * server (most do not: then {@link Unseen} with {@link Unseen#NO_JETTY_BEAN}). The bean is the
 * {@code QueuedThreadPool}'s, {@code org.eclipse.jetty.util.thread:type=queuedthreadpool,id=N}, whose
 * {@code @ManagedAttribute} getters (Jetty 12.1) this reads:
 * <ul>
 *   <li>{@code threads} and {@code pool.max}: {@code maxThreads}, the pool's size as Jetty's own
 *       {@code --threads} would set it;</li>
 *   <li>{@code queued}: {@code queueSize}, the jobs waiting for a thread (requests, and Jetty's own
 *       tasks);</li>
 *   <li>{@code pool.busy}: {@code busyThreads}, which counts the threads Jetty leases for good to its
 *       selectors and acceptors too ({@code pool.leased}: {@code leasedThreads}); {@code pool.current}:
 *       {@code threads}; {@code pool.peakBusy}: the most busy threads the sampler saw (sampled every
 *       100 ms).</li>
 * </ul>
 * {@code pool.executor} is "virtual" where Jetty's {@code VirtualThreadPool} is published as a bean
 * beside it (requests then run on virtual threads; {@code threads} is "v" + the carriers), else
 * "platform": a VirtualThreadPool the app set on its pool without publishing it is not seen.
 * No Jetty bean counts requests or names their threads: inFlight, completed, errors and
 * handlerThreads are unknown.
 */
final class JettyReader implements ContainerReader {

    static final String POOLS = "org.eclipse.jetty.util.thread:type=queuedthreadpool,*";
    static final String VIRTUAL_POOLS = "org.eclipse.jetty.util.thread:type=virtualthreadpool,*";
    static final String NO_REQUESTS = "Jetty's pool bean counts threads, not requests (add a StatisticsHandler to count them;"
            + " the agent does not read it)";

    private final Beans beans;

    JettyReader(Beans beans) {
        this.beans = beans;
    }

    @Override
    public String name() {
        return "jetty";
    }

    @Override
    public boolean settled() {
        return !beans.query(POOLS).isEmpty();
    }

    @Override
    public Sample sample(int namesSeen) {
        ObjectName pool = onePool();
        Long busy = pool == null ? null : beans.number(pool, "busyThreads");
        return new Sample(-1, busy == null ? -1 : busy.intValue(), null);
    }

    @Override
    public void read(Reading out, Sample now, Sampler.Peaks peaks) {
        out.unknown(List.of("inFlight", "maxInFlight", "completed", "errors"), NO_REQUESTS);
        out.unknown("handlerThreads", "Jetty's beans do not name the threads that run requests");
        List<ObjectName> pools = beans.query(POOLS);
        if (pools.size() != 1) {
            out.unknown(List.of("threads", "queued", "pool"), pools.size() + " Jetty thread pools published (" + pools
                    + "): the agent cannot tell which one serves the app's requests");
            return;
        }
        ObjectName pool = pools.get(0);
        Long max = beans.number(pool, "maxThreads");
        Long queued = beans.number(pool, "queueSize");
        boolean virtual = !beans.query(VIRTUAL_POOLS).isEmpty();
        if (virtual) {
            Threads.Carriers carriers = Threads.carrierCount();
            if (carriers.count() != null) out.threads("v" + carriers.count());
            else out.unknown("threads", carriers.from());
            out.names("carrierThreads", Threads.carriers());
        } else if (max != null) {
            out.threads(Long.toString(max));
        }
        if (queued != null) out.put("queued", queued);
        out.pool("source", pool.toString());
        out.pool("executor", virtual ? "virtual" : "platform");
        member(out, "max", max);
        member(out, "busy", beans.number(pool, "busyThreads"));
        member(out, "leased", beans.number(pool, "leasedThreads"));
        if (peaks.peakBusy() >= 0) out.pool("peakBusy", peaks.peakBusy());
        member(out, "current", beans.number(pool, "threads"));
        if (!out.has("threads")) out.unknown("threads", "the pool bean " + pool + " gave no maxThreads");
        if (queued == null) out.unknown("queued", "the pool bean " + pool + " gave no queueSize");
    }

    private static void member(Reading out, String key, Long value) {
        if (value != null) out.pool(key, value);
        else out.unknown("pool." + key, "the Jetty pool bean gave no value");
    }

    private ObjectName onePool() {
        List<ObjectName> pools = beans.query(POOLS);
        return pools.size() == 1 ? pools.get(0) : null;
    }

    @Override
    public void reset() {
        // nothing counted here: the sampler's peak is reset by the sampler
    }
}
