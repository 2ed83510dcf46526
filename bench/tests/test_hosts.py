"""HOSTS (issue 28) without hosts: how place.py wraps a role's command for its host, how wrk's -t and
-c split over load hosts, what host-run's lines give back, how an inventory host's variables become
its ssh command, and the load hosts' completions on one axis. End to end on network namespaces:
bench/tests/hosts-test.sh."""
import os
import shlex
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from labbench import inventory, limits, place, procs
from labbench.checks import UsageError
from labbench.loadgens import histogram, wrk


def remote(name="h4", cpus=""):
    return place.Host(name=name, address="10.0.0.4", ssh=("ssh", "-o", "BatchMode=yes", f"root@10.0.0.4"),
                      cpus=cpus, lab_dir="/srv/lab")


class Shares(unittest.TestCase):
    def test_even_split_with_the_remainders_first(self):
        self.assertEqual([(0, 1, 50), (1, 1, 50)], wrk.shares(2, 100, 2))
        self.assertEqual([(0, 4, 34), (1, 3, 33), (2, 3, 33)], wrk.shares(10, 100, 3))

    def test_every_host_gets_a_thread_and_none_more_threads_than_connections(self):
        self.assertEqual([(0, 1, 3), (1, 1, 2)], wrk.shares(1, 5, 2))
        self.assertEqual([(0, 2, 2), (1, 1, 1)], wrk.shares(100, 3, 2))

    def test_a_host_without_a_connection_is_left_out(self):
        self.assertEqual([(0, 1, 1)], wrk.shares(1, 1, 2))


class Commands(unittest.TestCase):
    def tearDown(self):
        place.configure({})

    def test_here_the_command_is_unchanged_or_pinned(self):
        place.configure({})
        self.assertEqual(["wrk", "-c", "10"], place.command("loadgen", ["wrk", "-c", "10"]))
        place.configure({"loadgen": "0"})
        self.assertEqual(["taskset", "-c", "0", "wrk"], place.command("loadgen", ["wrk"]))

    def test_on_a_host_it_goes_through_ssh_and_host_run_with_its_cpus_and_no_env_value(self):
        place.configure({}, {"app": [remote("h1")], "backend": [remote("h2")],
                             "loadgen": [remote("h4", cpus="0"), remote("h5")]})
        cmd = place.command("loadgen", ["wrk", "-d", "10s", "http://10.0.0.1:8080/call?x=1 2"], 0, {"WRK_JSON": "/tmp/a b.json"})
        self.assertEqual(["ssh", "-o", "BatchMode=yes", "root@10.0.0.4"], cmd[:4])
        # the environment's values go in on stdin (hostrun.env_text), never in a command line
        self.assertEqual(["/srv/lab/bench/tools/host-run.sh", "--cpus", "0", "--silence", "10", "--env-stdin", "--",
                          "wrk", "-d", "10s", "http://10.0.0.1:8080/call?x=1 2"], shlex.split(cmd[4]))
        self.assertNotIn("a b.json", " ".join(cmd))
        self.assertNotIn("--cpus", shlex.split(place.command("loadgen", ["wrk"], 1)[4]))
        self.assertEqual("10.0.0.4", place.address("app"))
        self.assertEqual("[h4] wrk -c 5", place.shown("loadgen", ["wrk", "-c", "5"]))
        self.assertEqual(1, place.cpu_count("loadgen"))
        self.assertIsNone(place.cpu_count("app"))

    def test_the_commands_cpu_from_host_runs_times(self):
        with tempfile.TemporaryDirectory() as d:
            log = Path(d, "wrk-h4.txt")
            log.write_text("host-run: pid 42 on vm 10.0.0.4/24\nRunning 10s test\n"
                           "host-run: exit 0, then the shell's and its children's user and system CPU:\n"
                           "0m0.003s 0m0.001s\n1m2.500s 0m0.250s\n")
            self.assertEqual(62.75, place.ran_cpu_s(log))
            log.write_text("host-run: pid 42 on vm 10.0.0.4/24\n")     # still running, or its ssh lost
            self.assertIsNone(place.ran_cpu_s(log))


class PinnedHostCpu(unittest.TestCase):
    STAT = ("cpu  300 0 100 600 0 0 0 7 0 0\n"
            "cpu0 100 0 50 350 0 0 0 2 0 0\n"
            "cpu1 200 0 50 250 0 0 0 5 0 0\n"
            "intr 12345\n")

    def test_a_pinned_host_reads_its_own_cpus_lines_only(self):
        self.assertEqual((255, 505, 5), procs.cpus_ticks(self.STAT, {1}))
        self.assertEqual(procs.cpu_line_ticks(self.STAT.splitlines()[0]), procs.cpus_ticks(self.STAT, {0, 1}))
        self.assertEqual((0, 0, 0), procs.cpus_ticks(self.STAT, {7}))      # a CPU the box does not have


class HostLimits(unittest.TestCase):
    def test_a_hosts_limits_as_read_there(self):
        m = limits.parse_host("1024\n524288\n1048576\n1024\t65000\n4096\n4194304\n254444\n0\n")
        self.assertEqual((1024, 524288, (1024, 65000), True), (m.soft, m.hard, m.ports, m.root))
        self.assertEqual(1 << 30, limits.parse_host("unlimited unlimited 1048576 1024 65000 4096 4194304 254444 1000").hard)
        self.assertIsNone(limits.parse_host("bash: ulimit: error"))

    def test_each_host_against_what_its_own_roles_need(self):
        m = limits.parse_host("20000 20000 1048576 32768 60999 4096 4194304 254444 0")
        # the app: 2 fds per connection; 9,000 fit in 20,000, 10,000 do not
        self.assertIsNone(limits.check_host(m, ["app"], 9000, 0, 200, "http"))
        self.assertIn("hard ulimit -n 20000", limits.check_host(m, ["app"], 10000, 0, 200, "http"))
        # a load host with half of 30,000: one fd each fits, but not the source ports of 32768-60999
        why = limits.check_host(m, ["loadgen"], 30000, 15000, 0, "http")
        self.assertIsNone(why)
        why = limits.check_host(m, ["loadgen"], 60000, 30000, 0, "http")
        self.assertIn("hard ulimit -n", why)
        wide = limits.parse_host("100000 100000 1048576 32768 60999 4096 4194304 254444 0")
        self.assertIn("source ports", limits.check_host(wide, ["loadgen"], 60000, 30000, 0, "http"))
        # behind PostgreSQL the app makes no call per connection: its pool is its cap
        self.assertIsNone(limits.check_host(wide, ["app"], 30000, 0, 0, "postgres"))


class InventoryHosts(unittest.TestCase):
    def test_ansible_variables_make_the_ssh_command(self):
        h = inventory.host_of("h4", {"ansible_host": "10.0.0.4", "ansible_port": 2222, "ansible_user": "bench",
                                     "ansible_ssh_private_key_file": "/k/id", "cpus": [0, 2],
                                     "ansible_ssh_common_args": "-o UserKnownHostsFile=/k/known"}, "/repo", "/c")
        self.assertEqual(("10.0.0.4", "0,2", "/repo", ""), (h.address, h.cpus, h.lab_dir, h.java))
        # --: whatever the inventory says, the destination is never read as an option
        self.assertEqual(["ssh", "-o", "UserKnownHostsFile=/k/known", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                          "-p", "2222", "-i", "/k/id", "--", "bench@10.0.0.4"], inventory.plain_ssh(h))
        self.assertIn("ControlMaster=auto", h.ssh)
        self.assertIn("ControlPath=/c/%C", h.ssh)
        self.assertIn("ServerAliveInterval=2", h.ssh)

    def test_the_groups_a_run_needs_follow_its_backend(self):
        self.assertEqual(["app", "backend", "loadgen"], inventory.needed("http", ""))
        self.assertEqual(["app", "db", "loadgen"], inventory.needed("postgres", ""))
        # DB_URL: the user's server, placed by them; psql and pgbench still run on the first load host
        self.assertEqual(["app", "loadgen"], inventory.needed("postgres", "postgresql://u@h:5432/d"))

    def test_the_db_role_runs_pinned_like_the_backend_here(self):
        place.configure({"app": "1", "backend": "0", "loadgen": "0"})
        try:
            self.assertEqual(["taskset", "-c", "0", "pg.sh"], place.command("db", ["pg.sh"]))
            self.assertEqual("127.0.0.1", place.address("db"))
        finally:
            place.configure({})


def an_inventory(**app_vars):
    """ansible-inventory --list's shape: h1 the app, h2 the backend, h4 the load, h1's variables given."""
    hv = {"h1": {"ansible_host": "10.0.0.1", **app_vars}, "h2": {"ansible_host": "10.0.0.2"}, "h4": {"ansible_host": "10.0.0.4"}}
    return {"app": {"hosts": ["h1"]}, "backend": {"hosts": ["h2"]}, "loadgen": {"hosts": ["h4"]}, "_meta": {"hostvars": hv}}


class BadInventory(unittest.TestCase):
    """Every value that reaches ssh or a remote shell, checked before anything starts: an ERROR naming
    the host and the value (main: exit 2 with the usage), and nothing made on disk."""
    CASES = [({"ansible_host": "-oProxyCommand=touch /tmp/x"}, "host h1: ansible_host '-oProxyCommand=touch /tmp/x' is not an IP address or a host name"),
             ({"ansible_host": "10.0.0.1;reboot"}, "host h1: ansible_host '10.0.0.1;reboot' is not an IP address"),
             ({"ansible_host": "a b"}, "host h1: ansible_host 'a b' is not"),
             ({"ansible_port": "abc"}, "host h1: ansible_port 'abc' is not a port number"),
             ({"ansible_port": 70000}, "host h1: ansible_port 70000 is not a port number"),
             ({"ansible_user": "-lroot"}, "host h1: ansible_user '-lroot' is not a user name"),
             ({"cpus": "abc"}, "host h1: cpus 'abc' is not a CPU list"),
             ({"cpus": "3-1"}, "host h1: cpus '3-1' is not a CPU list like 1, 0-3 or 0,2-3 (each range low to high)"),
             ({"lab_dir": "lab; rm -rf ~"}, "host h1: lab_dir 'lab; rm -rf ~' is not an absolute path"),
             ({"ansible_ssh_common_args": "-o 'unclosed"}, "host h1: ansible_ssh_common_args \"-o 'unclosed\" is not ssh options")]

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        patch = mock.patch.object(inventory.tempfile, "tempdir", self.tmp.name)     # where mkdtemp would make one
        patch.start()
        self.addCleanup(patch.stop)
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(inventory.close)
        self.addCleanup(place.configure, {})

    def parse(self, inv, backend="http"):
        with mock.patch.object(inventory, "read", return_value=inv):
            return inventory.parse("inv.ini", backend, here="/repo")

    def test_each_bad_value_names_its_host_and_value_and_makes_nothing(self):
        for hv, message in self.CASES:
            with self.subTest(hv), self.assertRaises(UsageError) as e:
                self.parse(an_inventory(**hv))
            self.assertIn(message, str(e.exception))
        self.assertEqual([], os.listdir(self.tmp.name))       # no ssh control directory

    def test_a_bad_host_name_is_refused_too(self):
        inv = an_inventory()
        inv["loadgen"]["hosts"] = ["-h4"]
        with self.assertRaises(UsageError) as e:
            self.parse(inv)
        self.assertIn("host -h4: the name '-h4' is not a host name", str(e.exception))

    def test_a_host_in_two_of_the_runs_groups_unless_it_says_so(self):
        inv = an_inventory()
        inv["backend"]["hosts"] = ["h1"]
        with self.assertRaises(UsageError) as e:
            self.parse(inv)
        self.assertIn("10.0.0.1 is h1 in app and h1 in backend: its roles would share its CPUs", str(e.exception))
        # the same box under two names is one host too
        inv = an_inventory()
        inv["_meta"]["hostvars"]["h2"]["ansible_host"] = "10.0.0.1"
        with self.assertRaises(UsageError):
            self.parse(inv)
        self.assertEqual([], os.listdir(self.tmp.name))
        # an explicit opt-in, which the report names; a db group BACKEND=http does not use is no second role
        inv = an_inventory(lab_shared=True)
        inv["backend"]["hosts"] = ["h1"]
        inv["db"] = {"hosts": ["h4"]}
        hosts = self.parse(inv)
        place.configure({}, hosts)
        self.assertEqual("app on h1 10.0.0.1; backend on h1 10.0.0.1; loadgen on h4 10.0.0.4; h1 shared by app "
                         "and backend (lab_shared)", place.describe_hosts())
        self.assertEqual(1, len(os.listdir(self.tmp.name)))    # the run's ssh control directory, once all passed

    def test_good_values_pass(self):
        hosts = self.parse(an_inventory(ansible_host="app-1.lab.example", ansible_port="2222", cpus="0,2-3",
                                        ansible_user="bench", lab_dir="/srv/lab"))
        h = hosts["app"][0]
        self.assertEqual(("app-1.lab.example", 2222, "0,2-3", "/srv/lab"), (h.address, h.port, h.cpus, h.lab_dir))
        self.assertEqual(["--", "bench@app-1.lab.example"], list(h.ssh[-2:]))

    def test_importing_the_lab_and_making_a_host_creates_nothing_on_disk(self):
        code = ("import labbench.main, labbench.inventory as i; "
                "i.host_of('h1', {'ansible_host': '10.0.0.1'}, '/repo')")
        subprocess.run([sys.executable, "-c", code], cwd=self.tmp.name, check=True,
                       env=dict(os.environ, TMPDIR=self.tmp.name, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
        self.assertEqual([], os.listdir(self.tmp.name))


def doc(times, t0, conns):
    """A load host's wrk.json as merged() reads it: one 1 µs sample per response."""
    return {"duration_us": 10_000_000, "requests": len(times), "bytes": 0, "connections": conns,
            "errors": dict.fromkeys(("connect", "read", "write", "status", "timeout"), 0),
            "histogram_us": [[1, len(times)]], "completions_s": times, "completions_t0_unix": t0, "slow_2s": 0}


class Merged(unittest.TestCase):
    def test_every_connection_twice_the_hosts_rates_add_up_whatever_their_start(self):
        # 2 connections a host, each answering every second for 3 s: 2 req/s a host
        a = doc([0.0, 0.0, 1.0, 1.0, 2.0, 2.0], 100.0, 2)
        b = doc([0.0, 0.0, 1.0, 1.0, 2.0, 2.0], 100.6, 2)       # started 0.6 s later
        out = wrk.merged([a, b], [{"connections": 2}, {"connections": 2}])
        self.assertEqual((4.0, "per-connection spans, each load host's, summed"), (out["steady_rps"], out["steady_how"]))
        self.assertNotIn("completions_s", out)
        self.assertEqual(12, out["requests"])

    def test_a_starved_host_puts_the_completions_on_one_axis(self):
        a = doc([0.0, 1.0], 100.0, 5)            # 5 connections, 2 answers: no per-connection spans
        b = doc([0.0, 1.0], 100.5, 5)
        out = wrk.merged([a, b], [{"connections": 5}, {"connections": 5}])
        self.assertNotIn("steady_rps", out)
        self.assertEqual([0.0, 0.5, 1.0, 1.5], out["completions_s"])


class Completions(unittest.TestCase):
    def test_hosts_times_on_one_wall_clock_axis(self):
        a = {"completions_s": [0.0, 1.0], "completions_t0_unix": 100.0}
        b = {"completions_s": [0.0, 0.5], "completions_t0_unix": 100.25}
        self.assertEqual({"completions_s": [0.0, 0.25, 0.75, 1.0], "completions_t0_unix": 100.0, "steady_responses": 4},
                         histogram.completions([a, b]))
        self.assertEqual({}, histogram.completions([a, {"completions_s": [0.0], "completions_t0_unix": None}]))


if __name__ == "__main__":
    unittest.main()
