package lab.agent;

/**
 * The agent's {@code GET /stats}: the shape lab-common's own /stats has, read from outside the app.
 * <pre>
 * {"app":"boot-service","container":"tomcat","threads":8,"inFlight":2,"queued":0,"maxInFlight":8,
 *  "completed":1200,"errors":0,"handlerThreads":["http-nio-8080-exec-1",...],
 *  "liveThreads":31,"peakThreads":33,"heapUsedBytes":41943040,"jvm":{...},
 *  "pool":{"source":"Tomcat:type=ThreadPool,name=\"http-nio-8080\"","executor":"platform",...},
 *  "unknown":{"pool.connections":"..."},"agent":{"sampleMs":100,"samples":412,"lastSampleUs":85}}
 * </pre>
 * Every key, in its order. A request figure the agent cannot read in this container is <b>absent</b>
 * and named in {@code unknown} with its reason; nothing stands in for it.
 * <ul>
 *   <li>{@code app}: the agent's {@code app=} argument;</li>
 *   <li>{@code container}: "tomcat", "jetty", "netty" or "unknown" ({@link Detector});</li>
 *   <li>{@code threads}: the pool as the lab's {@code --threads} writes it: a platform pool's most
 *       threads (8), or "v" + the virtual-thread scheduler's carriers ("v1"); Netty: its event loops;</li>
 *   <li>{@code inFlight}: requests the container is serving now (Tomcat: on a thread, and Servlet async
 *       ones waiting off it);</li>
 *   <li>{@code queued}: requests waiting in the container's executor for a thread (0 on virtual threads);</li>
 *   <li>{@code maxInFlight}: the most in flight at once since the last reset, <b>sampled every 100 ms</b>
 *       ({@link Sampler}) and at each read;</li>
 *   <li>{@code completed}, {@code errors}: requests the container finished since the last reset, and
 *       those among them it counts as errors (Tomcat: status &gt;= 400);</li>
 *   <li>{@code handlerThreads}: the threads seen running a request since the last reset (sampled every
 *       100 ms); a virtual thread's trailing number folded to {@code *};</li>
 *   <li>{@code carrierThreads}: only on virtual threads: the scheduler's live carriers
 *       ({@code ForkJoinPool-1-worker-1});</li>
 *   <li>{@code liveThreads}, {@code peakThreads}, {@code heapUsedBytes}, {@code jvm}: the JVM's own,
 *       written by the code lab-common's /stats uses ({@link Jvm#figuresJson()});</li>
 *   <li>{@code pool}: where the pool figures came from and the rest of them: {@code source} (the bean,
 *       or the thread names), {@code executor} ("platform", "virtual", "event-loop"),
 *       {@code executorClass}, {@code max}, {@code busy}, {@code peakBusy} (sampled), {@code current},
 *       {@code carriers} and {@code carriersFrom} (virtual), {@code connections} and
 *       {@code maxConnections} (Tomcat), {@code leased} (Jetty), {@code loops} (Netty): each container's
 *       reader says which it has ({@link TomcatReader}, {@link JettyReader}, {@link NettyReader});</li>
 *   <li>{@code unknown}: figure → why it could not be read ({@code pool.<member>} for a member of pool);
 *       absent when every figure was read;</li>
 *   <li>{@code agent}: {@code sampleMs} (the sampler's period), {@code samples} (taken since the last
 *       reset), {@code lastSampleUs} (what the last one cost the app, in µs).</li>
 * </ul>
 * {@code POST /stats/reset} ({@link #reset()}) zeroes completed and errors (baselines taken now),
 * starts maxInFlight and peakBusy again from what is in flight and busy now, clears handlerThreads,
 * and resets the JVM's peak thread count.
 */
final class AgentStats implements AutoCloseable {

    private final String app;
    private final Detector detector;
    private final Sampler sampler;

    /** {@code periodic}: false for tests that want no sampler thread (each read still samples). */
    AgentStats(String app, boolean periodic) {
        this.app = app;
        this.detector = new Detector(new Beans());
        this.sampler = new Sampler(detector, periodic);
    }

    synchronized String toJson() {
        ContainerReader reader = detector.current();
        ContainerReader.Sample now = sampler.sample(reader);
        Sampler.Peaks peaks = sampler.peaks();
        Reading reading = new Reading();
        reader.read(reading, now, peaks);
        String agent = "{\"sampleMs\":" + Sampler.PERIOD_MS + ",\"samples\":" + peaks.samples()
                + ",\"lastSampleUs\":" + sampler.lastSampleNanos() / 1000 + "}";
        return reading.toJson(app, reader.name(), agent);
    }

    /** Zeroes the counters (requests in flight stay counted); the stats after it. */
    synchronized String reset() {
        detector.current().reset();
        sampler.reset();
        Jvm.resetPeak();
        return toJson();
    }

    /** The sampler: tests sample by hand with it. */
    Sampler sampler() {
        return sampler;
    }

    @Override
    public void close() {
        sampler.close();
    }
}
