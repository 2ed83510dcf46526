package lab.common;

import java.util.List;

import lab.common.config.LabConfig;
import lab.common.outbound.Remote;

/**
 * What every fan-out app shares: {@code GET /fanout?n=N&ms=M} makes N calls of M ms to the remote
 * and answers how many succeeded and how long the request took inside the app. The apps differ
 * only in how the N calls wait: one after another on the request thread, on K threads, on none.
 * Same answer, same parsing, so the wall time is the model.
 */
public final class Fanout {

    public static final int MAX_CALLS = 1000;

    private Fanout() {
    }

    /**
     * One parsed {@code /fanout} request and when the app started on it.
     *
     * @param n  how many remote calls, 1..1000
     * @param ms each call's delay, as {@code /call} takes it (absent: the remote's default)
     */
    public record Request(int n, Integer ms, long startNanos) {

        /** Throws {@link IllegalArgumentException} with a one-line reason: the app answers 400. */
        public static Request parse(String n, String ms) {
            if (n == null) throw new IllegalArgumentException("missing n: /fanout?n=1..1000[&ms=0..60000]");
            return new Request(LabConfig.intIn("n", n, 1, MAX_CALLS), Remote.parseMs(ms), System.nanoTime());
        }

        public long elapsedMs() {
            return (System.nanoTime() - startNanos) / 1_000_000;
        }
    }

    /** How one remote call ended: its body, or why it failed. */
    public record Call(String body, Throwable failure) {

        public static Call ok(String body) {
            return new Call(body, null);
        }

        public static Call failed(Throwable failure) {
            return new Call(null, failure);
        }
    }

    /** The N calls counted: 200 when all succeeded, else the first failure's 502 / 504. */
    public record Tally(int ok, int failed, Throwable firstFailure) {

        public static Tally of(List<Call> calls) {
            int ok = 0;
            Throwable first = null;
            for (Call call : calls) {
                if (call.failure() == null) ok++;
                else if (first == null) first = call.failure();
            }
            return new Tally(ok, calls.size() - ok, first);
        }

        public int status() {
            return firstFailure == null ? 200 : Remote.statusFor(firstFailure);
        }
    }

    /** {@code app=… n=10 ms=200 ok=10 failed=0 wall_ms=203}, plus the first failure's reason if any. */
    public static String answer(String app, Request request, Tally tally) {
        return "app=" + app + " n=" + request.n() + " ms=" + (request.ms() == null ? "default" : request.ms())
                + " ok=" + tally.ok() + " failed=" + tally.failed() + " wall_ms=" + request.elapsedMs() + "\n"
                + (tally.firstFailure() == null ? "" : "first failure: " + Remote.reasonFor(tally.firstFailure()) + "\n");
    }
}
