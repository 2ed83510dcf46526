package lab.remote;

import java.util.ArrayList;
import java.util.List;

/**
 * A parsed fault schedule ({@code --fault SPEC}, {@code POST /fault?schedule=SPEC}): phases back to
 * back from the schedule's start, healthy ({@code ok}) after the last one. Immutable; the state of a
 * running schedule (its start, its arrivals, its hung requests) lives in {@link RemoteSleep}.
 *
 * <pre>
 * SPEC     = PHASE[,PHASE...]
 * PHASE    = DURATION:KIND
 * DURATION = &lt;int&gt;ms | &lt;int&gt;s           each &gt;= 1 ms, all together &lt;= 1 h
 * KIND     = ok | delay=MS (0..60000) | error=PCT (1..100) | hang
 * </pre>
 */
final class FaultSchedule {

    static final String GRAMMAR = "SPEC = DURATION:KIND[,DURATION:KIND...], DURATION = <int>ms|<int>s (>= 1 ms, "
            + "total <= 1 h), KIND = ok | delay=MS (0..60000) | error=PCT (1..100) | hang";
    static final long MAX_TOTAL_MS = 3_600_000;
    /** Not in the grammar: a bound on the timer tasks and the JSON of one schedule. */
    static final int MAX_PHASES = 1000;

    enum Kind { OK, DELAY, ERROR, HANG }

    /** One phase: from {@code startMs} after the schedule's start, for {@code durationMs}. */
    record Phase(long startMs, long durationMs, Kind kind, int value) {
        long endMs() {
            return startMs + durationMs;
        }

        /** {@code ok}, {@code delay=MS}, {@code error=PCT} or {@code hang}: as in the SPEC and in GET /fault. */
        String label() {
            return switch (kind) {
                case OK -> "ok";
                case DELAY -> "delay=" + value;
                case ERROR -> "error=" + value;
                case HANG -> "hang";
            };
        }
    }

    /** The SPEC as parsed back: each phase's duration as written, its kind in the canonical form. */
    final String spec;
    final List<Phase> phases;
    final long totalMs;

    private FaultSchedule(String spec, List<Phase> phases, long totalMs) {
        this.spec = spec;
        this.phases = List.copyOf(phases);
        this.totalMs = totalMs;
    }

    /** Parses SPEC or throws {@link IllegalArgumentException} with a reason fit for a 400 or an ERROR line. */
    static FaultSchedule parse(String raw) {
        if (raw == null || raw.isBlank()) throw new IllegalArgumentException("empty fault schedule (" + GRAMMAR + ")");
        String[] parts = raw.trim().split(",", -1);
        if (parts.length > MAX_PHASES) {
            throw new IllegalArgumentException("fault schedule has " + parts.length + " phases, at most " + MAX_PHASES);
        }
        List<Phase> phases = new ArrayList<>();
        StringBuilder spec = new StringBuilder();
        long at = 0;
        for (String part : parts) {
            String phase = part.trim();
            if (phase.isEmpty()) throw new IllegalArgumentException("empty phase in fault schedule '" + raw + "'");
            int colon = phase.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("phase '" + phase + "' is not DURATION:KIND (" + GRAMMAR + ")");
            }
            String durationText = phase.substring(0, colon).trim();
            long durationMs = durationMs(durationText);
            Phase parsed = kind(phase.substring(colon + 1).trim(), at, durationMs);
            at += durationMs;
            if (at > MAX_TOTAL_MS) {
                throw new IllegalArgumentException("fault schedule is longer than 1 h (" + MAX_TOTAL_MS + " ms)");
            }
            phases.add(parsed);
            if (spec.length() > 0) spec.append(',');
            spec.append(durationText).append(':').append(parsed.label());
        }
        return new FaultSchedule(spec.toString(), phases, at);
    }

    private static long durationMs(String text) {
        long unit;
        String digits;
        if (text.endsWith("ms")) {
            unit = 1;
            digits = text.substring(0, text.length() - 2);
        } else if (text.endsWith("s")) {
            unit = 1000;
            digits = text.substring(0, text.length() - 1);
        } else {
            throw new IllegalArgumentException("bad duration '" + text + "': want <int>ms or <int>s");
        }
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("bad duration '" + text + "': want <int>ms or <int>s");
        }
        long value;
        try {
            value = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("duration '" + text + "' is longer than 1 h");
        }
        if (value > MAX_TOTAL_MS) throw new IllegalArgumentException("duration '" + text + "' is longer than 1 h");
        if (value == 0) throw new IllegalArgumentException("duration '" + text + "' must be at least 1 ms");
        return value * unit;
    }

    private static Phase kind(String text, long startMs, long durationMs) {
        if (text.equals("ok")) return new Phase(startMs, durationMs, Kind.OK, 0);
        if (text.equals("hang")) return new Phase(startMs, durationMs, Kind.HANG, 0);
        if (text.startsWith("delay=")) {
            return new Phase(startMs, durationMs, Kind.DELAY, intIn("delay", text.substring(6), 0, RemoteSleep.MAX_MS));
        }
        if (text.startsWith("error=")) {
            return new Phase(startMs, durationMs, Kind.ERROR, intIn("error", text.substring(6), 1, 100));
        }
        throw new IllegalArgumentException("unknown fault kind '" + text + "': want ok, delay=MS, error=PCT or hang");
    }

    private static int intIn(String name, String raw, int min, int max) {
        if (raw.isEmpty() || !raw.chars().allMatch(c -> c >= '0' && c <= '9') || raw.length() > 9) {
            throw new IllegalArgumentException(name + " must be an integer in " + min + ".." + max + ", got '" + raw + "'");
        }
        int value = Integer.parseInt(raw);
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    /** Index of the phase {@code elapsedNanos} after the start, or -1 once the schedule has run out (healthy). */
    int indexAt(long elapsedNanos) {
        long elapsedMs = Math.max(0, elapsedNanos) / 1_000_000; // phase i covers [startMs, endMs)
        int lo = 0;
        int hi = phases.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Phase p = phases.get(mid);
            if (elapsedMs < p.startMs()) hi = mid - 1;
            else if (elapsedMs >= p.endMs()) lo = mid + 1;
            else return mid;
        }
        return -1;
    }

    /**
     * Whether the {@code i}-th arrival (from 1) in an {@code error=pct} phase fails: exactly when
     * floor(i*pct/100) steps up, so error=50 fails every 2nd arrival, error=100 all of them.
     */
    static boolean fails(long i, int pct) {
        return (i * pct) / 100 > ((i - 1) * pct) / 100;
    }
}
