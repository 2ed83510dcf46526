"""The lab's scenarios and load generators: importing this module registers every one of them with
the core (scenarios.register, loadgens.register), in the order --help and the reports list them.
The entry points import it (main, the report's and compare's command lines, the tests); the core
never does: a plug-in imports the core, never the other way round (bench/tests/test_house.py).
"""
from . import loadgens, scenarios
from .loadgens import pgbench, probe, vegeta, wrk
from .scenarios import call, cost, degrade, fanout, preset2021, slow_clients, sweep

for gen in (wrk, vegeta, probe, pgbench):
    loadgens.register(gen.LOADGEN)
for scene in (call.SCENARIO, slow_clients.UPLOAD, slow_clients.DOWNLOAD, fanout.SCENARIO, sweep.SCENARIO,
              preset2021.SCENARIO, degrade.SCENARIO, cost.SCENARIO):
    scenarios.register(scene)
