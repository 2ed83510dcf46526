package lab.agent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The JVM's live platform threads, as the agent reads them: by name and class, never by stack
 * (a thread dump of every thread, every 100 ms, would cost the app more than the sample is worth).
 * Virtual threads are not among them: the JDK lists none (they are reached through the container's
 * beans instead), but their carriers are.
 */
final class Threads {

    static final String PARALLELISM = "jdk.virtualThreadScheduler.parallelism";
    static final String MAX_POOL_SIZE = "jdk.virtualThreadScheduler.maxPoolSize";
    /**
     * The default virtual-thread scheduler's workers (JDK 21 to 25): a ForkJoinPool whose factory
     * makes {@code jdk.internal.misc.CarrierThread}s, named by the pool {@code ForkJoinPool-<n>-worker-<m>}
     * (n: the pool's number in this JVM, 1 unless the app made a ForkJoinPool before its first
     * virtual thread). The class tells them from the workers of an app's own ForkJoinPool, which
     * have the same names; the common pool's are {@code ForkJoinPool.commonPool-worker-<m>}.
     */
    static final String CARRIER_CLASS = "jdk.internal.misc.CarrierThread";
    static final Pattern CARRIER_NAME = Pattern.compile("ForkJoinPool-\\d+-worker-\\d+");

    private Threads() {
    }

    /** The live platform threads (enumerated from the root thread group: no stacks are taken). */
    static List<Thread> live() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) root = root.getParent();
        Thread[] threads = new Thread[root.activeCount() + 16];
        int n;
        while ((n = root.enumerate(threads, true)) == threads.length) {
            threads = new Thread[threads.length * 2];   // more started meanwhile: enumerate them all
        }
        return Arrays.asList(threads).subList(0, n);
    }

    /** The names of the live platform threads. */
    static List<String> names() {
        List<String> names = new ArrayList<>();
        for (Thread thread : live()) names.add(thread.getName());
        return names;
    }

    /** How many live threads have a name {@code pattern} matches whole. */
    static int count(Pattern pattern) {
        int n = 0;
        for (Thread thread : live()) {
            if (pattern.matcher(thread.getName()).matches()) n++;
        }
        return n;
    }

    /** The names of the default virtual-thread scheduler's live carrier threads. */
    static List<String> carriers() {
        List<String> names = new ArrayList<>();
        for (Thread thread : live()) {
            if (thread.getClass().getName().equals(CARRIER_CLASS) && CARRIER_NAME.matcher(thread.getName()).matches()) {
                names.add(thread.getName());
            }
        }
        return names;
    }

    /** How many carriers the default scheduler runs virtual threads on, and which setting says so. */
    record Carriers(Integer count, String from) {
    }

    /**
     * The carriers as the JDK (21 and 25 alike, {@code VirtualThread.createDefaultScheduler}) counts
     * them: {@value #PARALLELISM}, else {@code Runtime.availableProcessors()}, capped by
     * {@value #MAX_POOL_SIZE} where that is set. A property that is not a number: count null (unknown).
     */
    static Carriers carrierCount() {
        String parallelism = System.getProperty(PARALLELISM);
        String max = System.getProperty(MAX_POOL_SIZE);
        try {
            int n = parallelism == null ? Runtime.getRuntime().availableProcessors() : Integer.parseInt(parallelism.trim());
            String from = parallelism == null ? "Runtime.availableProcessors() (the JDK's default: " + PARALLELISM + " is unset)"
                    : "-D" + PARALLELISM + "=" + parallelism.trim();
            if (max != null && Integer.parseInt(max.trim()) < n) {
                n = Integer.parseInt(max.trim());
                from = "-D" + MAX_POOL_SIZE + "=" + max.trim() + " (caps " + from + ")";
            }
            return new Carriers(n, from);
        } catch (NumberFormatException e) {
            return new Carriers(null, "-D" + PARALLELISM + "=" + parallelism + " -D" + MAX_POOL_SIZE + "=" + max + ": not numbers");
        }
    }
}
