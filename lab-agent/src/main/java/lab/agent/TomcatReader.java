package lab.agent;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import javax.management.ObjectName;

/**
 * Tomcat (embedded: domain {@code Tomcat}; standalone: {@code Catalina}), read from the beans it
 * registers for every connector (Tomcat 11's names and attributes, checked against its source and an
 * embedded Tomcat in the tests):
 * <ul>
 *   <li>{@code inFlight}: the {@code type=RequestProcessor,worker=*,name=*} beans (one per processor:
 *       a connection holds one while a request of it is processed or waits async; done, it goes back
 *       to a cache, its bean still registered, for the next) in stage 3,
 *       {@code org.apache.coyote.Constants.STAGE_SERVICE} (the request is in the servlet, on a
 *       thread), <b>plus</b> the Servlet async requests waiting off their threads. Those are not in
 *       stage 3: {@code Http11Processor.service} sets stage 7 ({@code STAGE_ENDED}) as soon as the
 *       servlet returns from {@code startAsync}, and it stays there until {@code complete()} (the
 *       request is left unrecycled). They are read as the connector's {@code waitingProcessorCount}
 *       ({@code AbstractProtocol.getWaitingProcessorCount}: the async processors parked by
 *       {@code ConnectionHandler.process} on {@code SocketState.LONG}), one cheap read for all.
 *       Stage alone would count none of an async app's waiting requests;</li>
 *   <li>{@code maxInFlight}: the most in flight at once since the last reset, sampled every 100 ms
 *       (and at each read): a burst shorter than that can fall between two samples;</li>
 *   <li>{@code completed}, {@code errors}: the {@code type=GlobalRequestProcessor,name=*} beans'
 *       {@code requestCount} and {@code errorCount}, summed over connectors, less what they were at the
 *       last reset. Tomcat counts a request when it ends ({@code RequestInfo.updateCounters}), and an
 *       error is a response with status <b>&gt;= 400</b> (lab-common's own apps count &gt;= 500);</li>
 *   <li>{@code handlerThreads}: the {@code workerThreadName} of the processors in stage 3 at each
 *       sample since the last reset (Tomcat sets it as the request enters the servlet and clears it
 *       as it leaves: an async request waits on no thread); on a virtual-thread executor the trailing
 *       number is folded to {@code *} (one virtual thread per request);</li>
 *   <li>{@code threads}, {@code queued}, {@code pool}: from the one {@code type=ThreadPool,name=*} bean
 *       ({@code maxThreads}, {@code currentThreadsBusy}, {@code currentThreadCount},
 *       {@code connectionCount}, {@code maxConnections}, {@code useVirtualThreads}) and the connector's
 *       executor ({@link TomcatExecutor}). With an external executor (Spring Boot's virtual threads)
 *       {@code AbstractEndpoint.getMaxThreads()} answers -1 and {@code currentThreadsBusy} and
 *       {@code currentThreadCount} -1 unless it is a {@code ThreadPoolExecutor}; with Tomcat's own
 *       {@code useVirtualThreads=true}, {@code maxThreads} still answers the unused setting (200 by
 *       default), so for virtual threads there is no {@code pool.max} or {@code pool.current}, and
 *       {@code pool.busy} is the requests running on a virtual thread (the stage-3 processors).
 *       {@code pool.connections} is {@code connectionCount}: Tomcat counts connections only while
 *       {@code maxConnections} limits them (-1 is unlimited), and its count is one high while its
 *       acceptor waits for the next.</li>
 * </ul>
 * Two or more connectors: the request figures are summed over them, but {@code threads},
 * {@code queued} and {@code pool} are unknown (which one the bench measures is not written anywhere).
 */
final class TomcatReader implements ContainerReader {

    static final int STAGE_SERVICE = 3;   // org.apache.coyote.Constants.STAGE_SERVICE
    private static final Pattern TRAILING_NUMBER = Pattern.compile("\\d+$");
    private static final String[] POOL = {"maxThreads", "currentThreadsBusy", "currentThreadCount", "connectionCount",
        "maxConnections"};

    private final Beans beans;
    private final String domain;
    private long completedBase;
    private long errorsBase;
    /** For an executor of a class the agent does not know: whether its request threads were virtual, once seen. */
    private volatile Boolean virtualSeen;
    private volatile int seenFor;

    TomcatReader(Beans beans, String domain) {
        this.beans = beans;
        this.domain = domain;
    }

    @Override
    public String name() {
        return "tomcat";
    }

    @Override
    public boolean settled() {
        return !pools().isEmpty();
    }

    private List<ObjectName> pools() {
        return beans.query(domain + ":type=ThreadPool,*");
    }

    /**
     * Cheap, as the sampler must be: a Tomcat attribute read costs ~10 us (its {@code ManagedBean.getGetter}
     * looks the getter up on {@code BaseModelMBean} first, and builds a NoSuchMethodException each
     * time), so only {@code stage} is read of every processor, {@code workerThreadName} of those in
     * stage 3 only while a new name can come of it ({@link #namesWanted}), and the waiting async
     * requests come in one read from the connector (its {@code waitingProcessorCount}: what
     * {@code AbstractProtocol.addWaitingProcessor} holds, the async processors parked in stage 7).
     */
    @Override
    public Sample sample(int namesSeen) {
        List<ObjectName> pools = pools();
        ObjectName pool = pools.size() == 1 ? pools.get(0) : null;
        TomcatExecutor executor = pool == null ? null : executor(pool, connector(pool));
        Long poolBusy = executor != null && executor.kind == TomcatExecutor.Kind.PLATFORM ? beans.number(pool, "currentThreadsBusy") : null;
        List<String> names = new ArrayList<>();
        // A request in the servlet holds a pool thread: a platform pool with none busy has none, and
        // its idle processors need no read (an idle app costs a few reads per sample, not one per processor).
        int service = Long.valueOf(0).equals(poolBusy) ? 0 : inService(namesWanted(executor, namesSeen), names);
        Integer waiting = waiting();
        String kind = executor == null ? null : kind(executor, names);
        if ("virtual".equals(kind)) names.replaceAll(TomcatReader::fold);
        Long busy = "virtual".equals(kind) ? Long.valueOf(service) : poolBusy;
        return new Sample(waiting == null ? -1 : service + waiting, busy == null || busy < 0 ? -1 : busy.intValue(), names);
    }

    /** How many processors are in stage 3 (in the servlet); their threads' names into {@code names} if wanted. */
    private int inService(boolean wanted, List<String> names) {
        int service = 0;
        for (ObjectName processor : beans.query(domain + ":type=RequestProcessor,*")) {
            if (!Integer.valueOf(STAGE_SERVICE).equals(beans.get(processor, "stage"))) continue;
            service++;
            if (wanted && beans.get(processor, "workerThreadName") instanceof String name) names.add(name);
        }
        return service;
    }

    /**
     * Whether a request thread's name read now could be one the sampler has not seen: not when it has
     * every thread of a platform pool already, nor any name at all on a known virtual-thread executor
     * (every one folds to the same). Else (another executor, two connectors) always.
     */
    private static boolean namesWanted(TomcatExecutor executor, int namesSeen) {
        if (executor == null || namesSeen == 0) return true;
        if (executor.kind == TomcatExecutor.Kind.VIRTUAL) return false;
        return executor.kind != TomcatExecutor.Kind.PLATFORM || executor.max == null || namesSeen < executor.max;
    }

    /** The Servlet async requests parked off their threads, summed over the connectors; null where one does not tell. */
    private Integer waiting() {
        int waiting = 0;
        for (ObjectName connector : beans.query(domain + ":type=Connector,*")) {
            if (!(beans.get(connector, "waitingProcessorCount") instanceof Integer n)) return null;
            waiting += n;
        }
        return waiting;
    }

    /** "platform", "virtual", or null: by the executor's class, else by its request threads once one ran. */
    private String kind(TomcatExecutor executor, List<String> requestThreads) {
        if (executor.kind != TomcatExecutor.Kind.OTHER) return executor.label();
        if ((virtualSeen == null || seenFor != executor.identity) && !requestThreads.isEmpty()) {
            // Virtual threads are in no list of the JVM's threads: a request thread that is not there is one.
            seenFor = executor.identity;
            virtualSeen = !new HashSet<>(Threads.names()).containsAll(requestThreads);
        }
        Boolean virtual = seenFor == executor.identity ? virtualSeen : null;
        return virtual == null ? null : virtual ? "virtual" : "platform";
    }

    /** The executor of the pool's connector; {@code useVirtualThreads} is read only where the connector gives none. */
    private TomcatExecutor executor(ObjectName pool, ObjectName connector) {
        Object executor = connector == null ? null : beans.get(connector, "executor");
        return TomcatExecutor.of(executor, executor == null && Boolean.TRUE.equals(beans.get(pool, "useVirtualThreads")));
    }

    /**
     * The Connector bean of the pool's connector: the one in the domain, or the one on the pool's port.
     * (A Connector bean's attributes are read through {@code IntrospectionUtils}: no exception, cheap.)
     */
    private ObjectName connector(ObjectName pool) {
        List<ObjectName> connectors = beans.query(domain + ":type=Connector,*");
        if (connectors.size() == 1) return connectors.get(0);
        Object localPort = beans.get(pool, "localPort");
        for (ObjectName connector : connectors) {
            if (localPort != null && localPort.equals(beans.get(connector, "localPort"))) return connector;
        }
        return null;
    }

    static String fold(String name) {
        String folded = TRAILING_NUMBER.matcher(name).replaceFirst("*");
        return folded.isEmpty() ? "virtual" : folded;
    }

    @Override
    public void read(Reading out, Sample now, Sampler.Peaks peaks) {
        if (now.inFlight() >= 0) {
            out.put("inFlight", now.inFlight());
            out.put("maxInFlight", Math.max(peaks.maxInFlight(), now.inFlight()));
        } else {
            out.unknown(List.of("inFlight", "maxInFlight"), "a connector bean gave no waitingProcessorCount (its async requests)");
        }
        counts(out);
        if (peaks.namesOverflow()) {       // a count cut short would read as a measured one
            out.unknown("handlerThreads", "more than " + Sampler.MAX_NAMES + " threads ran requests since the last reset "
                    + "(the agent keeps that many names)");
        } else {
            out.names("handlerThreads", peaks.handlerThreads());
        }
        List<ObjectName> pools = pools();
        if (pools.size() != 1) {
            out.unknown(List.of("threads", "queued", "pool"), pools.size() + " Tomcat connectors (" + pools
                    + "): the agent cannot tell which one the bench measures");
            return;
        }
        Map<String, Object> pool = beans.get(pools.get(0), POOL);
        TomcatExecutor executor = executor(pools.get(0), connector(pools.get(0)));
        new TomcatPool(pools.get(0), pool, executor, kind(executor, List.of())).read(out, now, peaks);
    }

    /** completed and errors: the GlobalRequestProcessor beans' sums less the baselines. */
    private void counts(Reading out) {
        long[] counts = globalCounts();
        if (counts == null) {
            out.unknown(List.of("completed", "errors"), "no GlobalRequestProcessor bean in " + domain);
        } else if (counts[0] < completedBase || counts[1] < errorsBase) {
            out.unknown(List.of("completed", "errors"), "Tomcat's request counts went down since the last reset (a connector"
                    + " restarted, or its counters were reset): unknown until POST /stats/reset");
        } else {
            out.put("completed", counts[0] - completedBase);
            out.put("errors", counts[1] - errorsBase);
        }
    }

    /** {requestCount, errorCount} summed over the connectors, or null where none is there to read. */
    private long[] globalCounts() {
        List<ObjectName> globals = beans.query(domain + ":type=GlobalRequestProcessor,*");
        if (globals.isEmpty()) return null;
        long requests = 0;
        long errors = 0;
        for (ObjectName global : globals) {
            Map<String, Object> counts = beans.get(global, "requestCount", "errorCount");
            if (!(counts.get("requestCount") instanceof Number r) || !(counts.get("errorCount") instanceof Number e)) return null;
            requests += r.longValue();
            errors += e.longValue();
        }
        return new long[] {requests, errors};
    }

    @Override
    public void reset() {
        long[] counts = globalCounts();
        completedBase = counts == null ? 0 : counts[0];
        errorsBase = counts == null ? 0 : counts[1];
    }
}
