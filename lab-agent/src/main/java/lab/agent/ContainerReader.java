package lab.agent;

import java.util.List;

/**
 * How the agent reads one kind of container (Tomcat, Jetty, Reactor Netty, or none it knows) from
 * outside the app's code. {@link Detector} picks one; {@link Sampler} calls {@link #sample()} every
 * 100 ms for what only a sample can catch (the peaks, which threads ran requests); /stats calls
 * {@link #read} for the rest.
 */
interface ContainerReader {

    /** What the sampler records: -1 for a figure this container does not show; null names likewise. */
    record Sample(int inFlight, int busy, List<String> handlerThreads) {
        static final Sample NONE = new Sample(-1, -1, null);
    }

    /** /stats' {@code "container"}: tomcat, jetty, netty or unknown. */
    String name();

    /**
     * True while this reader is the right one to keep: its container is still there, and nothing
     * better could be found (a reader that found a container by its threads' names only is never
     * settled: its beans may appear later). False sends {@link Detector} looking again.
     */
    boolean settled();

    /**
     * Cheap: the sampler calls it every 100 ms on the app's JVM. {@code namesSeen}: how many handler
     * threads the sampler has since the last reset (a reader may stop reading names it cannot add to).
     */
    Sample sample(int namesSeen);

    /** Puts every request figure into {@code out}, or its reason into {@code out}'s unknown. */
    void read(Reading out, Sample now, Sampler.Peaks peaks);

    /** {@code POST /stats/reset}: the counters start from zero here (baselines taken now). */
    void reset();
}
