package lab.common.work;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

import lab.common.config.WorkSpec;
import lab.common.stats.Stats;

/**
 * {@code --work SPEC} done: what each request does of its own, after the remote call returns, on
 * the thread where the model runs its code (issue 39). Every app calls {@link #run} there, once
 * per answered request; it is the control that proves the cost card's counters (each piece must
 * move its own counter by the amount asked, and nothing else much) and the knob for "my requests
 * compute too": with CPU work, the one event loop or carrier shows where it stops keeping up.
 * <ul>
 *   <li>{@code cpu=<N>us}: a fixed computation calibrated once per JVM to cost N µs of CPU, with no
 *       syscall and no allocation inside it ({@link Cpu});</li>
 *   <li>{@code alloc=<bytes>}: one {@code byte[]} whose size on the heap is {@code bytes} rounded up
 *       to the object alignment (8): its length is {@code bytes} less the array header ({@link
 *       #ARRAY_HEADER}: 16 bytes with compressed class pointers, the default; 12 with JDK 25's
 *       -XX:+UseCompactObjectHeaders, 20 with -XX:-UseCompressedClassPointers: exact in all three,
 *       and with G1, ZGC and Serial, measured). It escapes to a
 *       volatile field, so the JIT cannot scalar-replace it: the JVM's allocated-bytes counters
 *       ({@code getCurrentThreadAllocatedBytes}, /stats' {@code jvm.allocatedBytes}) grow by exactly
 *       that per run, and nothing else here allocates;</li>
 *   <li>{@code syscalls=<K>}: K calls of {@code FileOutputStream.write(int)} on /dev/null, opened once
 *       per JVM: each is one write(2) of one byte (JDK's io_util.c {@code writeSingle}), counted in
 *       {@code /proc/thread-self/io}'s {@code syscw}; on a virtual thread too with JDK 25, whose
 *       {@code write(int)} is the native call alone. JDK 21's wraps it in {@code Blocker.begin/end},
 *       which on a virtual thread may have the carrier pool compensate (a thread more, futex calls):
 *       count syscalls on virtual threads with JDK 25.</li>
 * </ul>
 * In that order. With {@code stats}, {@link #run} also records the thread it ran on ({@link
 * Stats#workThread}), so /stats shows where the model ran the work ({@code "workThreads"}).
 */
public final class Work {

    /** {@code byte[]}'s header in bytes: where its elements start ({@code Unsafe.ARRAY_BYTE_BASE_OFFSET}). */
    public static final int ARRAY_HEADER = arrayHeader();

    private static final Work NONE = new Work(WorkSpec.NONE, null, null, -1);

    /** Each run's array goes here: it escapes, so it is really allocated. */
    private static volatile byte[] sink;

    private final WorkSpec spec;
    private final Stats stats;
    private final long cpuIterations;
    private final Cpu.Calibration calibration;
    private final int allocLength;

    private Work(WorkSpec spec, Stats stats, Cpu.Calibration calibration, int allocLength) {
        this.spec = spec;
        this.stats = stats;
        this.calibration = calibration;
        this.cpuIterations = calibration == null ? 0 : calibration.iterationsFor(spec.cpuMicros());
        this.allocLength = allocLength;
    }

    /** The work {@code spec} asks for; the CPU is calibrated now if it was not yet in this JVM. */
    public static Work of(WorkSpec spec) {
        return of(spec, null);
    }

    /** The same, recording in {@code stats} the thread each run ran on (null: not recorded). */
    public static Work of(WorkSpec spec, Stats stats) {
        if (spec.none()) return NONE;
        return of(spec, stats, spec.cpuMicros() == 0 ? null : Cpu.calibration());
    }

    /** With a calibration of its own (tests: one just made, against the JVM's one made at its start). */
    static Work of(WorkSpec spec, Stats stats, Cpu.Calibration calibration) {
        if (spec.syscalls() > 0) DevNull.open();
        return new Work(spec, stats, spec.cpuMicros() == 0 ? null : calibration, spec.allocBytes() == 0 ? -1 : spec.allocBytes() - ARRAY_HEADER);
    }

    /** Does the work, once: call it where the model's code runs after the remote call returned. */
    public void run() {
        if (this == NONE) return;
        if (stats != null) stats.workThread();
        if (cpuIterations > 0) Cpu.burn(cpuIterations);
        if (allocLength >= 0) sink = new byte[allocLength];
        for (int i = 0; i < spec.syscalls(); i++) DevNull.write();
    }

    public WorkSpec spec() {
        return spec;
    }

    /** The cpu= piece's iterations per run (0 without it). */
    public long cpuIterations() {
        return cpuIterations;
    }

    /**
     * One line for the log at start: what each piece is made of, or null with no work. The {@code lab:}
     * line carries the spec alone ({@code work=cpu=500us,...}), for the bench's parsers.
     */
    public String describe() {
        if (this == NONE) return null;
        StringBuilder line = new StringBuilder("work: " + spec + " per request, after the remote call returns, on the model's thread:");
        if (cpuIterations > 0) {
            line.append(" cpu=").append(spec.cpuMicros()).append("us is ").append(cpuIterations)
                    .append(" xorshift iterations at ").append(calibration.describe()).append(';');
        }
        if (allocLength >= 0) {
            line.append(" alloc=").append(spec.allocBytes()).append(" is one byte[").append(allocLength).append("] (header ")
                    .append(ARRAY_HEADER).append(" bytes, heap size rounded up to 8);");
        }
        if (spec.syscalls() > 0) line.append(" syscalls=").append(spec.syscalls()).append(" is that many 1-byte write(2)s to /dev/null;");
        line.setLength(line.length() - 1);
        return line.toString();
    }

    private static int arrayHeader() {
        try {
            return Class.forName("sun.misc.Unsafe").getField("ARRAY_BYTE_BASE_OFFSET").getInt(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return 16;   // HotSpot's, with compressed class pointers (the default on 64 bits)
        }
    }

    /** /dev/null, opened once per JVM, when syscalls= is first asked for (the class's initialisation publishes it to every thread). */
    private static final class DevNull {
        private static final String PATH = "/dev/null";
        private static final FileOutputStream OUT;
        private static final IOException FAILED;

        static {
            FileOutputStream out = null;
            IOException failed = null;
            try {
                out = new FileOutputStream(PATH);
            } catch (IOException e) {
                failed = e;
            }
            OUT = out;
            FAILED = failed;
        }

        static void open() {
            if (FAILED != null) throw new UncheckedIOException("--work syscalls= writes to " + PATH + ": " + FAILED.getMessage(), FAILED);
        }

        /** One write(2) of one byte. */
        static void write() {
            try {
                OUT.write(0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
