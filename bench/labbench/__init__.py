"""labbench: the lab's wrk matrix, run by ./bench.sh (`python3 -m labbench` with bench/ on sys.path).

Modules, in the order a run uses them:
  settings  environment variables, defaults, usage text, validation (ERROR + usage, exit 2);
            the sweep's own matrix (SWEEP, SWEEP_VARIANTS, SWEEP_CONTAINER)
  limits    file descriptors, ephemeral ports, accept queues against the largest connection level
            (ERROR + usage, exit 2, before anything starts; as root, ulimit -n raised)
  machine   tools, JDK, free ports, ulimit -n, the charts' venv, the build when jars are stale (ERROR, exit 1)
  rundir    results/<UTC stamp>/ and its key=value files
  procs     the processes we start and stop (by PID), readiness, /stats, CPU ticks from /proc, and
            a sampler of the app's peak RSS and threads while wrk runs
  wrk       the measured wrk command and the warm-up
  sideload  what runs beside wrk during a cell (slow clients)
  cells     the matrix, calibration, the app under test, one cell
  main      the whole run, top to bottom; Ctrl-C / TERM handling
Reports are bench/report.py's job: it reads only the run directory's files (and has a sweep's
charts drawn by bench/tools/charts.py, with the matplotlib of .tools/venv).
"""
