#!/usr/bin/env bash
# catalog.sh - what catalog.tsv, the one list of the lab's apps, says, for the Makefile and Ansible
# (the bench's Python reads it through bench/labbench/catalog.py): by the header's column names, so a
# column added to the catalog moves nothing here.
#
# USAGE: bench/tools/catalog.sh modules SCENARIO   the Maven modules whose jars serve the scenario's apps,
#                                                  one per line, eg, `modules call` (what HOSTS places)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { echo "Usage: bench/tools/catalog.sh modules SCENARIO" >&2; }
if [[ $# != 2 || $1 != modules ]]; then
    echo "ERROR: catalog.sh: expected 'modules SCENARIO', got '$*'" >&2
    usage
    exit 2
fi
awk -F'\t' -v scenario="$2" '
    /^#/ || NF == 0 { next }
    !header { for (i = 1; i <= NF; i++) col[$i] = i; header = 1; next }
    { n = split($col["scenarios"], s, ","); for (i = 1; i <= n; i++) if (s[i] == scenario) print $col["module"] }
' "$ROOT/catalog.tsv" | sort -u
