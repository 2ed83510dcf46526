#!/usr/bin/env bash
# mvn.sh - run the project's own Maven: the Maven Wrapper (./mvnw) with the JDK the lab runs with.
#
# ./mvnw fetches the Maven that .mvn/wrapper/maven-wrapper.properties pins (3.9.16, its SHA-256
# checked) once into the project-local .tools/maven, so no Maven from the machine is needed (the
# machine's 3.8.7 opened every run on JDK 25 with four sun.misc.Unsafe WARNING lines from its Guava).
# JAVA_HOME: bench/tools/java-home.sh ($JAVA_HOME, else the newest JDK >= 21 installed).
# On JDK 24+ (JEP 498) the Kotlin compiler, which runs inside Maven's JVM for fanout-kotlin, calls
# sun.misc.Unsafe and the JVM warns on stderr; its memory access is allowed here, as Maven's own
# bin/mvn enables native access: probed, so JDK 17 (which has no such flag) runs unchanged.
#
# USAGE: bench/tools/mvn.sh ARGS...      eg, bench/tools/mvn.sh -B -q package -DskipTests   (make build, make test)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
JAVA_HOME=$("$ROOT/bench/tools/java-home.sh")
export JAVA_HOME MAVEN_USER_HOME="$ROOT/.tools/maven"
if "$JAVA_HOME/bin/java" --sun-misc-unsafe-memory-access=allow -version >/dev/null 2>&1; then
    export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}"
fi
cd "$ROOT"
exec ./mvnw "$@"
