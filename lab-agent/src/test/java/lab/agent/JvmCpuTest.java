package lab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * /stats' {@code jvm} object (issue 26): the process's CPU moves with work done in it, measured
 * against the thread's own CPU clock (a relation, not a speed); the compiler threads are found and
 * their CPU is part of the process's; HotSpot's compile time is kept. For the cost card (issue 39):
 * the heap bytes allocated grow with what a thread allocates, what ended threads and virtual
 * threads allocated stays in the total (and is lost by the live-threads sum older JDK 17s fall back
 * to, which says so); a collection moves gcCount.
 */
class JvmCpuTest {

    private static final int MIB = 1 << 20;
    /** Where the tests' arrays escape to, so the JIT cannot drop them. */
    static volatile byte[] sink;

    @Test
    void cpuFollowsWorkAndTheCompilerIsPartOfIt() throws Exception {
        String before = JvmCpu.toJson();
        long threadCpu = burnCpu(300);   // 300 ms of this thread's own CPU
        String after = JvmCpu.toJson();
        long grew = field(after, "cpuMs") - field(before, "cpuMs");
        // The process's CPU grew by at least the thread's (ProcessHandle rounds to the ms; 10 % room).
        assertTrue(grew >= 0.9 * threadCpu / 1e6, "process CPU grew " + grew + " ms for " + threadCpu / 1e6 + " ms of this thread's: " + before + " -> " + after);
        assertTrue(field(after, "compilerThreads") >= 1, "no C1/C2 compiler thread in /proc/self/task: " + after);
        long compiler = field(after, "compilerCpuMs");
        assertTrue(compiler >= 0 && compiler <= field(after, "cpuMs"), after);
        assertTrue(field(after, "compileMs") >= 0, after);
    }

    /** The JSON keeps its first four keys, in their order and format; the new ones follow. */
    @Test
    void theKeysAndTheirOrder() {
        String json = JvmCpu.toJson();
        assertTrue(json.matches("\\{\"cpuMs\":\\d+,\"compilerCpuMs\":-?\\d+,\"compilerThreads\":\\d+,\"compileMs\":-?\\d+"
                + ",\"allocatedBytes\":\\d+,\"allocatedBytesHow\":\"(total|live threads only)\",\"gcCount\":-?\\d+,\"gcTimeMs\":-?\\d+"
                + ",\"profiledCodeKb\":-?\\d+,\"nonProfiledCodeKb\":-?\\d+\\}"), json);
        // On every JDK this suite runs on (21+, and 17.0.11+ by the backport) the JVM's own total
        String how = JvmCpu.TOTAL_ALLOCATED_AVAILABLE ? JvmCpu.TOTAL : JvmCpu.LIVE_THREADS_ONLY;
        assertEquals(how, how(json), "getTotalThreadAllocatedBytes is " + (JvmCpu.TOTAL_ALLOCATED_AVAILABLE ? "" : "not ")
                + "in JDK " + System.getProperty("java.version"));
    }

    /** Tiered HotSpot with its default 240 MiB code cache segments it: both heaps are there, and code is in them. */
    @Test
    void theCodeHeapsAreRead() {
        boolean segmented = ManagementFactory.getMemoryPoolMXBeans().stream()
                .anyMatch(pool -> pool.getName().equals(JvmCpu.NON_PROFILED));
        String json = JvmCpu.toJson();
        if (segmented) {
            assertTrue(field(json, "nonProfiledCodeKb") > 0 && field(json, "profiledCodeKb") > 0, json);
        } else {
            assertEquals(-1, field(json, "nonProfiledCodeKb"), json);
        }
    }

    /** 64 MiB allocated by this thread: allocatedBytes grows by at least that (others allocate too). */
    @Test
    void allocatedBytesFollowsAllocation() {
        for (String how : new String[] {null, JvmCpu.LIVE_THREADS_ONLY}) {
            long before = allocated(how);
            for (int i = 0; i < 64; i++) sink = new byte[MIB];
            long grew = allocated(how) - before;
            assertTrue(grew >= 64L * MIB && grew < 96L * MIB, (how == null ? "the JDK's figure" : how) + " grew by " + grew);
        }
    }

    /**
     * A thread that allocated 32 MiB and ended: still in the total (HotSpot adds its bytes to
     * exited_allocated_bytes as it leaves), gone from the live-threads sum.
     */
    @Test
    void whatEndedThreadsAllocatedStaysInTheTotal() throws Exception {
        assumeTrue(JvmCpu.TOTAL_ALLOCATED_AVAILABLE, "no getTotalThreadAllocatedBytes in JDK " + System.getProperty("java.version"));
        long total = allocated(null);
        long live = allocated(JvmCpu.LIVE_THREADS_ONLY);
        Thread thread = new Thread(() -> {
            for (int i = 0; i < 32; i++) sink = new byte[MIB];
        }, "allocates-and-ends");
        thread.start();
        thread.join();
        long totalGrew = allocated(null) - total;
        long liveGrew = allocated(JvmCpu.LIVE_THREADS_ONLY) - live;
        assertTrue(totalGrew >= 32L * MIB, "the total grew by " + totalGrew + " for 32 MiB of an ended thread");
        assertTrue(liveGrew < 32L * MIB, "the live threads' sum grew by " + liveGrew + ": it cannot count an ended thread");
    }

    /**
     * A virtual thread allocates through its carrier's TLAB: its 32 MiB are in the total, and the
     * per-thread figure is -1 on it (JDK 21+).
     */
    @Test
    void whatVirtualThreadsAllocatedIsInTheTotal() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+ (running " + System.getProperty("java.version") + ")");
        long total = allocated(null);
        long[] own = new long[1];
        Thread virtual = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, (Runnable) () -> {
            for (int i = 0; i < 32; i++) sink = new byte[MIB];
            own[0] = ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
        });
        virtual.join();
        assertEquals(-1, own[0], "getCurrentThreadAllocatedBytes on a virtual thread");
        long grew = allocated(null) - total;
        assertTrue(grew >= 32L * MIB, "the total grew by " + grew + " for 32 MiB of a virtual thread");
    }

    /** A collection (System.gc(): a full one) moves gcCount by at least one, and gcTimeMs does not step down. */
    @Test
    void aCollectionMovesGcCount() {
        String before = JvmCpu.toJson();
        System.gc();
        String after = JvmCpu.toJson();
        assertTrue(field(after, "gcCount") >= field(before, "gcCount") + 1, before + " -> " + after);
        assertTrue(field(after, "gcTimeMs") >= field(before, "gcTimeMs") && field(before, "gcTimeMs") >= 0, before + " -> " + after);
    }

    /** About {@code ms} of this thread's CPU (bounded by 15 s of wall time); the thread CPU ns it used. */
    static long burnCpu(long ms) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpuStart = mx.getCurrentThreadCpuTime();
        long cpuEnd = cpuStart + ms * 1_000_000L;
        long wallEnd = System.nanoTime() + 15_000_000_000L;
        double x = 0;
        while (mx.getCurrentThreadCpuTime() < cpuEnd && System.nanoTime() < wallEnd) {
            for (int i = 0; i < 100_000; i++) x += Math.sqrt(x + i);
        }
        if (x == 42) System.out.println(x);   // keep x alive
        return mx.getCurrentThreadCpuTime() - cpuStart;
    }

    /** allocatedBytes as /stats says it: the JDK's way (null) or the live threads' sum. */
    private static long allocated(String how) {
        String json = how == null ? JvmCpu.toJson() : "{" + JvmCpu.allocatedJson(null).substring(1) + "}";
        if (how != null) assertEquals(how, how(json), json);
        return field(json, "allocatedBytes");
    }

    private static String how(String json) {
        Matcher m = Pattern.compile("\"allocatedBytesHow\":\"([^\"]*)\"").matcher(json);
        assertTrue(m.find(), json);
        return m.group(1);
    }

    private static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(-?\\d+)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return Long.parseLong(m.group(1));
    }
}
