package lab.common.work;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import javax.management.JMException;
import javax.management.ObjectName;

/**
 * {@code cpu=<N>us}: a fixed computation, the same number of iterations on every call, that costs
 * N µs of CPU on this machine. Inside it there is no call, no syscall and no allocation: a chain
 * of xorshift steps on one {@code long} in registers, each step depending on the last (so the
 * JIT can neither vectorise it nor skip it, and its speed does not depend on memory), whose
 * result goes to a volatile field at the end (so the JIT cannot drop it as dead code).
 *
 * <p>How many iterations make N µs is measured once per JVM ({@link #calibration}), on a
 * platform thread of its own (a virtual thread has no CPU clock: {@code getCurrentThreadCpuTime}
 * is -1 there):
 * <ol>
 *   <li>{@link #burn} (and {@link #spin} in it) runs until C2 has compiled both, the code every
 *       request then runs: {@value #WARM_CALLS} calls of {@value #WARM_ITERATIONS} iterations (C2's
 *       invocation threshold is 5,000 with tiered compilation), then on, asking HotSpot's {@code
 *       Compiler.codelist} (the DiagnosticCommand MBean, jcmd's command) every few ms, until it lists
 *       both at level 4 in use; at most {@value #C2_WAIT_MS} ms. Measured, not assumed: in a JVM whose
 *       JIT is busy (a test JVM at start, a 2-core box building) spin ran at tier 3 (C1 with profiling,
 *       1.80 ns an iteration here, against 1.45-1.55 for C2 and for C1 without profiling) for the
 *       whole of a calibration that had waited only for its rounds to agree, and made the work 15 %
 *       short;</li>
 *   <li>rounds of about {@value #ROUND_NANOS} ns of thread CPU time ({@code
 *       ThreadMXBean.getCurrentThreadCpuTime}, CLOCK_THREAD_CPUTIME_ID on Linux), at least {@value
 *       #MIN_ROUNDS}, and on until the medians of the two halves of the last {@value #MIN_ROUNDS} agree
 *       within {@value #STABLE_SPREAD} (a compilation that lands mid-way is a step between them); at
 *       most {@value #MAX_ROUNDS}: a box so noisy that they never agree takes its rounds all the same
 *       and says so ({@link Calibration#describe});</li>
 *   <li>the cost of one iteration is the lowest median of {@value #WINDOW} rounds in a row (40 ms)
 *       among all the rounds: a busy spell (this box is a 2-core VM shared with builds and benches)
 *       only ever adds CPU time to the rounds it overlaps, and a median of 8 is not fooled by one
 *       fast round. Against a 300 ms run measured right after, in 6 fresh JVMs (3 with two CPU hogs
 *       running through the calibration), it was within 3.4 %; the median of the last 40 rounds
 *       was up to 8.7 % high (a calibration that took it made cpu= 7 % short in a test), the
 *       median of 5 rounds that agreed once 7 % high.</li>
 * </ol>
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
    /** Rounds in a row whose median is one candidate for the cost of an iteration. */
    static final int WINDOW = 8;
    static final double STABLE_SPREAD = 0.01;
    static final int MAX_ROUNDS = 400;
    static final long C2_WAIT_MS = 10_000;
    /** How {@code Compiler.codelist} names the methods: {@code lab.common.work.Cpu.spin(JI)J}, {@code ...burn(J)V}. */
    private static final String SPIN = Cpu.class.getName() + ".spin(";
    private static final String BURN = Cpu.class.getName() + ".burn(";

    /** Where each run's result goes, so that the JIT must compute it. Never 0 once read back by {@link #burn}. */
    private static volatile long sink = 0x9E3779B97F4A7C15L;
    private static volatile Calibration calibration;

    private Cpu() {
    }

    /** The cost of one iteration on this JVM: measured on first use (about 0.3 s, more while the JIT is busy), then kept. */
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
     * @param nanosPerIteration the lowest median of {@value #WINDOW} rounds in a row
     * @param rounds            how many rounds were measured
     * @param spread            (80th - 20th percentile) / median, over the last {@value #MIN_ROUNDS} rounds
     * @param stable            whether their two halves agreed within {@value #STABLE_SPREAD}
     * @param jit               what {@code Compiler.codelist} said of spin before the rounds
     * @param millis            the calibration's own wall time
     */
    record Calibration(double nanosPerIteration, int rounds, double spread, boolean stable, String jit, long millis) {

        /** The iterations that cost {@code micros} µs of CPU. */
        long iterationsFor(long micros) {
            return Math.max(1, Math.round(micros * 1_000.0 / nanosPerIteration));
        }

        String describe() {
            return String.format("%.3f ns of CPU per iteration (%s; the lowest median of %d rounds in a row of %d rounds of ~%d ms, the last %d within %.2f %% from 20th to 80th percentile%s; %d ms)",
                    nanosPerIteration, jit, WINDOW, rounds, ROUND_NANOS / 1_000_000, Math.min(MIN_ROUNDS, rounds), spread * 100,
                    stable ? "" : "; their halves never agreed within " + STABLE_SPREAD * 100 + " %: the box is busy", millis);
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

    /**
     * Runs {@link #spin} until HotSpot's {@code Compiler.codelist} lists it compiled by C2 (level 4,
     * state 0: in use), at most {@value #C2_WAIT_MS} ms; says what it saw.
     */
    static String untilC2Compiled() {
        long start = System.nanoTime();
        for (int i = 0; i < WARM_CALLS; i++) burn(WARM_ITERATIONS);
        try {
            while (true) {
                long ms = (System.nanoTime() - start) / 1_000_000;
                if (compiledByC2(SPIN) && compiledByC2(BURN)) return "burn and spin compiled by C2 after " + ms + " ms";
                if (ms > C2_WAIT_MS) return "burn and spin NOT both compiled by C2 within " + C2_WAIT_MS + " ms: the JIT is busy";
                for (int i = 0; i < 5_000; i++) burn(WARM_ITERATIONS);   // ~7 ms
            }
        } catch (JMException | RuntimeException e) {
            return "C2 not checked: no Compiler.codelist (" + e + ")";
        }
    }

    /**
     * Whether {@code jcmd <pid> Compiler.codelist} lists {@code method} at level 4 in use (lines
     * {@code "id level state lab.common.work.Cpu.spin(JI)J [...]"}, state 0 = in use).
     */
    static boolean compiledByC2(String method) throws JMException {
        String list = (String) ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
                "compilerCodelist", new Object[] {null}, new String[] {String[].class.getName()});
        for (String line : list.split("\n")) {
            String[] fields = line.trim().split(" ");
            if (fields.length > 3 && fields[3].startsWith(method) && fields[1].equals("4") && fields[2].equals("0")) return true;
        }
        return false;
    }

    /** The median; of an even number of values, the mean of the middle two. */
    static double median(List<Double> values) {
        List<Double> sorted = sorted(values);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
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
        String jit = untilC2Compiled();
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
            List<Double> window = rates.subList(rates.size() - MIN_ROUNDS, rates.size());
            double first = median(window.subList(0, MIN_ROUNDS / 2));
            double second = median(window.subList(MIN_ROUNDS / 2, MIN_ROUNDS));
            boolean stable = Math.abs(second - first) / second <= STABLE_SPREAD;
            if (stable || round == MAX_ROUNDS) {
                List<Double> last = sorted(window);
                double median = last.get(MIN_ROUNDS / 2);
                double spread = (last.get(MIN_ROUNDS * 4 / 5) - last.get(MIN_ROUNDS / 5)) / median;
                double quietest = Double.MAX_VALUE;
                for (int i = 0; i + WINDOW <= rates.size(); i++) quietest = Math.min(quietest, median(rates.subList(i, i + WINDOW)));
                return new Calibration(quietest, round, spread, stable, jit, (System.nanoTime() - start) / 1_000_000);
            }
        }
        throw new AssertionError("unreachable");
    }
}
