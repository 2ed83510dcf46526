package lab.common.stats;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
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
 */
final class JvmCpu {

    private static final Path TASKS = Path.of("/proc/self/task");
    private static final long MS_PER_TICK = 10;   // USER_HZ = 100
    private static final CompilationMXBean COMPILER = ManagementFactory.getCompilationMXBean();

    private JvmCpu() {
    }

    static String toJson() {
        long[] compiler = compilerCpu();
        long cpuMs = ProcessHandle.current().info().totalCpuDuration().map(Duration::toMillis).orElse(-1L);
        long compileMs = COMPILER != null && COMPILER.isCompilationTimeMonitoringSupported() ? COMPILER.getTotalCompilationTime() : -1;
        return "{\"cpuMs\":" + cpuMs + ",\"compilerCpuMs\":" + compiler[0] + ",\"compilerThreads\":" + compiler[1]
                + ",\"compileMs\":" + compileMs + "}";
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
