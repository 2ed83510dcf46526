"""Variants: app[@container]:threads[:client], the rows of a planner's own matrix (the sweep's
SWEEP_VARIANTS, degrade's DEGRADE_VARIANTS), each checked like APPS, CONTAINERS, THREADS and CLIENT."""
import re
from dataclasses import dataclass

from . import catalog
from .checks import COUNT, UsageError, is_virtual, known, split_list

# A variant is app[@container]:threads, threads = N, vN, or "conns": a pool as large as
# the level's connections (thread-per-request at any scale: what a platform thread per request costs).
# "+agent": the lab's Java agent beside the app (foreign.agent_flag), whose cost the cost card prices.
VARIANT = re.compile(r"([a-z][a-z0-9-]*)(?:@([a-z]+))?:(conns|v?[0-9]+)(?::([a-z-]+))?(\+agent)?")
AGENT_LABEL = ", with the lab's agent"
@dataclass(frozen=True)
class Variant:
    """One row of a planner's matrix: an app on a container with a pool (the sweep runs it at every level)."""
    app: str
    container: str
    threads: str              # "200", "v1", or "conns" (= the level's connections)
    client: str = catalog.DEFAULT_CLIENT    # the app's outbound HTTP client
    db_driver: str = ""       # BACKEND=postgres: its database driver (a variant per driver the app has)
    agent: bool = False       # the lab's agent (-javaagent) beside the app: what reading a JVM from outside costs

    @property
    def id(self):
        client = "" if self.client == catalog.DEFAULT_CLIENT else f":{self.client}"
        driver = f"/{self.db_driver}" if self.db_driver else ""
        return f"{self.app}@{self.container}:{self.threads}{client}{'+agent' if self.agent else ''}{driver}"

    def threads_at(self, level):
        return str(level) if self.threads == "conns" else self.threads

    @property
    def label(self):
        """eg, "sync-servlet jetty, 200 threads", "webflux netty, 1 event loop"."""
        if self.threads == "conns":
            pool = "threads = connections"
        elif is_virtual(self.threads):
            pool = f"{self.threads} (virtual threads on {self.threads[1:]} carrier{'s' if self.threads != 'v1' else ''})"
        elif self.container == "netty":
            pool = f"{self.threads} event loop{'s' if self.threads != '1' else ''}"
        else:
            pool = f"{self.threads} thread{'s' if self.threads != '1' else ''}"
        client = "" if self.client == catalog.DEFAULT_CLIENT else f", {self.client} client"
        driver = f", {self.db_driver}" if self.db_driver else ""
        return f"{self.app} {self.container}, {pool}{client}{driver}{AGENT_LABEL if self.agent else ''}"



def parse_variants(text, default_container, name="SWEEP_VARIANTS"):
    """A planner's variants (name: its setting): app[@container]:threads, each checked like APPS, CONTAINERS and THREADS."""
    variants = []
    for spec in split_list(text):
        m = VARIANT.fullmatch(spec)
        if not m:
            raise UsageError(f"{name}: '{spec}' is not app[@container]:threads[:client][+agent] (threads N, vN or conns)")
        app, threads = m.group(1), m.group(3)
        only = catalog.APPS[app].containers if app in catalog.APPS else ()
        # without @container: the planner's default, or the one an app runs on (APP_JAR's jar: the server it carries)
        container = m.group(2) or (only[0] if len(only) == 1 else default_container)
        client = m.group(4) or catalog.DEFAULT_CLIENT
        if client not in catalog.APPS.get(app, catalog.APPS["sync-servlet"]).clients:
            raise UsageError(f"{name}: '{spec}': unknown client '{client}' (known: {' '.join(catalog.CLIENTS)})")
        known(name, app, catalog.apps_for("call"), "app")
        known(name, container, catalog.CONTAINERS, "container")
        if threads != "conns" and not COUNT.fullmatch(threads[1:] if is_virtual(threads) else threads):
            raise UsageError(f"{name}: '{spec}': threads must be a positive integer, vN or conns")
        if container in catalog.EVENT_LOOP and (not catalog.runs_on(app, container) or is_virtual(threads)):
            raise UsageError(f"{name}: '{spec}': netty runs only {', '.join(catalog.apps_on(container))}, on N event "
                             f"loops (not vN)")
        if not catalog.runs_on(app, container):       # APP_JAR's jar in a cost run: the one server it carries
            raise UsageError(f"{name}: '{spec}': {app} runs on {', '.join(catalog.APPS[app].containers)} only")
        variant = Variant(app, container, threads, client, agent=bool(m.group(5)))
        if variant in variants:
            raise UsageError(f"{name}: '{spec}' is there twice")
        variants.append(variant)
    if not variants:
        raise UsageError(f"{name} is empty")
    return variants
