package lab.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code --work SPEC} (issue 39): the words, their bounds, the canonical form the {@code lab:} line
 * prints and {@link WorkSpec#parse} reads back, and its place among the other flags (a bad spec is
 * a bad flag like any other; without it the config is the one it always was).
 */
class WorkSpecTest {

    private static final List<String> APPS = List.of("sync-servlet");
    private static final String BASE = "--container tomcat --threads 1 --port 0 --admin-port 0 --remote http://127.0.0.1:9";

    @ParameterizedTest(name = "''{0}'' -> {1} us, {2} bytes, {3} syscalls: {4}")
    @CsvSource(delimiter = ';', value = {
            "cpu=500us alloc=65536 syscalls=10; 500; 65536; 10; cpu=500us,alloc=65536,syscalls=10",
            "cpu=500us,alloc=65536,syscalls=10; 500; 65536; 10; cpu=500us,alloc=65536,syscalls=10",
            "syscalls=10, cpu=2ms;              2000; 0;    10; cpu=2000us,syscalls=10",
            "'  alloc=64  ';                     0;   64;   0;  alloc=64",
            "cpu=1us;                            1;   0;    0;  cpu=1us",
            "cpu=1000ms;                         1000000; 0; 0; cpu=1000000us",
            "cpu=1000000us alloc=67108864 syscalls=10000; 1000000; 67108864; 10000; cpu=1000000us,alloc=67108864,syscalls=10000",
            "syscalls=1;                         0;   0;    1;  syscalls=1"})
    void goodSpecs(String spec, int cpu, int alloc, int syscalls, String canonical) {
        WorkSpec work = WorkSpec.parse(spec);
        assertEquals(new WorkSpec(cpu, alloc, syscalls), work);
        assertEquals(canonical, work.toString());
        assertEquals(work, WorkSpec.parse(work.toString()), "the lab line's form reads back as the same work");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", " , ,"})
    void emptyIsNoWork(String spec) {
        assertSame(WorkSpec.NONE, WorkSpec.parse(spec));
        assertTrue(WorkSpec.NONE.none());
        assertEquals("", WorkSpec.NONE.toString());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
            "cpu=500;                 cpu must be <N>us or <N>ms",
            "cpu=5s;                  cpu must be <N>us or <N>ms",
            "cpu=1.5ms;               cpu must be <N>us or <N>ms",
            "cpu=-1us;                cpu must be <N>us or <N>ms",
            "cpu=0us;                 cpu must be in 1us..1000ms",
            "cpu=1001ms;              cpu must be in 1us..1000ms",
            "cpu=1000001us;           cpu must be in 1us..1000ms",
            "cpu=99999999999ms;       cpu must be <N>us or <N>ms",
            "alloc=0;                 alloc must be in 64..67108864 bytes",
            "alloc=63;                alloc must be in 64..67108864 bytes",
            "alloc=67108865;          alloc must be in 64..67108864 bytes",
            "alloc=64k;               alloc must be an integer in 64..67108864 bytes",
            "alloc=;                  alloc must be an integer",
            "syscalls=0;              syscalls must be in 1..10000",
            "syscalls=10001;          syscalls must be in 1..10000",
            "syscalls=ten;            syscalls must be an integer",
            "cpu=1us cpu=2us;         cpu given twice",
            "alloc=64,alloc=64;       alloc given twice",
            "syscalls=1 syscalls=1;   syscalls given twice",
            "gc=1;                    unknown word 'gc'",
            "CPU=1us;                 'CPU=1us' is not one of",
            "cpu;                     'cpu' is not one of",
            "cpu =1us;                'cpu' is not one of"})
    void badSpecsSayWhy(String spec, String reason) {
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> WorkSpec.parse(spec));
        assertTrue(bad.getMessage().startsWith("--work: ") && bad.getMessage().contains(reason), bad.getMessage());
    }

    @Test
    void theFlagIsReadLikeAnyOther() {
        assertSame(WorkSpec.NONE, parse("").work(), "no --work: no work");
        assertEquals(new WorkSpec(500, 65536, 10), parse("--work cpu=500us,alloc=65536,syscalls=10").work());
        assertSame(WorkSpec.NONE, parse("--work ,").work());
        // The last --work wins, as with every flag
        assertEquals(new WorkSpec(0, 0, 3), parse("--work cpu=1ms --work syscalls=3").work());
        // Every app takes it: the fan-out apps and the database backend too
        assertEquals(new WorkSpec(7, 0, 0), LabConfig.parse(("--app fanout-async " + BASE + " --work cpu=7us").split(" "),
                List.of("fanout-async")).work());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> parse("--work cpu=2s"));
        assertTrue(bad.getMessage().startsWith("--work: cpu must be"), bad.getMessage());
        bad = assertThrows(IllegalArgumentException.class, () -> parse("--work"));
        assertEquals("missing value for --work", bad.getMessage());
        assertTrue(LabConfig.USAGE.contains("[--work \"cpu=500us alloc=65536 syscalls=10\" (default: none)]"), LabConfig.USAGE);
    }

    @Test
    void withWorkKeepsEverythingElse() {
        LabConfig plain = parse("--max-in-flight 5 --client-timeout-ms 700");
        LabConfig worked = plain.withWork(new WorkSpec(1, 0, 0));
        assertEquals(new WorkSpec(1, 0, 0), worked.work());
        assertEquals(plain, worked.withWork(WorkSpec.NONE));
        assertSame(WorkSpec.NONE, LabConfig.forTest("sync-servlet", "jetty", 1, null).work());
    }

    private static LabConfig parse(String extra) {
        List<String> args = new ArrayList<>(List.of(BASE.split(" ")));
        if (!extra.isEmpty()) args.addAll(List.of(extra.split(" ")));
        return LabConfig.parse(args.toArray(String[]::new), APPS);
    }
}
