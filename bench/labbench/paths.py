"""Where the project's own files are: the repository, and the Python that draws its charts."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]                    # the repository: jars, bench/, catalog.tsv
CHART_PYTHON = ROOT / ".tools" / "venv" / "bin" / "python"    # bench/tools/install.sh matplotlib
