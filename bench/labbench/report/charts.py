"""Charts are drawn by a script of bench/ with the project-local venv's matplotlib, so that the
bench itself stays standard-library only; a WARNING, not a failure, when they cannot be drawn."""
import subprocess
import sys

from ..paths import CHART_PYTHON, ROOT


def draw(script, run_dir, what):
    """Run bench/tools/<script> on run_dir (it writes run_dir/charts/); `what` names the charts in the WARNING."""
    if not CHART_PYTHON.exists():
        print(f"WARNING: no {what}: matplotlib is not installed; run: bench/tools/install.sh matplotlib",
              file=sys.stderr)
        return
    r = subprocess.run([str(CHART_PYTHON), str(ROOT / "bench" / "tools" / script), str(run_dir)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    print(r.stdout.rstrip() if r.returncode == 0 else f"WARNING: bench/tools/{script} failed:\n{r.stdout}",
          file=sys.stdout if r.returncode == 0 else sys.stderr)
