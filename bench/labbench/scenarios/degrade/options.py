"""degrade's own settings: FAULT, FAULT_AT, FAULT_FOR, AFTER, MAX_IN_FLIGHT, DEGRADE_VARIANTS and
GOODPUT_DEADLINE parsed and checked, their usage lines, and the ordinary settings they stand for
(APPS, CONTAINERS, THREADS, LOADGEN, DURATION, WRK_TIMEOUT; labbench/settings.py parses those)."""
import math
import re

from ... import catalog, settings
from ...checks import UsageError, split_list
from ...knobs import setting
from ...variants import parse_variants

NAME = "degrade"
DEFAULT_RATE = 150            # its RATE when RATE is not set: 150 x 1 s = 150 in flight when healthy
# What the settings replace: each is set from DEGRADE_VARIANTS, the timeline or the scenario itself.
NOT_IN_DEGRADE = {"APPS": "DEGRADE_VARIANTS", "CONTAINERS": "DEGRADE_VARIANTS (app@container:threads)",
                  "THREADS": "DEGRADE_VARIANTS", "CLIENT": "DEGRADE_VARIANTS (app@container:threads:client)",
                  "LOADGEN": "it runs vegeta", "DURATION": "FAULT_AT + FAULT_FOR + AFTER is the timeline",
                  "WRK_TIMEOUT": "vegeta's -timeout is the timeline + the fault's delay + 30 s",
                  "REPEAT": "it runs once"}
KINDS = re.compile(r"delay=([0-9]{1,6})|error=([0-9]{1,3})|hang")
SPAN = re.compile(r"([0-9]{1,7})(ms|s|m)?")
VEGETA_GRACE_S = 30           # vegeta's -timeout beyond the timeline and the fault's delay


def span_ms(name, text, least_ms=1):
    """FAULT_AT, FAULT_FOR, AFTER, GOODPUT_DEADLINE: Nms, Ns (N alone: seconds) or Nm, in ms."""
    m = SPAN.fullmatch(text.strip())
    if not m:
        raise UsageError(f"{name}: '{text}' is not a duration like 10s, 500ms or 2m")
    ms = int(m.group(1)) * {"ms": 1, "s": 1000, None: 1000, "m": 60000}[m.group(2)]
    if ms < least_ms:
        raise UsageError(f"{name}: '{text}' is shorter than {least_ms} ms")
    return ms


def parse_fault(text):
    """FAULT: remote-sleep's KIND without ok (delay=MS 1..600000, error=PCT 1..100, hang)."""
    m = KINDS.fullmatch(text.strip())
    if text.strip() == "ok":
        raise UsageError("FAULT: 'ok' is no fault (delay=MS, error=PCT or hang)")
    if not m:
        raise UsageError(f"FAULT: '{text}' is not delay=MS, error=PCT or hang")
    if m.group(1) is not None and not 1 <= int(m.group(1)) <= 600000:
        raise UsageError(f"FAULT: '{text}': the delay must be 1..600000 ms")
    if m.group(2) is not None and not 1 <= int(m.group(2)) <= 100:
        raise UsageError(f"FAULT: '{text}': the error share must be 1..100 %")
    return text.strip()


def fault_delay_ms(fault):
    """The delay a fault gives each request it hits (error and hang: 0; see hold_ms)."""
    return int(fault.split("=")[1]) if fault.startswith("delay=") else 0


def parse_limits(text):
    """MAX_IN_FLIGHT: a list of integers >= 0 (0 = no limit), each once."""
    values = split_list(text)
    if not values:
        raise UsageError("MAX_IN_FLIGHT is empty (0 = no limit)")
    for v in values:
        if not re.fullmatch(r"[0-9]{1,7}", v):
            raise UsageError(f"MAX_IN_FLIGHT: '{v}' is not an integer >= 0 (0 = no limit)")
    limits = [int(v) for v in values]
    if len(set(limits)) != len(limits):
        raise UsageError(f"MAX_IN_FLIGHT: a value is there twice ({text})")
    return limits


def parse_degrade_variants(text):
    """DEGRADE_VARIANTS: the sweep's app[@container]:threads[:client], without `conns` (no level here)."""
    try:
        variants = parse_variants(text, "jetty")
    except UsageError as e:
        raise UsageError(str(e).replace("SWEEP_VARIANTS", "DEGRADE_VARIANTS")) from None
    for v in variants:
        if v.threads == "conns":
            raise UsageError(f"DEGRADE_VARIANTS: '{v.id}': conns needs a connection level; give N or vN")
    return variants


def vegeta_timeout_s(timeline_ms, fault):
    """Long enough that vegeta's own timeout is never what is measured: the whole timeline, the
    fault's delay and 30 s (a hung request ends by the app's client timeout, well before)."""
    return math.ceil((timeline_ms + fault_delay_ms(fault)) / 1000.0) + VEGETA_GRACE_S


def variant_id(v, limit):
    """A cell's variant: the sweep's id and its limit (two limits of one variant must not merge)."""
    return f"{v.id}:max-in-flight={limit}"


# The apps' --max-in-flight default: each variant once per value (0 = no limit). 180: the healthy load
# keeps RATE x SLEEP_MS = 150 in flight; below the 200-thread pool, whose free threads answer the
# excess with a fast 503 (a limit >= the threads never binds: the queue is in front of it).
SETTINGS = (
    setting("DEGRADE_VARIANTS", catalog.default_variants("degrade"),
            "`SCENARIO=degrade`: its variants, `app[@container]:threads[:client]` as in `SWEEP_VARIANTS` (without "
            "`@container`: jetty; no `conns`); it runs vegeta at `RATE` (150 unless set) through a fault timeline",
            "list", meta="degrade_variants"),
    setting("FAULT", "delay=5000", "`SCENARIO=degrade`: remote-sleep's fault (`delay=MS`, `error=PCT`, `hang`)", "value"),
    setting("FAULT_AT", "10s", "`SCENARIO=degrade`: healthy time before the fault (`Nms`, `Ns`, `Nm`)", "value"),
    setting("FAULT_FOR", "10s", "`SCENARIO=degrade`: how long the fault lasts", "value"),
    setting("AFTER", "30s", "`SCENARIO=degrade`: healthy time after the fault", "value"),
    setting("MAX_IN_FLIGHT", "0 180", "`SCENARIO=degrade`: the apps' `--max-in-flight` admission limit, each variant "
            "once per value (`0` = no limit)", "list", meta="max_in_flight_values"),
    setting("GOODPUT_DEADLINE", "2s", "`SCENARIO=degrade`: goodput counts 2xx answered within it", "value"),
)
HEADING = ("SCENARIO=degrade: vegeta at RATE (150 unless RATE is set) through a timeline: FAULT_AT healthy, FAULT_FOR of "
           "FAULT at remote-sleep, AFTER healthy; each variant once per MAX_IN_FLIGHT (a matrix of its own)")


def parse(v):
    """degrade's settings, parsed and checked: the settings' degrade_* fields."""
    fault = parse_fault(v["FAULT"])
    at, for_, after = (span_ms("FAULT_AT", v["FAULT_AT"], 1000), span_ms("FAULT_FOR", v["FAULT_FOR"]),
                       span_ms("AFTER", v["AFTER"], 1000))
    if at + for_ + after > 3600000:
        raise UsageError("FAULT_AT + FAULT_FOR + AFTER is more than an hour")
    return {"degrade_variants": parse_degrade_variants(v["DEGRADE_VARIANTS"]), "degrade_fault": fault,
            "degrade_fault_at_ms": at, "degrade_fault_for_ms": for_, "degrade_after_ms": after,
            "degrade_timeline_ms": at + for_ + after, "degrade_limits": parse_limits(v["MAX_IN_FLIGHT"]),
            "degrade_deadline_ms": span_ms("GOODPUT_DEADLINE", v["GOODPUT_DEADLINE"])}


def matrix_environ(environ):
    """Its matrix as the ordinary settings (APPS, CONTAINERS, THREADS from the variants, vegeta,
    DURATION = the timeline, WRK_TIMEOUT = vegeta's); a setting it replaces must not be set."""
    scenario = split_list(environ.get("SCENARIO") or NAME)
    if scenario != [NAME]:
        raise UsageError(f"SCENARIO={environ.get('SCENARIO')}: degrade runs alone (a matrix of its own)")
    for name, instead in NOT_IN_DEGRADE.items():
        if environ.get(name) and not (name == "REPEAT" and environ[name] == "1"):
            raise UsageError(f"{name}={environ[name]}: SCENARIO=degrade sets {name} itself ({instead})")
    if (environ.get("BACKEND") or "http") != "http":
        raise UsageError("SCENARIO=degrade needs remote-sleep's /fault: BACKEND=http only")
    if "--max-in-flight" in (environ.get("APP_ARGS") or "").split():
        raise UsageError("APP_ARGS: --max-in-flight is set by MAX_IN_FLIGHT in SCENARIO=degrade")
    d = parse(settings.raw_values(environ))
    variants = d["degrade_variants"]
    env = dict(environ, SCENARIO=NAME, LOADGEN="vegeta", RATE=environ.get("RATE") or str(DEFAULT_RATE),
               APPS=" ".join(dict.fromkeys(x.app for x in variants)),
               CONTAINERS=" ".join(dict.fromkeys(x.container for x in variants)),
               THREADS=" ".join(dict.fromkeys(x.threads for x in variants)),
               DURATION=f"{math.ceil(d['degrade_timeline_ms'] / 1000.0)}s",
               WRK_TIMEOUT=f"{vegeta_timeout_s(d['degrade_timeline_ms'], d['degrade_fault'])}s")
    return env, variants
