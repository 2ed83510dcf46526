package lab.agent;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What only a sample can catch from outside the app's code, kept between resets: the most requests
 * in flight at once ({@code maxInFlight}), the most busy pool threads ({@code pool.peakBusy}), and
 * the threads seen running a request ({@code handlerThreads}). Taken every {@value #PERIOD_MS} ms by
 * one daemon thread, {@code lab-agent-sampler}, and at every /stats read: a request that starts and
 * ends between two samples is in {@code completed} but may be in none of these.
 *
 * <p>The same tick finds the container ({@link Detector}) until there is one: the app starts its
 * server after the agent's premain.
 */
final class Sampler implements AutoCloseable {

    static final long PERIOD_MS = 100;
    /**
     * handlerThreads' bound: a pool that names a thread per task (virtual threads are folded) cannot grow it
     * without end. The lab's largest pool (its apps' --threads cap), so that no pool the lab sets is cut short:
     * at 1,000 a Boot pool of 2,000 read "1000 handler threads" in a sweep (2026-11-28).
     */
    static final int MAX_NAMES = 10_000;

    /** The peaks since the last reset; -1 where no sample has shown the figure. namesOverflow: a name was dropped. */
    record Peaks(int maxInFlight, int peakBusy, List<String> handlerThreads, boolean namesOverflow, long samples) {
    }

    private final Detector detector;
    private final ScheduledExecutorService timer;
    private int maxInFlight = -1;
    private int peakBusy = -1;
    private final Set<String> handlerThreads = new TreeSet<>();
    private boolean namesOverflow;
    private long samples;
    private long lastSampleNanos;

    /** {@code periodic}: false for tests that sample by hand ({@link #sample()}). */
    Sampler(Detector detector, boolean periodic) {
        this.detector = detector;
        if (!periodic) {
            timer = null;
            return;
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "lab-agent-sampler");
            thread.setDaemon(true);
            return thread;
        });
        timer.scheduleWithFixedDelay(this::tick, 0, PERIOD_MS, TimeUnit.MILLISECONDS);
    }

    private void tick() {
        try {
            sample();
        } catch (RuntimeException | LinkageError e) {
            // A periodic task that throws is never run again: one bad read must not end the sampling.
        }
    }

    /** One sample of the current container, recorded; what it read. */
    ContainerReader.Sample sample() {
        return sample(detector.current());
    }

    /** One sample of {@code reader}'s container (the one a /stats read is reading), recorded. */
    synchronized ContainerReader.Sample sample(ContainerReader reader) {
        long start = System.nanoTime();
        ContainerReader.Sample sample = reader.sample(handlerThreads.size());
        maxInFlight = Math.max(maxInFlight, sample.inFlight());
        peakBusy = Math.max(peakBusy, sample.busy());
        if (sample.handlerThreads() != null) {
            for (String name : sample.handlerThreads()) {
                if (handlerThreads.size() < MAX_NAMES) {
                    handlerThreads.add(name);
                } else if (!handlerThreads.contains(name)) {
                    namesOverflow = true;
                }
            }
        }
        samples++;
        lastSampleNanos = System.nanoTime() - start;
        return sample;
    }

    synchronized Peaks peaks() {
        return new Peaks(maxInFlight, peakBusy, List.copyOf(handlerThreads), namesOverflow, samples);
    }

    /** How long the last sample took, in ns (the agent's own cost on the app, every {@value #PERIOD_MS} ms). */
    synchronized long lastSampleNanos() {
        return lastSampleNanos;
    }

    /** Starts the peaks again from what is in flight and busy now (requests in flight stay counted). */
    synchronized void reset() {
        handlerThreads.clear();
        namesOverflow = false;
        maxInFlight = -1;
        peakBusy = -1;
        samples = 0;
        sample();
    }

    @Override
    public void close() {
        if (timer != null) timer.shutdownNow();
    }
}
