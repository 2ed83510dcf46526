package lab.common;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Wait for the <em>state</em> an assertion reads, not for a fixed time (issue 25). A counter the
 * app updates just after it answered (a request leaving {@code inFlight}, an R2DBC connection
 * going back to its pool after the response went out) is read until it holds, with a deadline;
 * past the deadline the test fails naming what it waited for and the last value it read, never
 * goes on as if it had seen it. A deadline is the box's allowance, not a speed target: 10 s,
 * where the state comes within milliseconds on a quiet box.
 */
public final class Await {

    /** Long enough for any box that still runs the suite; the states come within ms when quiet. */
    public static final Duration DEADLINE = Duration.ofSeconds(10);

    private Await() {
    }

    /** Reads {@code read} every 20 ms until {@code holds} is true; returns that value, or fails after {@link #DEADLINE}. */
    public static <T> T until(String what, Supplier<T> read, Predicate<T> holds) throws InterruptedException {
        T last = poll(read, holds);
        if (!holds.test(last)) fail("waited " + DEADLINE.toSeconds() + " s for " + what + "; last read: " + last);
        return last;
    }

    /** The same without the failure: the last value read, for a caller that explains a miss itself. */
    public static <T> T poll(Supplier<T> read, Predicate<T> holds) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        T last = read.get();
        while (!holds.test(last) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            last = read.get();
        }
        return last;
    }

    /** Every request the app counted has finished: /stats' inFlight (and the container's queue) is 0. */
    public static void drained(Launcher lab) throws InterruptedException {
        until("no request in flight or queued (inFlight + queued)", () -> lab.stats().inFlight() + lab.stats().queued(), n -> n == 0);
    }
}
