package lab.common;

import java.util.ArrayList;
import java.util.List;

/**
 * The timing relations the contracts assert (issue 25), in one place. A box busy elsewhere (a
 * second Maven module, a CPU hog, hypervisor steal) only ever <em>adds</em> time, so:
 * <ul>
 *   <li><b>"must wait"</b> is a lower bound from the model itself (N calls of M ms that queue for
 *       one thread take at least N x M) and is asserted on one try: no noise makes it pass wrongly;</li>
 *   <li><b>"must not wait"</b> is compared with a <b>control measured in the same test</b>: one
 *       call of the same delay through the same app, just before. One after another, the N calls
 *       would take N x that; the model must do them in less than half of it (a factor from the
 *       model, not milliseconds: on a slow box the control is slow too). The fastest of up to
 *       {@value #TRIES} tries counts: noise only adds time, so the fastest try is the closest to
 *       what the model allows, and a model that waits takes N x M on every try and never passes.</li>
 * </ul>
 */
public final class ModelTiming {

    /** Tries of a "must not wait" measurement; the first one under the bound ends them. */
    public static final int TRIES = 3;

    private ModelTiming() {
    }

    /** A step of a test: calls, a reset, anything that may throw. */
    @FunctionalInterface
    public interface Step {
        void run() throws Exception;
    }

    /** Seconds {@code step} takes, once. */
    public static double seconds(Step step) throws Exception {
        long start = System.nanoTime();
        step.run();
        return (System.nanoTime() - start) / 1e9;
    }

    /**
     * Asserts that {@code nAtOnce} (N calls at once) takes less than half of N one after another,
     * where one is {@code oneCall} (one call of the same delay, timed just before each try);
     * {@code reset} runs untimed between the two (eg, wait for the drain, reset /stats). Returns
     * the tries, for the test's log. {@code nAtOnce} may assert what it saw (status codes, bodies).
     */
    public static String muchFasterThanOneAfterAnother(String cell, int n, Step oneCall, Step reset, Step nAtOnce) throws Exception {
        return within(cell, n / 2.0, oneCall, reset, nAtOnce).tries();
    }

    /** What {@link #within} saw: the passing try's seconds and every try up to it, for the test's log. */
    public record Passed(double seconds, String tries) {
    }

    /**
     * Asserts that {@code measured} takes less than {@code factor} x {@code oneCall} (timed just
     * before it, {@code reset} untimed between) on one of {@value #TRIES} tries; returns the first
     * try under the bound. The factor comes from the model: eg, half way between the rounds the
     * model predicts and the rounds one after another would take.
     */
    public static Passed within(String cell, double factor, Step oneCall, Step reset, Step measured) throws Exception {
        List<String> tries = new ArrayList<>();
        for (int i = 1; i <= TRIES; i++) {
            double one = seconds(oneCall);
            reset.run();
            double took = seconds(measured);
            double bound = factor * one;
            tries.add(String.format("try %d: %.2f s against %.1f x one call (%.3f s) = %.2f s", i, took, factor, one, bound));
            if (took < bound) return new Passed(took, cell + ": " + String.join("; ", tries));
        }
        throw new AssertionError(cell + ": slower than the model allows on every try: " + String.join("; ", tries));
    }
}
