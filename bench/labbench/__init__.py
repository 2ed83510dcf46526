"""labbench: the lab's wrk matrix, run by ./bench.sh (`python3 -m labbench` with bench/ on sys.path).

Modules, in the order a run uses them:
  settings  environment variables, defaults, usage text, validation (ERROR + usage, exit 2)
  machine   tools, JDK, free ports, ulimit -n, the build when jars are stale (ERROR, exit 1)
  rundir    results/<UTC stamp>/ and its key=value files
  procs     the processes we start and stop (by PID), readiness, /stats, CPU ticks from /proc
  wrk       the measured wrk command and the warm-up
  sideload  what runs beside wrk during a cell (slow clients)
  cells     the matrix, calibration, the app under test, one cell
  main      the whole run, top to bottom; Ctrl-C / TERM handling
Reports are bench/report.py's job: it reads only the run directory's files.
"""
