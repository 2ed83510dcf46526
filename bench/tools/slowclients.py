#!/usr/bin/env python3
"""slowclients.py - K slow HTTP clients against one app, for a fixed time: the side load of the
slow-upload and slow-download scenarios (issue 6).

  upload:   POST <url> with Content-Length: BYTES, the body trickled at RATE bytes/s per client;
            a client whose upload finished (and was answered) starts another.
  download: GET <url>?bytes=BYTES with a small receive buffer (--rcvbuf, set before connect), read
            at RATE bytes/s per client; a client whose download finished starts another.

Why it exists: a server model that reads or writes bodies blocking holds a thread for as long as a
slow client takes. wrk's fast clients never show that; K of these next to wrk do.

Loopback only, bounded: at most --clients connections at once, every socket closed by --duration
(plus at most one socket timeout), then it exits. Prints "slowclients: N connected of K" once every
client has connected X writes a JSON report (--json) of what it
achieved: clients connected, bytes moved and bytes/s, uploads/downloads completed, errors by kind.
Exit 0 when it ran (errors are counted, not fatal), 2 on bad flags. Python 3 standard library only.

  eg, python3 bench/tools/slowclients.py --mode download --url http://127.0.0.1:8080/call \\
          --clients 10 --bytes 16777216 --rate 1000 --duration 12 --json slow.json
"""
import argparse
import ipaddress
import json
import signal
import socket
import sys
import threading
import time
from urllib.parse import urlsplit

TICK_S = 0.1           # clients send or read once per tick: RATE/10 bytes at a time
IO_TIMEOUT_S = 0.5     # no socket call waits longer, so the deadline is always seen
CONNECT_TIMEOUT_S = 2.0
MAX_BYTES = 64 * 1024 * 1024    # the apps accept bytes=0..64 MiB


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    p = Parser(prog="slowclients.py", description="K slow HTTP clients for a fixed time (loopback only).")
    p.add_argument("--mode", required=True, choices=("upload", "download"))
    p.add_argument("--url", required=True, help="http://127.0.0.1:PORT/call (loopback only)")
    p.add_argument("--clients", required=True, type=int, help="K clients at once (1..1000)")
    p.add_argument("--bytes", required=True, type=int, help="upload body / download size (1..64 MiB)")
    p.add_argument("--rate", required=True, type=int, help="bytes/s per client (1..100000000)")
    p.add_argument("--duration", required=True, type=float, help="seconds to run (0 < s <= 3600)")
    p.add_argument("--json", help="write the report here (default: stdout)")
    p.add_argument("--rcvbuf", type=int, default=4096, help="download: SO_RCVBUF before connect (default 4096)")
    a = p.parse_args(argv)
    if not 1 <= a.clients <= 1000:
        raise UsageError(f"--clients must be in 1..1000, got {a.clients}")
    if not 1 <= a.bytes <= MAX_BYTES:
        raise UsageError(f"--bytes must be in 1..{MAX_BYTES}, got {a.bytes}")
    if not 1 <= a.rate <= 100_000_000:
        raise UsageError(f"--rate must be in 1..100000000, got {a.rate}")
    if not 0 < a.duration <= 3600:
        raise UsageError(f"--duration must be in (0, 3600], got {a.duration}")
    if not 256 <= a.rcvbuf <= 16 * 1024 * 1024:
        raise UsageError(f"--rcvbuf must be in 256..16777216, got {a.rcvbuf}")
    url = urlsplit(a.url)
    if url.scheme != "http" or not url.hostname or url.port is None:
        raise UsageError(f"--url must be http://HOST:PORT/path, got '{a.url}'")
    host = "127.0.0.1" if url.hostname == "localhost" else url.hostname
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(f"--url must point at a loopback address (127.0.0.0/8, ::1, localhost), got '{url.hostname}'")
    a.host, a.port = host, url.port
    a.path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return a


class Totals:
    """Counters shared by the client threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.connected_clients = set()
        self.connections = 0
        self.bytes_moved = 0
        self.completed = 0
        self.errors = {"refused": 0, "reset": 0, "timeout": 0, "http_4xx": 0, "http_5xx": 0, "other": 0}
        self.unfinished_at_end = 0

    def add(self, **kw):
        with self.lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)

    def error(self, kind):
        with self.lock:
            self.errors[kind] += 1


def error_kind(exc):
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
        return "reset"
    if isinstance(exc, socket.timeout):
        return "timeout"
    return "other"


def status_kind(status):
    if 400 <= status < 500:
        return "http_4xx"
    if status >= 500:
        return "http_5xx"
    return None


class Client(threading.Thread):
    """One slow client: one exchange after another until the deadline."""

    def __init__(self, n, args, totals, deadline, stop):
        super().__init__(name=f"slow-{n}", daemon=True)
        self.n, self.a, self.totals, self.deadline, self.stop = n, args, totals, deadline, stop

    def live(self):
        return not self.stop.is_set() and time.monotonic() < self.deadline

    def run(self):
        while self.live():
            try:
                finished = self.exchange()
            except OSError as exc:
                if self.live():
                    self.totals.error(error_kind(exc))
                    time.sleep(TICK_S)      # a refused connect must not spin
                continue
            if finished is False:           # cut by the deadline
                self.totals.add(unfinished_at_end=1)

    def connect(self):
        family = socket.AF_INET6 if ":" in self.a.host else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
        if self.a.mode == "download":
            # Before connect, so the window the server sees is small from the first byte.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.a.rcvbuf)
        s.settimeout(CONNECT_TIMEOUT_S)
        try:
            s.connect((self.a.host, self.a.port))
        except OSError:
            s.close()
            raise
        s.settimeout(IO_TIMEOUT_S)
        with self.totals.lock:
            self.totals.connections += 1
            self.totals.connected_clients.add(self.n)
        return s

    def pace(self, started, done_bytes):
        """Sleep until sending/reading more keeps this client at --rate."""
        ahead = done_bytes / self.a.rate - (time.monotonic() - started)
        if ahead > 0:
            time.sleep(min(ahead, TICK_S, max(0.0, self.deadline - time.monotonic())))

    def exchange(self):
        """One upload or download. True: completed; False: cut by the deadline."""
        s = self.connect()
        try:
            return self.upload(s) if self.a.mode == "upload" else self.download(s)
        finally:
            s.close()

    def upload(self, s):
        a = self.a
        s.sendall((f"POST {a.path} HTTP/1.1\r\nHost: {a.host}:{a.port}\r\n"
                   f"Content-Type: application/octet-stream\r\nContent-Length: {a.bytes}\r\n"
                   f"Connection: close\r\n\r\n").encode())
        chunk = b"u" * max(1, int(a.rate * TICK_S))
        sent, started = 0, time.monotonic()
        while sent < a.bytes:
            if not self.live():
                return False
            try:
                n = s.send(chunk[: a.bytes - sent])
            except socket.timeout:
                continue                   # the server is not reading: that is the point
            sent += n
            self.totals.add(bytes_moved=n)
            self.pace(started, sent)
        status = self.read_status(s)
        if status is None:
            return False
        kind = status_kind(status)
        if kind:
            self.totals.error(kind)
        else:
            self.totals.add(completed=1)
        return True

    def read_status(self, s):
        """The response's status code, or None when the deadline came first."""
        head = b""
        while b"\r\n" not in head:
            if not self.live():
                return None
            try:
                got = s.recv(1024)
            except socket.timeout:
                continue
            if not got:
                raise ConnectionResetError("closed before a status line")
            head += got
        return int(head.split(b" ", 2)[1])

    def download(self, s):
        a = self.a
        sep = "&" if "?" in a.path else "?"
        s.sendall(f"GET {a.path}{sep}bytes={a.bytes} HTTP/1.1\r\nHost: {a.host}:{a.port}\r\nConnection: close\r\n\r\n"
                  .encode())
        head, body, length, status = b"", 0, None, None
        started = None
        while True:
            if not self.live():
                return False
            budget = 4096 if started is None else max(1, min(4096, int(a.rate * TICK_S)))
            try:
                got = s.recv(budget)
            except socket.timeout:
                continue
            if not got:
                break
            self.totals.add(bytes_moved=len(got))
            if status is None:
                head += got
                if b"\r\n\r\n" not in head:
                    continue
                header, _, rest = head.partition(b"\r\n\r\n")
                lines = header.decode("latin-1").split("\r\n")
                status = int(lines[0].split(" ", 2)[1])
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = len(rest)
                started = time.monotonic() - body / a.rate
            else:
                body += len(got)
            if length is not None and body >= length:
                break
            self.pace(started, body)
        if status is None:
            raise ConnectionResetError("closed before a response")
        kind = status_kind(status)
        if kind:
            self.totals.error(kind)
        elif length is None or body >= length:
            self.totals.add(completed=1)
        else:
            raise ConnectionResetError("closed before the whole body")
        return True


def main(argv):
    try:
        a = parse_args(argv)
    except UsageError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        print("Usage: slowclients.py --mode upload|download --url http://127.0.0.1:PORT/call --clients K "
              "--bytes N --rate BYTES_PER_S --duration S [--json OUT] [--rcvbuf 4096]", file=sys.stderr)
        return 2
    stop = threading.Event()
    # SIGTERM/SIGINT (the bench stopping early): stop every client, still write the report.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    totals = Totals()
    start = time.monotonic()
    deadline = start + a.duration
    clients = [Client(n, a, totals, deadline, stop) for n in range(a.clients)]
    for c in clients:
        c.start()
    announce_by = min(start + 2.0, deadline)
    while time.monotonic() < announce_by and len(totals.connected_clients) < a.clients and not stop.is_set():
        time.sleep(0.02)
    print(f"slowclients: {len(totals.connected_clients)} connected of {a.clients}", flush=True)
    while any(c.is_alive() for c in clients) and not stop.is_set():
        time.sleep(0.05)
    stop.set()
    for c in clients:
        c.join(timeout=CONNECT_TIMEOUT_S + IO_TIMEOUT_S)
    elapsed = time.monotonic() - start
    report = {
        "mode": a.mode, "url": a.url, "clients": a.clients, "bytes": a.bytes, "rate": a.rate,
        "rcvbuf": a.rcvbuf if a.mode == "download" else None,
        "duration_s": round(elapsed, 3),
        "connected": len(totals.connected_clients),
        "connections": totals.connections,
        "bytes_moved": totals.bytes_moved,
        "bytes_per_s": round(totals.bytes_moved / elapsed, 1) if elapsed > 0 else 0.0,
        "target_bytes_per_s": a.rate * a.clients,
        "completed": totals.completed,
        "unfinished_at_end": totals.unfinished_at_end,
        "errors": totals.errors,
    }
    text = json.dumps(report, indent=2) + "\n"
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
