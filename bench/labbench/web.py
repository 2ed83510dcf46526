"""HTTP to the servers the lab started: a request, its JSON, and waiting until a server answers or
has nothing left in flight. Never through a proxy: every URL is 127.0.0.1 or a host of HOSTS.

The run's admin token (issue 40): the app's admin port and remote-sleep's /fault answer a call that
changes their state (POST /pool, /stats/reset, /profile/*, POST and DELETE /fault) only with it, so
that no one else who reaches them (every local user on one box, the network with HOSTS) can. Made
once per run (new_token), given to every JVM the bench starts in its environment (admin_env; never
argv, which every user sees in ps), sent on every request here as Authorization: Bearer."""
import json
import secrets
import socket
import time
import urllib.error
import urllib.request
from http.client import HTTPException

from . import procs

# Never through a proxy: every URL here is 127.0.0.1 or a host of HOSTS, and http_proxy may be set.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
TOKEN_ENV = "LAB_ADMIN_TOKEN"     # where the JVMs read the token (AdminAccess, RemoteSleep)
_TOKEN = []                       # [the run's token], once new_token() has made it


def new_token():
    """A new random token for this run's servers (the module's docstring)."""
    _TOKEN[:] = [secrets.token_urlsafe(32)]


def admin_env():
    """The environment a JVM of the run needs for its admin calls: the token ({} before new_token)."""
    return {TOKEN_ENV: _TOKEN[0]} if _TOKEN else {}


def http(url, method="GET", timeout=5.0, token=True):
    """(status, body bytes) of a local URL, with the run's token; raises OSError when it does not
    answer. The token goes on every request to the run's own servers; not (token=False) to a user's
    own app (APP_JAR), whose code has no business with it."""
    headers = {"Authorization": f"Bearer {_TOKEN[0]}"} if _TOKEN and token else {}
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None, headers=headers)
    try:
        with _OPENER.open(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except HTTPException as e:            # a broken answer: as bad as none
        raise OSError(f"bad HTTP answer: {e!r}") from e


def get_json(url):
    """The JSON a URL answers with 2xx, or None."""
    try:
        status, body = http(url)
        return json.loads(body) if status < 300 else None
    except (OSError, ValueError):
        return None


def port_open(port, host="127.0.0.1"):
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def wait_ready(p, stats_url, log, ports, timeout_s, host="127.0.0.1"):
    """Wait until a server answers: its process lives, every port accepts on `host`, and the stats
    URL answers. Polls every 50 ms; None when ready, else the reason."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not procs.alive(p):
            lines = [line for line in procs.read_lines(log) if not line.startswith("host-run: ")]
            first_error = next((line for line in lines if "ERROR" in line or "Exception" in line), None)
            return f"exited at start: {first_error or (lines[-1] if lines else '')}"
        if all(port_open(port, host) for port in ports) and get_json(stats_url) is not None:
            return None
        time.sleep(0.05)
    return f"did not answer within {timeout_s}s (see {log.parent.name}/{log.name})"


def wait_drained(stats_url, timeout_s):
    """Wait (at most timeout_s) until the server has nothing in flight, nothing queued for a pool
    thread (remote-sleep reports no queue) and no call handed off and not done (`background`: a
    fire-and-forget app's). True when drained."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        stats = get_json(stats_url) or {}
        if stats.get("inFlight") == 0 and stats.get("queued", 0) == 0 and stats.get("background", 0) == 0:
            return True
        time.sleep(0.05)
    return False
