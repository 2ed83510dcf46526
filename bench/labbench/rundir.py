"""The run directory, results/<UTC stamp>/ (results/latest links the last one), and the key=value
files in it (meta.txt, cell.txt) that bench/report.py reads."""
import os
from datetime import datetime, timezone
from pathlib import Path


def create(results_dir):
    """A new run directory with logs/, calibration/ and cells/; (its path, the UTC time now). Made
    exclusively: two runs started in the same second get two directories (stamp, stamp-1, ...)."""
    now = datetime.now(timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    base = Path(results_dir)
    base.mkdir(parents=True, exist_ok=True)
    run_dir, n = base / stamp, 1
    while True:
        try:
            run_dir.mkdir()            # no exist_ok: this run's own, or the next name
            break
        except FileExistsError:
            run_dir, n = base / f"{stamp}-{n}", n + 1
    for sub in ("logs", "calibration", "cells"):
        (run_dir / sub).mkdir()
    link = base / "latest"
    tmp = base / f".latest-{run_dir.name}.tmp"          # named after this run's directory: never another's
    if tmp.is_symlink():
        tmp.unlink()
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, link)          # a reader never finds latest missing
    return run_dir, now


def put(path, /, **values):
    """Append key=value lines (None -> empty); a later line wins when report.py reads them.
    `path` is positional-only, so a key may be called path too."""
    with open(path, "a") as f:
        for key, value in values.items():
            f.write(f"{key}={'' if value is None else value}\n")
