#!/usr/bin/env bash
# java-home.sh - print the JDK home the lab runs with.
#
# Order: $JAVA_HOME if set (you chose it); else the newest JDK >= 21 under /usr/lib/jvm
# (virtual threads and JDK 25's CompletableFuture pool matter here, docs/traps.md #9 and #11);
# else the JDK of the `java` on PATH. Exits 1 with a message when there is no JDK at all.
#
# USAGE: bench/tools/java-home.sh          eg, JAVA_HOME=$(bench/tools/java-home.sh) mvn -B -q verify
set -euo pipefail

if [[ -n "${JAVA_HOME:-}" ]]; then
    echo "$JAVA_HOME"
    exit 0
fi

# The major version a JDK home declares in its `release` file (JAVA_VERSION="25.0.3"), or 0.
major_of() {
    local v
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null || true)
    echo "${v:-0}"
}

best="" best_major=0
for dir in /usr/lib/jvm/*/; do
    home=$(readlink -f "$dir")            # java-1.17.0-openjdk-amd64 is a link to java-17-...
    [[ -x "$home/bin/java" && -x "$home/bin/javac" ]] || continue
    major=$(major_of "$home")
    if (( major >= 21 && major > best_major )); then
        best=$home best_major=$major
    fi
done
if [[ -n "$best" ]]; then
    echo "$best"
    exit 0
fi

if java_bin=$(command -v java); then
    dirname "$(dirname "$(readlink -f "$java_bin")")"   # .../bin/java -> the JDK home
    exit 0
fi

echo "ERROR: no JDK found: set JAVA_HOME or install one (Debian: apt-get install -y openjdk-17-jdk)" >&2
exit 1
