"""The lab's apps, read once from catalog.tsv at the repository's root (each app module's
CatalogTest checks the same file against its own App.APPS, so Python and Java cannot drift)."""
from dataclasses import dataclass
from typing import Tuple

from .paths import ROOT

FILE = ROOT / "catalog.tsv"


@dataclass(frozen=True)
class AppInfo:
    app: str
    module: str                     # the Maven module whose jar serves it
    family: str                     # sync, async, nio, webflux, fanout
    thread_per_request: bool        # at most --threads requests in flight on a platform pool
    containers: Tuple[str, ...]
    scenarios: Tuple[str, ...]      # which scenarios run it
    clients: Tuple[str, ...]        # the outbound HTTP clients it can call the remote with (--client)
    model: str                      # one line for reports
    dbs: Tuple[str, ...] = ()       # BACKEND=postgres: the drivers it can query with (--db-driver); () = none
    variants: Tuple[str, ...] = ()  # the planners' default variants of it: "sweep:200", "degrade@tomcat:v1"


def load(path=FILE):
    apps = {}
    rows = [line.split("\t") for line in path.read_text().splitlines() if line and not line.startswith("#")]
    header, rows = rows[0], rows[1:]
    for row in rows:
        r = dict(zip(header, row))
        apps[r["app"]] = AppInfo(r["app"], r["module"], r["family"], r["thread_per_request"] == "yes",
                                 tuple(r["containers"].split(",")), tuple(r["scenarios"].split(",")),
                                 tuple(r["clients"].split(",")), r["model"],
                                 tuple(d for d in r.get("db", "none").split(",") if d and d != "none"),
                                 tuple(v for v in r.get("variants", "-").split() if v != "-"))
    return apps


APPS = load()
CONTAINERS = list(dict.fromkeys(c for a in APPS.values() for c in a.containers))
MODULE_OF = {a.app: a.module for a in APPS.values()}
CLIENTS = list(dict.fromkeys(c for a in APPS.values() for c in a.clients))   # jdk first: the control
DEFAULT_CLIENT = CLIENTS[0]
DB_DRIVERS = list(dict.fromkeys(d for a in APPS.values() for d in a.dbs))   # DB_DRIVER takes these


def apps_for(scenario):
    """The apps that serve a scenario, in the catalog's order."""
    return [a.app for a in APPS.values() if scenario in a.scenarios]


def default_variants(planner):
    """A planner's default variants, from each app's variants column in the catalog's order: sync-servlet's
    "sweep:200" is "sync-servlet:200" in the sweep's default."""
    return " ".join(a.app + v[len(planner):] for a in APPS.values() for v in a.variants
                    if v.startswith(planner) and v[len(planner):][:1] in (":", "@"))


def apps_on(container):
    """The apps that run on a container, in the catalog's order."""
    return [a.app for a in APPS.values() if container in a.containers]


def runs_on(app, container):
    return container in APPS[app].containers


def thread_per_request(app):
    return APPS[app].thread_per_request

# Containers whose pool is event loops, not threads that run application code: no vN there.
EVENT_LOOP = {"netty"}
