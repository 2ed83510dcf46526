package lab.common.work;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * {@code cpu=<N>us}: a fixed computation, the same number of iterations on every call, that costs
 * N µs of CPU on this machine. Inside it there is no call, no syscall and no allocation: a chain
 * of xorshift steps on one {@code long} in registers, each step depending on the last (so the
 * JIT can neither vectorise it nor skip it, and its speed does not depend on memory), whose
 * result goes to a volatile field at the end (so the JIT cannot drop it as dead code).
 *
 * <p>How many iterations make N µs is measured once per JVM ({@link #calibration}), on a
 * platform thread of its own (a virtual thread has no CPU clock: {@code getCurrentThreadCpuTime}
 * is -1 there): {@value #WARM_CALLS} calls of {@value #WARM_ITERATIONS} iterations first, so that
 * the JIT compiles {@link #spin} as an ordinary method (C2's invocation threshold is 5,000 with
 * tiered compilation; it is compiled within ~40 ms here), then rounds of about {@value
 * #ROUND_NANOS} ns of thread CPU time ({@code ThreadMXBean.getCurrentThreadCpuTime},
 * CLOCK_THREAD_CPUTIME_ID on Linux): at least {@value #MIN_ROUNDS}, and on until the last
 * {@value #STABLE_ROUNDS} agree within {@value #STABLE_SPREAD} (a compilation that lands mid-way
 * makes the rounds after it faster than the ones before). The cost of one iteration is then the
 * median of the last {@value #MIN_ROUNDS} rounds (200 ms): in 8 fresh JVMs here it was within 3 %
 * (6 times within 1 %) of what a 200 ms run measured right after, while the fastest rounds were
 * 1-10 % below that, so a low percentile would have made the work too short;
 * and 40 rounds outlast a busy spell that 5 do not (a median of 5 rounds that agreed was once 7 %
 * slow: the box was busy for all 5). At most {@value #MAX_ROUNDS} rounds: a box so noisy that no
 * {@value #STABLE_ROUNDS} agree takes the median all the same and says so ({@link
 * Calibration#describe}).
 *
 * <p>What it cannot hold fixed: a computation's CPU time depends on the core it runs on. A
 * hyper-thread sibling busy with other work, another clock speed, or (in a VM) a host busy with
 * other guests makes the same iterations take more (or less) CPU time than at calibration; and
 * JVMs differ by a few % in the code they compile for the loop, which is why each calibrates its
 * own. The bench checks the figure with perf.
 */
final class Cpu {

    static final int WARM_CALLS = 20_000;
    static final int WARM_ITERATIONS = 1_000;
    /** The iterations {@link #burn} hands {@link #spin} at a time (an int loop: C2's counted loop). */
    static final int CHUNK = 1 << 16;
    static final long ROUND_NANOS = 5_000_000;
    static final int MIN_ROUNDS = 40;
    static final int STABLE_ROUNDS = 5;
    static final double STABLE_SPREAD = 0.01;
    static final int MAX_ROUNDS = 400;

    /** Where each run's result goes, so that the JIT must compute it. Never 0 once read back by {@link #burn}. */
    private static volatile long sink = 0x9E3779B97F4A7C15L;
    private static volatile Calibration calibration;

    private Cpu() {
    }

    /** The cost of one iteration on this JVM: measured on first use (about 0.25 s), then kept. */
    static Calibration calibration() {
        Calibration known = calibration;
        if (known != null) return known;
        synchronized (Cpu.class) {
            if (calibration == null) calibration = calibrateOnAPlatformThread();
            return calibration;
        }
    }

    /** {@code iterations} xorshift steps, chunk by chunk; the result into {@link #sink}. */
    static void burn(long iterations) {
        long x = sink | 1;   // xorshift keeps a non-zero value non-zero
        for (long left = iterations; left > 0; left -= CHUNK) {
            x = spin(x, (int) Math.min(left, CHUNK));
        }
        sink = x;
    }

    /** The computation: Marsaglia's xorshift64, {@code iterations} dependent steps. */
    static long spin(long seed, int iterations) {
        long x = seed;
        for (int i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /**
     * The measurement: ns of thread CPU per iteration, with how it was reached.
     *
     * @param nanosPerIteration the median of the last {@value #MIN_ROUNDS} rounds
     * @param rounds            how many rounds were measured
     * @param spread            (80th - 20th percentile) / median, over the same rounds
     * @param stable            whether the last {@value #STABLE_ROUNDS} rounds agreed within {@value #STABLE_SPREAD}
     * @param millis            the calibration's own wall time
     */
    record Calibration(double nanosPerIteration, int rounds, double spread, boolean stable, long millis) {

        /** The iterations that cost {@code micros} µs of CPU. */
        long iterationsFor(long micros) {
            return Math.max(1, Math.round(micros * 1_000.0 / nanosPerIteration));
        }

        String describe() {
            return String.format("%.3f ns of CPU per iteration (the median of the last %d of %d rounds of ~%d ms, 20th to 80th percentile %.2f %%%s; %d ms)",
                    nanosPerIteration, Math.min(MIN_ROUNDS, rounds), rounds, ROUND_NANOS / 1_000_000, spread * 100,
                    stable ? "" : "; the last " + STABLE_ROUNDS + " never agreed within " + STABLE_SPREAD * 100 + " %: the box is busy", millis);
        }
    }

    private static Calibration calibrateOnAPlatformThread() {
        Calibration[] result = new Calibration[1];
        RuntimeException[] failure = new RuntimeException[1];
        Thread thread = new Thread(() -> {
            try {
                result[0] = calibrate(ManagementFactory.getThreadMXBean());
            } catch (RuntimeException e) {
                failure[0] = e;
            }
        }, "work-calibration");
        thread.setDaemon(true);
        thread.start();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while calibrating --work cpu=", e);
        }
        if (failure[0] != null) throw failure[0];
        return result[0];
    }

    private static List<Double> sorted(List<Double> values) {
        List<Double> copy = new ArrayList<>(values);
        Collections.sort(copy);
        return copy;
    }

    static Calibration calibrate(ThreadMXBean threads) {
        if (!threads.isCurrentThreadCpuTimeSupported() || threads.getCurrentThreadCpuTime() < 0) {
            throw new IllegalStateException("--work cpu= needs the thread CPU clock (ThreadMXBean.getCurrentThreadCpuTime)");
        }
        long start = System.nanoTime();
        long x = sink | 1;
        for (int i = 0; i < WARM_CALLS; i++) x = spin(x, WARM_ITERATIONS);
        sink = x;
        long iterations = 1_000_000;
        List<Double> rates = new ArrayList<>();
        for (int round = 1; round <= MAX_ROUNDS; round++) {
            long before = threads.getCurrentThreadCpuTime();
            burn(iterations);
            long cpu = threads.getCurrentThreadCpuTime() - before;
            double rate = Math.max(cpu, 1) / (double) iterations;
            rates.add(rate);
            iterations = Math.max(CHUNK, Math.round(ROUND_NANOS / rate));
            if (round < MIN_ROUNDS) continue;
            List<Double> last = sorted(rates.subList(rates.size() - STABLE_ROUNDS, rates.size()));
            boolean stable = (last.get(STABLE_ROUNDS - 1) - last.get(0)) / last.get(STABLE_ROUNDS / 2) <= STABLE_SPREAD;
            if (stable || round == MAX_ROUNDS) {
                List<Double> window = sorted(rates.subList(rates.size() - MIN_ROUNDS, rates.size()));
                double median = window.get(MIN_ROUNDS / 2);
                double spread = (window.get(MIN_ROUNDS * 4 / 5) - window.get(MIN_ROUNDS / 5)) / median;
                return new Calibration(median, round, spread, stable, (System.nanoTime() - start) / 1_000_000);
            }
        }
        throw new AssertionError("unreachable");
    }
}
