package lab.common.work;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import lab.common.config.WorkSpec;

/**
 * {@code --work}'s pieces each move their own counter by the amount asked (issue 39's acceptance:
 * cpu ± 5 %, alloc ± 2 %, syscalls ± 0.5), measured on this thread's own counters: thread CPU time
 * ({@code getCurrentThreadCpuTime}), heap bytes allocated ({@code getCurrentThreadAllocatedBytes}),
 * and {@code syscw} of {@code /proc/thread-self/io} (Linux). And each moves no other: the
 * computation allocates nothing and writes nothing, the allocation writes nothing.
 *
 * <p>CPU is a relation measured against a control in the same test (the same loop of runs with no
 * work): a box busy elsewhere preempts this thread, which thread CPU time does not count, but a
 * busy hyper-thread sibling or a cold cache can make the same iterations cost more; so the best
 * of {@value #TRIES} tries counts, as in ModelTiming, and each try is printed.
 */
class WorkTest {

    static final int TRIES = 3;
    private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final Path IO = Path.of("/proc/thread-self/io");
    private static final Pattern SYSCW = Pattern.compile("(?m)^syscw: (\\d+)$");

    /**
     * cpu=N adds N µs of thread CPU per run, ± 5 %, against the same loop with no work. Each try
     * calibrates afresh just before it ({@link Cpu#calibrate}, what the JVM does once at its start):
     * this box's own speed drifts by several % over seconds (a shared 2-core VM), and the test is
     * of the calibration, not of the box's drift since the JVM started.
     */
    @ParameterizedTest(name = "cpu={0}us")
    @ValueSource(ints = {100, 500, 2_000})
    void cpuAddsWhatItAsksFor(int micros) {
        Work none = Work.of(WorkSpec.NONE);
        int runs = 200_000 / micros;   // ~200 ms of work per try
        List<String> tries = new ArrayList<>();
        for (int i = 1; i <= TRIES; i++) {
            Cpu.Calibration calibration = Cpu.calibrate(THREADS);
            Work work = Work.of(new WorkSpec(micros, 0, 0), null, calibration);
            long control = cpuOf(none, runs);
            long worked = cpuOf(work, runs);
            double addedMicros = (worked - control) / 1_000.0 / runs;
            double error = addedMicros / micros - 1;
            tries.add(String.format("try %d: %.1f us per run (%+.2f %%), %d iterations at %s", i, addedMicros, error * 100,
                    work.cpuIterations(), calibration.describe()));
            if (Math.abs(error) <= 0.05) {
                System.out.printf("cpu=%dus: %s%n", micros, tries);
                return;
            }
        }
        throw new AssertionError("cpu=" + micros + "us is not within 5 % on any try: " + tries);
    }

    /**
     * The calibration itself: the JVM's, made once (spin and burn compiled by C2 first, per
     * Compiler.codelist), and a fresh one, whose cost of an iteration a long run measures right
     * after (± 5 %).
     */
    @Test
    void theCalibrationHoldsOnALongRun() {
        Cpu.Calibration once = Cpu.calibration();
        assertTrue(once.nanosPerIteration() > 0 && once.rounds() >= Cpu.MIN_ROUNDS, once.describe());
        assertTrue(once.jit().startsWith("burn and spin compiled by C2 after "), once.describe());
        List<String> tries = new ArrayList<>();
        for (int i = 1; i <= TRIES; i++) {
            Cpu.Calibration calibration = Cpu.calibrate(THREADS);
            long iterations = calibration.iterationsFor(50_000);   // 50 ms
            long before = THREADS.getCurrentThreadCpuTime();
            Cpu.burn(iterations);
            double nanosPerIteration = (THREADS.getCurrentThreadCpuTime() - before) / (double) iterations;
            double error = nanosPerIteration / calibration.nanosPerIteration() - 1;
            tries.add(String.format("try %d: %.3f ns per iteration (%+.2f %%) against %s", i, nanosPerIteration, error * 100,
                    calibration.describe()));
            if (Math.abs(error) <= 0.05) {
                System.out.println("calibration at start " + once.describe() + "; again: " + tries);
                return;
            }
        }
        throw new AssertionError("the calibration does not hold: " + tries);
    }

    /** The computation allocates nothing and makes no write(2) (the run's thread recording is off here: no Stats). */
    @Test
    void cpuAllocatesAndWritesNothing() throws IOException {
        Work work = Work.of(new WorkSpec(50, 0, 0));
        for (int i = 0; i < 2_000; i++) work.run();   // compiled by now
        long writes = syscw();   // (reading it allocates: before the allocation counter is read)
        long bytes = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 1_000; i++) work.run();
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - bytes;
        assertTrue(allocated < 1_000, allocated + " bytes allocated by 1,000 runs of cpu=50us");
        if (writes >= 0) assertEquals(writes, syscw(), "write syscalls made by the computation");
    }

    /**
     * alloc=N adds N bytes of heap per run, N rounded up to 8 (the object alignment): at least N, at
     * most N x 1.02 + 8. Measured after the JIT has compiled the run, so a scalar-replaced
     * allocation (0 bytes) would show.
     */
    @ParameterizedTest(name = "alloc={0}")
    @ValueSource(ints = {64, 100, 4_096, 65_536, 100_001, 1 << 20, 8 << 20})
    void allocAddsWhatItAsksFor(int bytes) {
        Work work = Work.of(new WorkSpec(0, bytes, 0));
        int runs = (int) Math.max(20, Math.min(20_000, (256L << 20) / bytes));
        for (int i = 0; i < runs; i++) work.run();
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < runs; i++) work.run();
        double perRun = (THREADS.getCurrentThreadAllocatedBytes() - before) / (double) runs;
        long expected = (bytes + 7) / 8 * 8;
        System.out.printf("alloc=%d: %.1f bytes per run over %d runs (array header %d)%n", bytes, perRun, runs, Work.ARRAY_HEADER);
        assertTrue(perRun >= bytes && perRun <= bytes * 1.02 + 8, "alloc=" + bytes + ": " + perRun + " bytes per run");
        assertEquals(expected, perRun, 1.0, "alloc=" + bytes + " is one array of exactly that size on the heap");
    }

    /** The largest allocation asked for, 64 MiB, a few times: exact too (outside any TLAB). */
    @Test
    void theLargestAllocationIsExactToo() {
        Work work = Work.of(new WorkSpec(0, WorkSpec.MAX_ALLOC, 0));
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 3; i++) work.run();
        assertEquals(3L * WorkSpec.MAX_ALLOC, THREADS.getCurrentThreadAllocatedBytes() - before);
    }

    /** syscalls=K makes K write(2)s per run, exactly (Linux: syscw of /proc/thread-self/io). */
    @ParameterizedTest(name = "syscalls={0}")
    @ValueSource(ints = {1, 10, 1_000})
    void syscallsMakeKWrites(int k) throws IOException {
        assumeTrue(syscw() >= 0, "needs /proc/thread-self/io (Linux)");
        Work work = Work.of(new WorkSpec(0, 0, k));
        int runs = 100;
        long before = syscw();
        for (int i = 0; i < runs; i++) work.run();
        assertEquals((long) k * runs, syscw() - before, "write syscalls for " + runs + " runs of syscalls=" + k);
    }

    /** The writes allocate nothing; the allocation writes nothing. */
    @Test
    void syscallsAllocateNothingAndAllocWritesNothing() throws IOException {
        Work writes = Work.of(new WorkSpec(0, 0, 10));
        for (int i = 0; i < 2_000; i++) writes.run();
        long bytes = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 1_000; i++) writes.run();
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - bytes;
        assertTrue(allocated < 1_000, allocated + " bytes allocated by 10,000 writes");
        long before = syscw();
        assumeTrue(before >= 0, "needs /proc/thread-self/io (Linux)");
        Work alloc = Work.of(new WorkSpec(0, 65_536, 0));
        for (int i = 0; i < 1_000; i++) alloc.run();
        assertEquals(before, syscw(), "write syscalls made by 1,000 allocations");
    }

    /** All three at once: each counter moves by its own amount. */
    @Test
    void allThreeTogether() throws IOException {
        Work work = Work.of(WorkSpec.parse("cpu=200us alloc=65536 syscalls=10"));
        for (int i = 0; i < 200; i++) work.run();
        long writes = syscw();   // (reading it allocates: before the allocation counter is read)
        long cpu = THREADS.getCurrentThreadCpuTime();
        long bytes = THREADS.getCurrentThreadAllocatedBytes();
        int runs = 500;
        for (int i = 0; i < runs; i++) work.run();
        double cpuMicros = (THREADS.getCurrentThreadCpuTime() - cpu) / 1_000.0 / runs;
        double allocated = (THREADS.getCurrentThreadAllocatedBytes() - bytes) / (double) runs;
        assertEquals(65_536, allocated, 1.0);
        if (writes >= 0) assertEquals(10L * runs, syscw() - writes);
        // The writes and the allocation cost CPU too (a few µs): here only a rough check, the exact one is cpuAddsWhatItAsksFor
        assertTrue(cpuMicros >= 190 && cpuMicros < 400, cpuMicros + " us of CPU per run of cpu=200us alloc=65536 syscalls=10");
        String line = work.describe();
        assertTrue(line.startsWith("work: cpu=200us,alloc=65536,syscalls=10 per request") && line.contains(" xorshift iterations at ")
                && line.contains("one byte[" + (65_536 - Work.ARRAY_HEADER) + "]") && line.contains("10 is that many 1-byte write(2)s"), line);
    }

    @Test
    void noWorkIsNothing() {
        Work none = Work.of(WorkSpec.NONE);
        assertNull(none.describe());
        assertEquals(0, none.cpuIterations());
        none.run();
        long bytes = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 1_000; i++) none.run();
        assertTrue(THREADS.getCurrentThreadAllocatedBytes() - bytes < 1_000);
    }

    /** Thread CPU ns of {@code runs} runs of {@code work} on this thread. */
    private static long cpuOf(Work work, int runs) {
        long before = THREADS.getCurrentThreadCpuTime();
        for (int i = 0; i < runs; i++) work.run();
        return THREADS.getCurrentThreadCpuTime() - before;
    }

    /** This thread's write syscalls so far ({@code syscw}); -1 without /proc/thread-self/io. */
    static long syscw() throws IOException {
        if (!Files.isReadable(IO)) return -1;
        Matcher m = SYSCW.matcher(Files.readString(IO));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }
}
