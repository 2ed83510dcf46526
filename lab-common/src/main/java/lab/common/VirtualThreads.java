package lab.common;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * {@code --threads vN}: every request runs on its own virtual thread, and the JDK's scheduler
 * runs all of them on <b>N carrier threads</b>, so "v1" compares with "1": one OS thread runs
 * application code. The lab builds with {@code --release 17}, so the JDK 21 API is reached by
 * reflection here, and vN is refused on JDK 17.
 *
 * <p>The trap (docs/traps.md #17): the default scheduler reads
 * {@code jdk.virtualThreadScheduler.parallelism} and {@code maxPoolSize} once, when the first
 * virtual thread is made, and by default uses every core and may add carriers up to 256 while
 * virtual threads are pinned. {@link #pinCarriers} sets both to N before that; {@link #checkCarriers}
 * refuses to start when they say otherwise, so a run can never silently use more carriers.
 * {@code minRunnable} (default max(parallelism / 2, 1)) only asks for extra carriers, which
 * {@code maxPoolSize = N} then forbids, so it is left alone.
 */
public final class VirtualThreads {

    static final String PARALLELISM = "jdk.virtualThreadScheduler.parallelism";
    static final String MAX_POOL_SIZE = "jdk.virtualThreadScheduler.maxPoolSize";
    static final String MIN_RUNNABLE = "jdk.virtualThreadScheduler.minRunnable";

    /** {@code Thread.isVirtual()}, JDK 21+; null on 17. */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private VirtualThreads() {
    }

    public static boolean supported() {
        return Runtime.version().feature() >= 21;
    }

    /** Why vN cannot run here, or null when it can. */
    public static String unsupportedReason() {
        return supported() ? null : "virtual threads need JDK 21+ (running " + System.getProperty("java.version") + ")";
    }

    public static boolean isVirtual(Thread thread) {
        if (IS_VIRTUAL == null) return false;
        try {
            return (boolean) IS_VIRTUAL.invoke(thread);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The carrier a running virtual thread is mounted on: {@code toString()} of the current
     * virtual thread reads {@code VirtualThread[#31,name]/runnable@ForkJoinPool-1-worker-1}.
     */
    public static String carrierOf(Thread virtualThread) {
        String s = virtualThread.toString();
        int at = s.lastIndexOf('@');
        return at < 0 ? "unknown" : s.substring(at + 1);
    }

    /** Pins the default scheduler to N carriers, unless the user chose already (checked at start). */
    static void pinCarriers(int n) {
        if (System.getProperty(PARALLELISM) == null) System.setProperty(PARALLELISM, String.valueOf(n));
        if (System.getProperty(MAX_POOL_SIZE) == null) System.setProperty(MAX_POOL_SIZE, String.valueOf(n));
    }

    /**
     * Refuses a vN run unless the scheduler is pinned to exactly N carriers. Computed from the
     * properties as the JDK does (21 and 25 alike): parallelism defaults to the cores and is
     * capped by maxPoolSize, which defaults to max(parallelism, 256).
     */
    static void checkCarriers(int n) {
        int parallelism = effectiveParallelism();
        int maxPoolSize = effectiveMaxPoolSize();
        if (parallelism != n || maxPoolSize != n) {
            throw new IllegalStateException("--threads v" + n + " needs the virtual-thread scheduler pinned to " + n
                    + " carriers, but it would use parallelism=" + parallelism + " maxPoolSize=" + maxPoolSize
                    + ": start the JVM with -D" + PARALLELISM + "=" + n + " -D" + MAX_POOL_SIZE + "=" + n
                    + " (Launcher.main sets both when they are unset)");
        }
    }

    /** Printed in the {@code lab:} line of a vN run. */
    public static String describeCarriers() {
        String minRunnable = System.getProperty(MIN_RUNNABLE);
        return "carriers: " + PARALLELISM + "=" + effectiveParallelism() + " " + MAX_POOL_SIZE + "=" + effectiveMaxPoolSize()
                + " minRunnable=" + (minRunnable == null ? "default (moot: maxPoolSize caps every extra carrier)" : minRunnable);
    }

    /**
     * For the {@code lab:} line of a platform pool: where the JVM was started with the scheduler
     * pinned (-D flags) so that {@code POST /pool?threads=vN} can switch it later, say so; else "".
     */
    static String pinnedForASwitch() {
        return System.getProperty(PARALLELISM) == null ? ""
                : " [virtual threads unused; for POST /pool?threads=vN, " + describeCarriers() + "]";
    }

    private static int effectiveParallelism() {
        int parallelism = intProperty(PARALLELISM, Runtime.getRuntime().availableProcessors());
        String max = System.getProperty(MAX_POOL_SIZE);
        return max == null ? parallelism : Math.min(parallelism, intProperty(MAX_POOL_SIZE, 0));
    }

    private static int effectiveMaxPoolSize() {
        return intProperty(MAX_POOL_SIZE, Math.max(intProperty(PARALLELISM, Runtime.getRuntime().availableProcessors()), 256));
    }

    private static int intProperty(String name, int fallback) {
        String value = System.getProperty(name);
        if (value == null) return fallback;
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("-D" + name + " must be an integer, got '" + value + "'");
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null; // JDK 17: no virtual threads, every thread is a platform thread
        }
    }
}
