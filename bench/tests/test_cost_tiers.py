"""PROFILE=1 in a cost run (issue 39: which compiled code differs between fresh JVMs): each sample of
the app's profile goes to one tier by how its code ran, a fork's kept windows are summed, and the card
says what its dearest fork spent more than its cheapest, with what sampling alone could make of it.
The frames are real ones, from a profiled cost run of 2026-11-27 (async-profiler 4.4, `ann`)."""
import tempfile
import unittest
from pathlib import Path

from labbench.scenarios.cost import tiers

# one stack per tier, from a real collapsed.txt (their middles cut)
C2 = "[qtp1-12 tid=40];java/lang/Thread.run_[j];org/eclipse/jetty/io/SelectableChannelEndPoint$1.run_[j];" \
     "org/eclipse/jetty/io/AbstractConnection$ReadCallback.succeeded_[i]"
C1 = "[qtp1-12 tid=40];java/util/concurrent/FutureTask.run_[1];org/eclipse/jetty/io/IdleTimeout$$Lambda.0x7b188ed0.run_[1]"
C1_INLINED = "[HttpClient-1-Worker-0 tid=44];java/util/concurrent/FutureTask.run_[1];" \
             "jdk/internal/net/http/common/SequentialScheduler.runOrSchedule_[i]"
INTERPRETED = "[qtp1-13 tid=41];java/lang/Thread.run_[j];lab/common/stats/StatsHttpHandler.handle_[0]"
NATIVE = "[qtp1-12 tid=40];java/lang/Thread.run_[j];sun/nio/ch/EPollSelectorImpl.clearInterrupt_[j];" \
         "sun/nio/ch/IOUtil.drain_[j];read"
GC = "[G1 Conc#0 tid=21];clone3;start_thread;G1ConcurrentMarkThread::run_service"
JIT = "[C2 CompilerThre tid=27];clone3;start_thread;CompileBroker::compiler_thread_loop;C2Compiler::compile_method"
VM = "[VM Periodic Task Thread tid=30];clone3;start_thread;WatcherThread::run"


class ClassifyTest(unittest.TestCase):
    def test_each_sample_goes_to_the_tier_its_code_ran_in(self):
        cases = [(C2, ("c2", "org/eclipse/jetty/io/AbstractConnection$ReadCallback.succeeded")),
                 (C1, ("c1", "org/eclipse/jetty/io/IdleTimeout$$Lambda.0x7b188ed0.run")),
                 # inlined runs as the frame it was inlined into: C1 here, not C2
                 (C1_INLINED, ("c1", "jdk/internal/net/http/common/SequentialScheduler.runOrSchedule")),
                 (INTERPRETED, ("interpreter", "lab/common/stats/StatsHttpHandler.handle")),
                 (NATIVE, ("native", "sun/nio/ch/IOUtil.drain (native)")),
                 (GC, ("gc", "(collector)")), (JIT, ("jit", "(compiler)")), (VM, ("vm", "(JVM)"))]
        for stack, expected in cases:
            with self.subTest(stack=stack):
                self.assertEqual(expected, tiers.classify(stack.split(";")))

    def test_counts_and_a_profile_without_marks_has_no_tiers(self):
        text = f"{C2} 30\n{C1} 5\n{NATIVE} 12\n{GC} 3\n"
        t, leaves = tiers.count(text)
        self.assertEqual({"c2": 30, "c1": 5, "interpreter": 0, "native": 12, "gc": 3, "jit": 0, "vm": 0}, t)
        self.assertEqual(12, leaves["sun/nio/ch/IOUtil.drain (native)"])
        # a profile from before `ann` (or the JFR fallback): its frames say nothing of how they ran
        self.assertEqual((None, None), tiers.count(text.replace("_[j]", "").replace("_[i]", "").replace("_[1]", "")))


def window(name):
    return {"profile": {"dir": name, "samples": 1, "event": "itimer"}}


class ForkTest(unittest.TestCase):
    def test_a_fork_sums_its_kept_windows_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            for name, text in (("profile-1", f"{C2} 100\n"), ("profile-2", f"{C2} 40\n{C1} 10\n"),
                               ("profile-3", f"{C2} 30\n{NATIVE} 20\n")):
                (d / name).mkdir()
                (d / name / "collapsed.txt").write_text(text)
            # profile-1 was a window measured again (still warming): not among the kept windows
            cost = {"windows": [window("profile-2"), window("profile-3")], "still_warming": [window("profile-1")]}
            fork = tiers.of_fork(cost, d)
            self.assertEqual(100, fork["samples"])
            self.assertEqual((0.7, 0.1, 0.2), (fork["tiers"]["c2"], fork["tiers"]["c1"], fork["tiers"]["native"]))
            self.assertEqual("itimer", fork["event"])
            # a kept window whose profile is missing: no shares of a part of the fork
            cost["windows"].append(window("profile-4"))
            self.assertIsNone(tiers.of_fork(cost, d))
            self.assertIsNone(tiers.of_fork({"windows": [{"perf": {}}]}, d))      # not profiled


def fork(cpu, samples, **shares):
    full = {k: shares.get(k, 0.0) for k, _ in tiers.TIERS}
    return {"cpu_us_with_rest": cpu, "profile": {"samples": samples, "event": "itimer", "tiers": full,
                                                  "leaves": {"(collector)": full["gc"], "a/B.c": full["c2"]}}}


class SectionTest(unittest.TestCase):
    def test_the_dearest_fork_against_the_cheapest_with_the_sampling_error(self):
        cheap = fork(300.0, 900, c2=0.5, native=0.4, gc=0.1)
        dear = fork(360.0, 900, c2=0.5, native=0.3, gc=0.2)
        line = tiers.difference_line("sync-servlet@jetty:v1", [dear, cheap])
        # GC: 72 - 30 = +42.0; sampling: 1.96 * sqrt(300² .1 .9/900 + 360² .2 .8/900) = 1.96 * sqrt(32.04) = 11.1
        self.assertEqual("- sync-servlet@jetty:v1: the dearest fork +60.0 µs/req against the cheapest (360.0 and 300.0); "
                         "by tier collector threads +42.0 ± 11.1, C2 code +30.0 ± 15.3, native and kernel from Java "
                         "-12.0 ± 14.4, C1 code +0.0 ± 0.0; the leaves that differ most: `(collector)` +42.0 ± 11.1, "
                         "`a/B.c` +30.0 ± 15.3", line)

    def test_a_table_row_per_profiled_fork_and_nothing_without_profiles(self):
        rows = [("webflux@netty:1", [fork(300.0, 900, c2=0.5, native=0.5), fork(330.0, 950, c2=0.6, native=0.4)]),
                ("async-servlet@jetty:1", [{"cpu_us_with_rest": 200.0}])]
        text = tiers.section(rows)
        self.assertIn("| webflux@netty:1 | 2 | 330.0 | 198.0 | 0.0 | 0.0 | 132.0 | 0.0 | 0.0 | 0.0 | 950 |", text)
        self.assertIn("async-profiler on itimer", text)
        self.assertNotIn("async-servlet", text)
        self.assertEqual("", tiers.section([("async-servlet@jetty:1", [{"cpu_us_with_rest": 200.0}])]))


if __name__ == "__main__":
    unittest.main()
