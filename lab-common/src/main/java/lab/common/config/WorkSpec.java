package lab.common.config;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code --work SPEC} (issue 39, the cost card's controls): what every request does of its own,
 * after the remote call returns, on the thread where the model runs its code
 * ({@code lab.common.work.Work} does it). SPEC is words, space- or comma-separated, each at most
 * once, any subset; empty = no work (the default):
 * <ul>
 *   <li>{@code cpu=<N>us} or {@code cpu=<N>ms}: a fixed computation of that much CPU time, up to 1 s;</li>
 *   <li>{@code alloc=<bytes>}: that many bytes of heap, {@value #MIN_ALLOC}..{@value #MAX_ALLOC};</li>
 *   <li>{@code syscalls=<K>}: K one-byte write(2)s to /dev/null, up to {@value #MAX_SYSCALLS}.</li>
 * </ul>
 * A value of 0 is refused rather than read as "none": leave the word out.
 *
 * @param cpuMicros  the computation's CPU time in µs; 0 = none
 * @param allocBytes heap bytes allocated per request; 0 = none
 * @param syscalls   write(2) calls per request; 0 = none
 */
public record WorkSpec(int cpuMicros, int allocBytes, int syscalls) {

    /** No work: the default. */
    public static final WorkSpec NONE = new WorkSpec(0, 0, 0);
    /** 1 s. */
    public static final int MAX_CPU_MICROS = 1_000_000;
    /** 64 MiB. */
    public static final int MAX_ALLOC = 64 << 20;
    /**
     * The smallest allocation taken: more than any byte[]'s header (12 to 24 bytes, by the JVM's
     * header layout), so that the array's heap size can be made exactly what was asked for.
     */
    public static final int MIN_ALLOC = 64;
    public static final int MAX_SYSCALLS = 10_000;

    private static final Pattern WORD = Pattern.compile("([a-z]+)=(.*)");
    private static final Pattern CPU = Pattern.compile("([0-9]{1,10})(us|ms)");
    private static final Pattern COUNT = Pattern.compile("[0-9]{1,10}");
    private static final String FORM = "cpu=<N>us|ms, alloc=<bytes>, syscalls=<K>";

    /** Reads SPEC; throws {@link IllegalArgumentException} with a one-line reason ({@code --work: ...}). */
    public static WorkSpec parse(String spec) {
        Integer cpu = null;
        Integer alloc = null;
        Integer syscalls = null;
        for (String word : spec.split("[ ,]+")) {
            if (word.isEmpty()) continue;   // separators at the start
            Matcher m = WORD.matcher(word);
            if (!m.matches()) throw bad("'" + word + "' is not one of " + FORM);
            String value = m.group(2);
            switch (m.group(1)) {
                case "cpu" -> {
                    once(cpu, "cpu");
                    cpu = cpuMicros(value);
                }
                case "alloc" -> {
                    once(alloc, "alloc");
                    alloc = count("alloc", value, MIN_ALLOC, MAX_ALLOC, " bytes");
                }
                case "syscalls" -> {
                    once(syscalls, "syscalls");
                    syscalls = count("syscalls", value, 1, MAX_SYSCALLS, "");
                }
                default -> throw bad("unknown word '" + m.group(1) + "' (" + FORM + ")");
            }
        }
        if (cpu == null && alloc == null && syscalls == null) return NONE;
        return new WorkSpec(cpu == null ? 0 : cpu, alloc == null ? 0 : alloc, syscalls == null ? 0 : syscalls);
    }

    /** True for the default: no work at all. */
    public boolean none() {
        return cpuMicros == 0 && allocBytes == 0 && syscalls == 0;
    }

    /**
     * The canonical form, printed in the {@code lab:} line ({@code work=...}) and read back by
     * {@link #parse}: the words given, in this order, comma-separated, the CPU in µs
     * ({@code cpu=500us,alloc=65536,syscalls=10}); empty for none.
     */
    @Override
    public String toString() {
        List<String> words = new ArrayList<>();
        if (cpuMicros > 0) words.add("cpu=" + cpuMicros + "us");
        if (allocBytes > 0) words.add("alloc=" + allocBytes);
        if (syscalls > 0) words.add("syscalls=" + syscalls);
        return String.join(",", words);
    }

    private static int cpuMicros(String value) {
        Matcher m = CPU.matcher(value);
        if (!m.matches()) throw bad("cpu must be <N>us or <N>ms (eg, cpu=500us), got 'cpu=" + value + "'");
        long micros = Long.parseLong(m.group(1)) * (m.group(2).equals("ms") ? 1_000 : 1);
        if (micros < 1 || micros > MAX_CPU_MICROS) {
            throw bad("cpu must be in 1us..1000ms, got 'cpu=" + value + "'");
        }
        return (int) micros;
    }

    private static int count(String name, String value, int min, int max, String unit) {
        if (!COUNT.matcher(value).matches()) throw bad(name + " must be an integer in " + min + ".." + max + unit + ", got '" + name + "=" + value + "'");
        long n = Long.parseLong(value);
        if (n < min || n > max) throw bad(name + " must be in " + min + ".." + max + unit + ", got '" + name + "=" + value + "'");
        return (int) n;
    }

    private static void once(Integer seen, String name) {
        if (seen != null) throw bad(name + " given twice");
    }

    private static IllegalArgumentException bad(String reason) {
        return new IllegalArgumentException("--work: " + reason);
    }
}
