package lab.common.stats;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import lab.common.profile.ProfilerTest;

/**
 * /stats' {@code jvm} object (issue 26): the process's CPU moves with work done in it, measured
 * against the thread's own CPU clock (a relation, not a speed); the compiler threads are found and
 * their CPU is part of the process's; HotSpot's compile time is kept.
 */
class JvmCpuTest {

    @Test
    void cpuFollowsWorkAndTheCompilerIsPartOfIt() throws Exception {
        String before = JvmCpu.toJson();
        long threadCpu = ProfilerTest.burnCpu(300);   // 300 ms of this thread's own CPU
        String after = JvmCpu.toJson();
        long grew = field(after, "cpuMs") - field(before, "cpuMs");
        // The process's CPU grew by at least the thread's (ProcessHandle rounds to the ms; 10 % room).
        assertTrue(grew >= 0.9 * threadCpu / 1e6, "process CPU grew " + grew + " ms for " + threadCpu / 1e6 + " ms of this thread's: " + before + " -> " + after);
        assertTrue(field(after, "compilerThreads") >= 1, "no C1/C2 compiler thread in /proc/self/task: " + after);
        long compiler = field(after, "compilerCpuMs");
        assertTrue(compiler >= 0 && compiler <= field(after, "cpuMs"), after);
        assertTrue(field(after, "compileMs") >= 0, after);
    }

    private static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(-?\\d+)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return Long.parseLong(m.group(1));
    }
}
