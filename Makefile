# The lab's entry points. `make` (or `make help`) lists them; on a fresh Debian machine with a
# JDK, `make bench` and `make test` are the whole set-up (Maven comes with the repository: ./mvnw).
.DEFAULT_GOAL := help
SHELL := /bin/bash

# bench.sh reads its settings from the environment; these pass through from make, eg,
#   make bench THREADS="1 8 200" APPS=webflux DURATION=30s
#   make bench SCENARIO="call slow-upload" SLOW_CLIENTS=20 APPS="sync-servlet nio-servlet"
#   make sweep SWEEP="100 1000 5000" SWEEP_VARIANTS="sync-servlet:200 async-servlet:1"
# (an empty or unset one keeps bench.sh's default; `./bench.sh --help` describes each).
BENCH_VARS := APPS CONTAINERS THREADS CLIENT PROFILE PRESET WRK_THREADS CONNECTIONS SCENARIO SLOW_CLIENTS SLOW_RATE \
              SLOW_BYTES FANOUT FANOUT_MS FANOUT_APPS LOADGEN RATE REPEAT DURATION SLEEP_MS WRK_TIMEOUT WARMUP REMOTE_PORT APP_PORT ADMIN_PORT \
              RESULTS_DIR START_TIMEOUT JAVA_OPTS APP_ARGS CPUSETS HOSTS SWEEP SWEEP_VARIANTS SWEEP_CONTAINER \
              COST_VARIANTS COST_FORKS COST_WINDOWS COST_WINDOW WORK \
              BACKEND DB_URL DB_POOL DB_QUERY DB_ACQUIRE_TIMEOUT_MS DB_EXECUTOR_THREADS DB_DRIVER \
              APP_JAR APP_PATH APP_BACKEND
export $(BENCH_VARS)

# Maven is the project's own: bench/tools/mvn.sh runs the Maven Wrapper (./mvnw, Maven 3.9.16 pinned in
# .mvn/wrapper/maven-wrapper.properties, fetched once into .tools/maven) with the JDK bench.sh uses.
MVN_RUN = bench/tools/mvn.sh -B -Dstyle.color=never
MVN = $(MVN_RUN) -q

# unzip: ./mvnw unpacks Maven's .zip with it; without it the wrapper falls back to the .tar.gz,
# whose checksum is not the pinned one, and stops.
# $(call need_tools,wrk curl): install the missing commands with apt (one `apt-get update`)
# when running as root, else stop with the command to run. Package name = command name.
need_tools = missing=""; for t in $(1); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing$$missing with apt-get"; \
	    apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "ERROR: missing$$missing; install with: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi

.PHONY: help bench sweep cost compare test build examples hosts clean

help: ## list the targets (this text)
	@echo "Usage: make <target> [VAR=value ...]"
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | awk -F'\t' '{ printf "  %-8s %s\n", $$1, $$2 }'
	@echo "Bench variables (see ./bench.sh --help): $(BENCH_VARS)"

bench: ## run the wrk matrix (default: the 76-cell matrix, ~30 min) into results/<UTC stamp>/
	./bench.sh

sweep: ## how far each model scales: 9 variants x 100..10,000 connections, resources, knee, charts (~14 min)
	./bench.sh sweep

cost: ## the cost card: CPU, syscalls, allocation, memory per request of each model, 95 % intervals over fresh JVMs (make cost WORK="cpu=500us" adds a control)
	./bench.sh cost

compare: ## compare two runs as a Markdown table: make compare A=results/<stamp> B=results/latest
	@PYTHONPATH=bench python3 -m labbench.report.compare "$(A)" "$(B)"

test: ## the Java tests, then the bench smoke test (installs wrk, curl, shellcheck, unzip, PostgreSQL with apt if missing)
	@$(call need_tools,wrk curl shellcheck unzip)
	@# PostgreSQL for the DB tests (DbTest, the smoke's BACKEND=postgres part); where it cannot be
	@# installed they skip, each with the reason.
	@bench/tools/install.sh postgresql >/dev/null || echo "NOTE: no PostgreSQL, the DB tests will skip (the ERROR above says why)"
	# -T 3: three app modules' tests at once. They mostly wait on the remote's sleeps: one after
	# another they took 6:31 of a 10:47 clean-clone run on the 2-core machine; at -T 2, ~3:30 of a
	# 10:03-10:25 one on a slow afternoon (2026-11-26). Not -q: Surefire's "Tests run" lines are the record.
	$(MVN_RUN) --no-transfer-progress -T 3 verify
	bench/tests/smoke-test.sh

examples: ## build the Spring Boot services in examples/ as their users do (./mvnw -f examples/<name>/pom.xml package): apps for APP_JAR
	@$(call need_tools,unzip)
	for e in boot-service boot-webflux; do $(MVN) -f examples/$$e/pom.xml package -DskipTests || exit 1; done

build: ## build every jar (./mvnw package, tests skipped: `make test` runs them)
	@$(call need_tools,unzip)
	$(MVN) package -DskipTests

hosts: ## provision HOSTS=<Ansible inventory> for the lab's roles (ansible-playbook bench/hosts/site.yml); with APP_JAR=<jar>, your jar on the app hosts too
	@test -n "$(HOSTS)" || { echo "ERROR: make hosts needs HOSTS=<an Ansible inventory> (groups app, backend or db, loadgen; docs/hosts.md)" >&2; exit 2; }
	@test -e "$(HOSTS)" || { echo "ERROR: HOSTS=$(HOSTS): no such inventory" >&2; exit 2; }
	@for m in remote-sleep lab-agent $$(bench/tools/catalog.sh modules call); do \
	  test -f $$m/target/$$m.jar || { echo "ERROR: $$m/target/$$m.jar is not built: run make build, then make hosts" >&2; exit 2; }; done
	@test -z "$(APP_JAR)" || test -f "$(APP_JAR)" || { echo "ERROR: APP_JAR=$(APP_JAR): no such jar" >&2; exit 2; }
	@bin=$$(bench/tools/install.sh ansible) && ANSIBLE_CONFIG=bench/hosts/ansible.cfg "$$bin/ansible-playbook" -i "$(HOSTS)" bench/hosts/site.yml \
	  $(if $(APP_JAR),-e '{"app_jar": "$(abspath $(APP_JAR))"}')

clean: ## remove build output (target/ directories); results/ is kept
	$(MVN) clean
