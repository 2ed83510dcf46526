package lab.agent;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The {@code jvm} object of /stats (issue 26): how much of this JVM's CPU went to its JIT
 * compiler, so the bench can tell a warmed-up window from one the compiler shared
 * (docs/traps.md #32). Cheap enough to poll every second: one read of {@code /proc/self/stat}'s
 * equivalent ({@link ProcessHandle}) and one small file per compiler thread.
 * <ul>
 *   <li>{@code cpuMs}: the process's CPU time, user + system;</li>
 *   <li>{@code compilerCpuMs}: the CPU time of the C1 and C2 compiler threads (their {@code comm} in
 *       {@code /proc/self/task/TID/stat} is "C1 CompilerThre…" / "C2 CompilerThre…"), from each thread's
 *       {@code schedstat} (nanoseconds on the CPU). Not from {@code stat}'s utime + stime: those are
 *       USER_HZ ticks, each truncated to 10 ms per thread, and a 10 s window at 100 req/s holds only
 *       ~200 ms of app CPU, so three compiler threads could read 30-60 ms off (15-30 % of it). Ticks
 *       only where a kernel has no schedstat; -1 where there is no /proc;</li>
 *   <li>{@code compilerThreads}: how many such threads there were (HotSpot adds and removes them);</li>
 *   <li>{@code compileMs}: HotSpot's own total compilation time ({@link CompilationMXBean}), -1 when
 *       the JVM does not keep it. Wall time inside compilations, not CPU: kept beside it because it
 *       is the JVM's own figure.</li>
 * </ul>
 * Threads that ended are gone from /proc with their CPU, so {@code compilerCpuMs} can step down
 * when HotSpot retires a compiler thread: the bench reads differences over short windows and
 * treats a negative one as unknown.
 *
 * <p>For the cost card (issue 39), what the JVM's heap and collectors did, read as differences too:
 * <ul>
 *   <li>{@code allocatedBytes}: the heap bytes this JVM allocated since it started, and
 *       {@code allocatedBytesHow} what the figure covers: {@code "total"}, {@code "live threads only"},
 *       or {@code "unavailable: <why>"} (then {@code allocatedBytes} is null);</li>
 *   <li>{@code gcCount}, {@code gcTimeMs}: {@code getCollectionCount} and {@code getCollectionTime}
 *       summed over every {@link GarbageCollectorMXBean} (-1 where no bean keeps them). With G1 (the
 *       default on a server-class machine) its beans count pauses: young, mixed and full collections,
 *       and since JDK 20 "G1 Concurrent GC" counts the Remark and Cleanup pauses of its concurrent
 *       cycles; the concurrent work itself is not in it. ZGC and Shenandoah also have beans that time
 *       whole concurrent cycles ("ZGC Major Cycles"...), which this sum then adds to their pauses.</li>
 *   <li>{@code profiledCodeKb}, {@code nonProfiledCodeKb}: what the JIT had compiled, by code heap
 *       ({@link #codeHeapKb}): read as they are, not as differences.</li>
 * </ul>
 *
 * <p><b>What {@code allocatedBytes} covers</b>, read in the JDK's source (HotSpot line numbers from
 * JDK 17.0.19; JDK 25's {@code jmm_GetTotalThreadAllocatedMemory} has the same text):
 * <ul>
 *   <li>"total" is {@code com.sun.management.ThreadMXBean.getTotalThreadAllocatedBytes()}, API since
 *       JDK 21 and backported to 17.0.11 (its javadoc says {@code @since 17.0.11} there): {@code
 *       sun.management.ThreadImpl.getTotalThreadAllocatedBytes} (ThreadImpl.java:339 in JDK 25.0.3,
 *       :352 in 17.0.19) calls {@code jmm_GetTotalThreadAllocatedMemory} (hotspot
 *       services/management.cpp:2067-2100), which adds {@code ThreadService::exited_allocated_bytes()}
 *       to {@code cooked_allocated_bytes()} of every live JavaThread, and keeps a high-water mark so it
 *       never steps down. Each thread adds its bytes to the exited sum as it leaves the thread list
 *       ({@code ThreadService::remove_thread}, services/threadService.cpp:161, hidden threads
 *       included): <b>exited threads are counted</b>. A thread's count is its retired TLABs ({@code
 *       ThreadLocalAllocBuffer::retire}, gc/shared/threadLocalAllocBuffer.cpp:144), its allocations
 *       outside a TLAB (humongous arrays too: {@code MemAllocator::allocate_outside_tlab},
 *       gc/shared/memAllocator.cpp:244) and the used part of its current TLAB ({@code
 *       Thread::cooked_allocated_bytes}, runtime/thread.inline.hpp:41): the bytes of objects
 *       allocated, not the filler that pads a retired TLAB. <b>Virtual threads</b> have no JavaThread
 *       of their own: a mounted virtual thread allocates through its carrier's JavaThread and TLAB,
 *       so its bytes are in the carrier's count and in the total (which is why {@code
 *       getCurrentThreadAllocatedBytes} answers -1 on a virtual thread: ThreadImpl.java:346-351 in
 *       25.0.3). An approximation only in the race its comment names: a thread that starts or ends
 *       during the read may be missed by that one read.</li>
 *   <li>"live threads only", where that method is missing (JDK 17 before 17.0.11; the build is
 *       {@code --release 17}, so it is looked up at run time): the sum of {@code
 *       getThreadAllocatedBytes} over the live threads. It loses every thread that ended (a pool that
 *       retires idle threads, a thread per task) and steps down when one does: the bench must not
 *       read it as the JVM's allocation.</li>
 * </ul>
 */
public final class JvmCpu {

    private static final Path TASKS = Path.of("/proc/self/task");
    private static final long MS_PER_TICK = 10;   // USER_HZ = 100
    private static final CompilationMXBean COMPILER = ManagementFactory.getCompilationMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** {@code getTotalThreadAllocatedBytes()} where the running JDK has it (21+, 17.0.11+), else null. */
    private static final MethodHandle TOTAL_ALLOCATED = totalAllocated();
    static final boolean TOTAL_ALLOCATED_AVAILABLE = TOTAL_ALLOCATED != null;
    static final String TOTAL = "total";
    static final String LIVE_THREADS_ONLY = "live threads only";

    private JvmCpu() {
    }

    /** The {@code jvm} object: {@code {"cpuMs":...,"nonProfiledCodeKb":...}} (read as the class comment says). */
    public static String toJson() {
        long[] compiler = compilerCpu();
        long cpuMs = ProcessHandle.current().info().totalCpuDuration().map(Duration::toMillis).orElse(-1L);
        long compileMs = COMPILER != null && COMPILER.isCompilationTimeMonitoringSupported() ? COMPILER.getTotalCompilationTime() : -1;
        long[] gc = gc();
        return "{\"cpuMs\":" + cpuMs + ",\"compilerCpuMs\":" + compiler[0] + ",\"compilerThreads\":" + compiler[1]
                + ",\"compileMs\":" + compileMs + allocatedJson(TOTAL_ALLOCATED)
                + ",\"gcCount\":" + gc[0] + ",\"gcTimeMs\":" + gc[1]
                + ",\"profiledCodeKb\":" + codeHeapKb(PROFILED) + ",\"nonProfiledCodeKb\":" + codeHeapKb(NON_PROFILED) + "}";
    }

    static final String PROFILED = "CodeHeap 'profiled nmethods'";
    static final String NON_PROFILED = "CodeHeap 'non-profiled nmethods'";

    /**
     * KiB used in one of HotSpot's code heaps, -1 where it has none of that name (a code cache that is
     * not segmented). With tiered compilation, {@code profiled nmethods} holds C1's code that still
     * profiles (tiers 2-3: methods on their way to C2) and {@code non-profiled nmethods} C2's (and
     * C1's tier 1, for trivial methods): two fresh JVMs whose CPU per request differs after their
     * warm-ups can be told apart by how much of their hot code C2 had compiled (issue 39).
     */
    static long codeHeapKb(String name) {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getName().equals(name)) return pool.getUsage().getUsed() / 1024;
        }
        return -1;
    }

    /**
     * {@code ,"allocatedBytes":N,"allocatedBytesHow":"..."}: through {@code total} (the JDK's
     * getTotalThreadAllocatedBytes) when given, else over the live threads (tests pass null to read
     * the JDK 17.0.10 way on any JDK).
     */
    static String allocatedJson(MethodHandle total) {
        if (!(THREADS instanceof com.sun.management.ThreadMXBean threads) || !threads.isThreadAllocatedMemorySupported()) {
            return unavailable("this JVM does not measure allocated memory (isThreadAllocatedMemorySupported false)");
        }
        if (!threads.isThreadAllocatedMemoryEnabled()) {
            return unavailable("thread allocated memory measurement is disabled (setThreadAllocatedMemoryEnabled)");
        }
        long bytes;
        String how;
        if (total != null) {
            try {
                bytes = (long) total.invokeExact(threads);
            } catch (Throwable e) {
                return unavailable("getTotalThreadAllocatedBytes failed: " + e);
            }
            how = TOTAL;
        } else {
            bytes = 0;
            for (long each : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
                if (each > 0) bytes += each;   // -1: ended between the two calls
            }
            how = LIVE_THREADS_ONLY;
        }
        return bytes < 0 ? unavailable("getTotalThreadAllocatedBytes answered " + bytes)
                : ",\"allocatedBytes\":" + bytes + ",\"allocatedBytesHow\":\"" + how + "\"";
    }

    private static String unavailable(String why) {
        return ",\"allocatedBytes\":null,\"allocatedBytesHow\":" + Json.str("unavailable: " + why);
    }

    /** The JDK's getTotalThreadAllocatedBytes as {@code (com.sun.management.ThreadMXBean)long}, or null where it is missing. */
    static MethodHandle totalAllocated() {
        try {
            return MethodHandles.publicLookup().findVirtual(com.sun.management.ThreadMXBean.class,
                    "getTotalThreadAllocatedBytes", MethodType.methodType(long.class));
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    /** {collections, their ms} summed over the GarbageCollectorMXBeans; -1 for a sum no bean keeps. */
    static long[] gc() {
        long count = -1;
        long ms = -1;
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            long c = bean.getCollectionCount();
            long t = bean.getCollectionTime();
            if (c >= 0) count = Math.max(count, 0) + c;
            if (t >= 0) ms = Math.max(ms, 0) + t;
        }
        return new long[] {count, ms};
    }

    /** {CPU ms of the live C1/C2 compiler threads, their number}; {-1, 0} without /proc. */
    static long[] compilerCpu() {
        if (!Files.isDirectory(TASKS)) return new long[] {-1, 0};
        long nanos = 0;
        int threads = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException e) {
                    continue; // the thread ended between the listing and the read
                }
                // "tid (comm) state ppid ...": comm may hold spaces, so split after its last ')'
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open) continue;
                String comm = stat.substring(open + 1, close);
                if (!comm.startsWith("C1 Compiler") && !comm.startsWith("C2 Compiler")) continue;
                nanos += onCpuNanos(task, stat.substring(close + 2));
                threads++;
            }
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, 0};
        }
        return new long[] {nanos / 1_000_000, threads};
    }

    /** A thread's CPU time in ns: schedstat's first field, else stat's utime + stime in ticks. */
    private static long onCpuNanos(Path task, String statAfterComm) {
        try {
            return Long.parseLong(Files.readString(task.resolve("schedstat")).trim().split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            // after comm: state(0) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(11) stime(12)
            String[] fields = statAfterComm.split(" ");
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * MS_PER_TICK * 1_000_000;
        }
    }
}
