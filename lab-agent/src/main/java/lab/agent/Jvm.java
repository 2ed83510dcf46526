package lab.agent;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;

/**
 * The JVM's own figures in /stats, one way for every JVM the lab reads: lab-common's {@code Stats}
 * (the lab's apps) and this agent (any app) both write them with {@link #figuresJson()}, so the
 * two /stats agree key for key on what a JVM is doing, whoever wrote the app.
 * <ul>
 *   <li>{@code liveThreads}: the JVM's live platform threads now ({@link ThreadMXBean#getThreadCount()};
 *       daemon or not, the JDK's own too; virtual threads are not in it);</li>
 *   <li>{@code peakThreads}: the most there were at once since the JVM started or since the last
 *       {@link #resetPeak()} ({@code POST /stats/reset} on either port);</li>
 *   <li>{@code heapUsedBytes}: the heap in use now ({@link MemoryMXBean#getHeapMemoryUsage()}), garbage
 *       not yet collected included;</li>
 *   <li>{@code jvm}: the process's CPU, the JIT compiler's share of it, allocation, GC and code
 *       heaps ({@link JvmCpu}).</li>
 * </ul>
 */
public final class Jvm {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private Jvm() {
    }

    /**
     * {@code "liveThreads":N,"peakThreads":N,"heapUsedBytes":N,"jvm":{...}}: the members, without
     * braces, in the order /stats has always written them; the caller puts them in its object.
     */
    public static String figuresJson() {
        return "\"liveThreads\":" + THREADS.getThreadCount()
                + ",\"peakThreads\":" + THREADS.getPeakThreadCount()
                + ",\"heapUsedBytes\":" + MEMORY.getHeapMemoryUsage().getUsed()
                + ",\"jvm\":" + JvmCpu.toJson();
    }

    /** {@code peakThreads} starts again from the live threads now (the JVM keeps one peak for all its readers). */
    public static void resetPeak() {
        THREADS.resetPeakThreadCount();
    }
}
