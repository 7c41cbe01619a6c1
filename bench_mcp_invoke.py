#!/usr/bin/env python3
# bench_mcp_invoke: what mcp_invoke.py costs, against floors measured in the same run. MIT License.
"""Benchmark mcp_invoke.py against floors measured in the same run.

Every figure is a ratio: what mcp_invoke costs, over what the same work costs
without it on this machine, in this run (a bare interpreter, a minimal client,
raw pipes, plain os.read and json.loads). No absolute time is asserted anywhere.

The floors' servers are lean, so that what they cost (their start, their
work per request), which is on both sides of each ratio, hides as little of
the client as can be: bench/stdio_server.py, a few dozen lines of os.read
and json answering the handshake era's initialize, tools/list and tools/call
(echo, blob), and -32601 at once to anything else (server/discover
included), as such servers do; and bench/http_server.py, the same answers
over Streamable HTTP on one thread with selectors on raw sockets (JSON
answers on kept connections, Mcp-Session-Id, 202, 405 for GET). The CLI
batch rows use bench/echo_server.py, leaner still (initialize, echo,
-32601): a pipelined batch goes at the pace of the slower process, and
stdio_server.py's cost per line comes near a minimal client's, so with it
the floor measures the server as much as the client (the minimal client's
time per line falls with the leaner server, and no further with one that
does not parse JSON at all). Only the event-stream rows use fake_server.py
--http, whose streams are what they measure. The task rows use
bench/task_server.py, as lean (os.read, json): echo plainly and as a task in
either form, counting what it receives and stamping each call and poll with
its own clock, so the rows compare the client with itself on one server.

The floor of the whole-process figures is a minimal stdlib MCP client of
about sixty lines, bench/minimal_client.py (``tools|call NAME JSON|batch --
SERVER...``): subprocess, json and readline on the pipe; initialize,
notifications/initialized, one request (or every batch line), close stdin,
wait. It prints what mcp_invoke prints, byte for byte for a call's text and
for batch lines that succeed (checked before each figure), and does nothing
that is not needed for that. The HTTP rows' floor is the same for Streamable
HTTP, bench/minimal_http_client.py: http.client on one kept connection, and
the fewest requests the server's era needs.

Every timed Python process, client, floor or server, starts the same way:
``python -E -S``, so neither this installation's site-packages (.pth files
run at every start) nor the caller's PYTHON* variables are measured; the
cold rows give the plain start in a note. ``python -m mcp_invoke`` runs are
measured against floors run as ``python -m`` too (runpy, and the module from
its bytecode cache), scripts against scripts. Each run has an era cache of
its own: a server is probed once, before its figure, and remembered after,
as on any run but a server's first.

Usage::

    python3 bench_mcp_invoke.py             # the full run, a few minutes
    python3 bench_mcp_invoke.py --quick     # smaller counts and sizes, under a minute
    python3 bench_mcp_invoke.py --only tasks,search   # these figures only (names:
                                            # the titles, lower case, hyphens for spaces)
    python3 bench_mcp_invoke.py --profile   # also cProfile the sequential and 10 MB calls,
                                            # and sequential calls over HTTP; and where a
                                            # cold tools run's start goes (-X importtime);
                                            # tasks done at once; a cached search's main()
    python3 bench_mcp_invoke.py --rss client|floor N   # one peak-RSS child, in bytes
    python3 bench_mcp_invoke.py --http-rss client|floor URL N  # the same over HTTP
    python3 bench_mcp_invoke.py --calls client|floor N # one session of N calls (callgrind)
    python3 bench_mcp_invoke.py --peak FILE -- ARGV... # run ARGV, stdout to FILE; print
                                                       # its seconds and peak RSS

Figures (after a warm-up, measured and floor runs interleaved; whole
processes and large results are the fastest of their runs, calls the median
of their rounds):

    cold tools    ``python -m mcp_invoke tools -- <stdio server>``, from the
                  bytecode cache, against ``python -m minimal_client tools``;
                  and ``mcp_invoke.py tools`` as a script against the minimal
                  client as a script plus compiling mcp_invoke.py, which
                  Python does for a script on every run (measured as the
                  compile floor below less the import floor).
    --version     ``python -m mcp_invoke --version`` against ``python -m
                  import_floor`` importing argparse, json, os, selectors,
                  signal, subprocess, sys and time; ``mcp_invoke.py
                  --version`` as a script against ``python -c`` of those
                  imports, and against that plus compiling mcp_invoke.py.
    CLI batch     microseconds per call of ``python -m mcp_invoke batch``
                  with 20,000 echo lines on stdin (2,000 with --quick) and
                  stdout to /dev/null, less the same command with one line,
                  against the minimal client doing the same: every frame
                  written from a thread while the answers are read.
    CLI call      ``python -m mcp_invoke call blob`` of a 100 MB text result
                  (10 MB with --quick), stdout to a file, against the minimal
                  client writing the same bytes: time and peak RSS of the
                  whole process (the larger of the client and its server, by
                  getrusage(RUSAGE_CHILDREN) in a ``--peak`` wrapper child);
                  and ``--json call`` against the text call.
    sequential    microseconds per ``Client.call_tool("echo", ...)`` in one
                  session, against a raw ping-pong over pipes with the same
                  server: os.write of a json.dumps frame, readline, json.loads.
                  Where the OS allows, the CPUs are set, not left to the
                  scheduler: the servers on one CPU and the bench on another,
                  then all on one CPU, which shows each side's CPU cost best.
    CPU           instructions per sequential call, counted by callgrind in the
                  calling process (client or floor), when valgrind is on PATH;
                  full run only. Steady where time is not: the same code gives
                  the same count on a loaded or virtual machine. The same for
                  cold tools (stdio, and --url in both eras) and for CLI batch
                  per call: the client's process against the floor's, the
                  server not counted.
    pipelined     microseconds per call through ``Client.batch``, against the
                  same sequential floor.
    large result  MB/s of ``call_tool("blob", {"size": N})`` for 10 and 100 MB,
                  against os.read in a loop and json.loads of the joined bytes,
                  taken in turn in one process; and the peak RSS growth of one
                  such call over a warmed-up baseline, each side in a fresh
                  child process, as a multiple of the payload.
    probe         what finding the era costs on this (legacy) server: a
                  session, and a CLI ``tools`` run with --no-cache, against
                  the same pinned.
    HTTP calls    microseconds per ``Client.call_tool("echo", ...)`` on an open
                  ``Client(url=...)`` of the lean HTTP server, legacy and
                  modern era, against a raw http.client connection kept
                  alive: the same POST (body and the headers the server
                  requires), then json.loads of the JSON answer. CPUs set as
                  for the sequential rows.
    HTTP SSE      ``call_tool("big", {"size": N})`` with ``--mode sse`` (legacy
                  era; 100 MB in both runs), each call against a freshly
                  started server: MB/s against http.client reading the
                  whole event stream, splitting out the event's data and
                  json.loads of it; and the peak RSS growth of one such call
                  in a fresh child process, as a multiple of the payload.
    sessions      ``python -m mcp_invoke --session NAME call echo`` (.pyc), a
                  session of the stdio server started before: against a cold
                  ``python -m mcp_invoke call echo -- SERVER``, and against
                  ``python -m`` of a module doing nothing plus one
                  ``Client.call_tool`` on an open client (the median over
                  rounds), what it cannot do without.
    HTTP cold     ``python -m mcp_invoke tools --url URL`` (.pyc) and
                  ``mcp_invoke.py tools --url URL`` as a script, against the
                  legacy and the modern lean server, against the minimal HTTP
                  client run the same way (plus compiling mcp_invoke.py, for
                  the script), as for cold tools.
    search        ``python -m mcp_invoke search WORD`` over six configured
                  servers whose tool lists the cache holds (filled by one search,
                  in a cache of the figure's own; the servers' file is then
                  removed, so none can start), against ``python -m mcp_invoke
                  --version``; the same as scripts; and in instructions
                  (callgrind, full run only).
    tasks         on one open Client of bench/task_server.py, in both forms of
                  tasks (2025-11-25: params.task, tasks/get, tasks/result;
                  2026-07-28's extension: resultType "task", tasks/get): a task
                  done at once (pollIntervalMs 0, completed at its first poll)
                  against the same echo called plainly: the requests the server
                  receives per call, and the time per call; a task created
                  completed, timed so too (no target). Polling: a task completed
                  at its 20th poll, asking 100 ms: the mean spacing of the
                  server's arrivals (the call, then each poll) against the
                  interval asked, and the least against MIN_POLL_INTERVAL (50
                  ms); and the least asking 0 and 10 ms.

Both HTTP servers set TCP_NODELAY on their connections as servers in use do
(without it, a body written apart from its headers waits for the client's
delayed ACK on a kept connection: 40 ms).

Output: one table row per figure with the measured value, the floor, their
ratio, the target and ok/MISS (the ratio judged as printed, to two decimals;
a target "in A-B" holds both ends; the round-trip row's "ratio" is a difference,
the requests a call takes more than the plain call's).
Targets are informational; the exit status is 0 unless the bench itself fails.
Standard library only; CPython 3.6 or newer; POSIX.
"""

import filecmp
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

BENCH = os.path.abspath(__file__)
HERE = os.path.dirname(BENCH)
LIBRARY = os.path.join(HERE, "mcp_invoke.py")

MB = 1000 * 1000

# Counts for a full run and for --quick.
# Calls go in many short rounds: a median over many rounds shrugs off the
# bursts of a busy or virtual machine. Sizes come with how often each is timed.
FULL = {"process_runs": 15, "calls": 200, "rounds": 25,
        "sizes": ((10 * MB, 15), (100 * MB, 5)), "instruction_calls": (50, 550),
        "batch_lines": 20000, "batch_runs": 7, "cli_size": 100 * MB, "cli_runs": 9,
        "sse_size": 100 * MB, "sse_runs": 5, "task_calls": 50}
QUICK = {"process_runs": 5, "calls": 100, "rounds": 10,
         "sizes": ((10 * MB, 9),), "instruction_calls": None,
         "batch_lines": 2000, "batch_runs": 5, "cli_size": 10 * MB, "cli_runs": 3,
         "sse_size": 100 * MB, "sse_runs": 2, "task_calls": 10}

# Calls made before any timing, so caches, allocators and the CPU clock settle.
WARM_UP_CALLS = 200

# Targets: (comparison, value); a row without one is reported only.
TARGETS = {
    "cold": ("<=", 1.20),        # cold tools, as python -m and as a script
    "version": ("<=", 1.10),     # --version, as python -m and as a script + compile
    "batch": ("<=", 1.50),       # CLI batch, per call
    "cli_time": ("<=", 1.25),    # CLI call of a large text result
    "cli_rss": ("<=", 1.20),
    "json": ("<=", 1.30),        # --json call against the text call
    "sequential": ("<=", 1.25),  # Client.call_tool, in time and in instructions
    "http_call": ("<=", 1.30),   # Client(url=...).call_tool on a kept connection
    "sse_rate": (">=", 0.80),    # a 100 MB result as an event stream, MB/s
    "sse_rss": ("<=", 2.20),     # its peak RSS growth, as a multiple of the payload
    "http_cold": ("<=", 1.20),   # cold tools --url, as python -m and as a script
    "session_cold": ("<=", 0.50),  # a call through --session, against a cold call
    "session_floor": ("<=", 1.50),  # the same, against python -m (nothing) + a library call
    "launcher": ("<=", 1.20),    # cold tools through the launcher install writes
    "search": ("<=", 1.20),      # search of 8 servers whose lists are cached, against cold tools
    "search_version": ("<=", 1.20),  # search of 6 servers cached, against --version
    "task_trips": ("<=", 2.00),  # a task done at once: round trips more than a plain call
    "task_time": ("<=", 1.30),   # the same, a CLI call of it against a plain CLI call
    "poll_mean": ("in", (0.90, 1.10)),  # polls' mean spacing against the interval asked
    "poll_min": (">=", 1.00),    # polls' least spacing against MIN_POLL_INTERVAL
    "skill_fetch": ("<=", 1.30),  # skills get --out of 200 files, 16 MiB: a minimal client
    "skill_rss": ("<=", 1.00),   # its peak RSS growth over reading SKILL.md alone, against
                                 # the largest file plus 2 messages
    "skills_list": ("<=", 1.20),  # skills of 1,000 skills (10 pages), against resources
}

# What a --version run cannot do without: the floor child imports exactly these.
VERSION_FLOOR = ("argparse", "json", "os", "selectors", "signal", "subprocess", "sys",
                 "time")

# The handshake-era revision the floors offer in initialize, as mcp_invoke does.
LEGACY_VERSION = "2025-11-25"

# The library's os.read size, so the large-result floor reads the same way.
READ_SIZE = 64 * 1024

# The floors (bench/): the servers, lean, so that their start and their work
# per request, on both sides of each ratio, hide as little of the client as
# can be; and the minimal clients, which the floor processes run.
FLOORS = os.path.join(HERE, "bench")
STDIO_SERVER = os.path.join(FLOORS, "stdio_server.py")
ECHO_SERVER = os.path.join(FLOORS, "echo_server.py")
HTTP_SERVER = os.path.join(FLOORS, "http_server.py")
MINIMAL_CLIENT = os.path.join(FLOORS, "minimal_client.py")
MINIMAL_HTTP_CLIENT = os.path.join(FLOORS, "minimal_http_client.py")
TASK_SERVER = os.path.join(FLOORS, "task_server.py")
# The floor modules, run as ``python -E -S -m NAME`` from FLOORS.
FLOOR_MODULES = ("minimal_client", "minimal_http_client", "import_floor")

# The tools the stdio server lists, in order.
TOOL_NAMES = ["echo", "blob"]

# How every Python process the bench times is started: the clients, their
# floors and the servers alike. -S leaves out the site module, whose work
# (the .pth files of this interpreter's site-packages) is the installation's,
# not mcp_invoke's, and would sit on both sides of every ratio; mcp_invoke
# and the floors use the standard library only. -E leaves out the PYTHON*
# variables of the caller's environment (PYTHONUNBUFFERED makes every write
# a system call; PYTHONPATH adds places to look for every import).
PYTHON = [sys.executable, "-E", "-S"]

ECHO = ("echo", {"text": "hi"})

# One line of a CLI batch: an echo call, as a user would write it.
BATCH_LINE = b'{"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}\n'

# The HTTP rows' eras (both are measured), and the one version
# of the modern era, which every request of that era names in _meta and headers.
HTTP_ERAS = ("legacy", "modern")
MODERN_VERSION = "2026-07-28"

# The task rows' forms: the era bench/task_server.py speaks, and the revision
# whose tasks it is (2025-11-25 basic/utilities/tasks; 2026-07-28's extension).
TASK_FORMS = (("legacy", "2025-11-25"), ("modern", "2026-07-28"))

# The polling rows: a task that completes at its POLLS-th tasks/get, asking
# POLL_ASKED ms between polls, then each of POLL_FAST ms, which the client
# must stretch to its floor, mcp_invoke.MIN_POLL_INTERVAL.
POLLS = 20
POLL_ASKED = 100
POLL_FAST = (0, 10)

# What a POST must accept and carry (fake_server.py answers 406 and 415 without).
HTTP_HEADERS = {"Accept": "application/json, text/event-stream",
                "Content-Type": "application/json"}


def _dumps(value):
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def _server_argv():
    """The lean stdio server, bench/stdio_server.py."""
    return PYTHON + [STDIO_SERVER]


def _echo_server_argv():
    """The leanest stdio server, bench/echo_server.py, for the CLI batch rows."""
    return PYTHON + [ECHO_SERVER]


def _task_server_argv(era):
    """bench/task_server.py, echo plain and as a task, in ``era``'s form."""
    return PYTHON + [TASK_SERVER, "--era", era]


# ---------------------------------------------------------------------------
# The minimal clients: what a whole-process figure costs without mcp_invoke
# ---------------------------------------------------------------------------

def _minimal_argv(*command, **how):
    """The minimal stdio client's argv up to and including ``--``; the server's
    argv follows. ``python -E -S -m minimal_client``, run from FLOORS (its cwd, as
    HERE is mcp_invoke's) from its bytecode, as mcp_invoke is run; or, with
    ``script=True``, as a script, compiled on every run."""
    start = [MINIMAL_CLIENT] if how.get("script") else ["-m", "minimal_client"]
    return PYTHON + start + list(command) + ["--"]


def _minimal_http_argv(era, url, script=False):
    """The minimal HTTP client's argv, as _minimal_argv."""
    start = [MINIMAL_HTTP_CLIENT] if script else ["-m", "minimal_http_client"]
    return PYTHON + start + [era, url]


# ---------------------------------------------------------------------------
# Raw sessions: the floors talk to the same server without mcp_invoke
# ---------------------------------------------------------------------------

def _frame(ident, method, params):
    message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def _call_params(name, arguments, ident):
    # The same params the client sends (it always adds a progress token),
    # so the server does the same work for the floor as for the client.
    return {"name": name, "arguments": arguments, "_meta": {"progressToken": ident}}


def _initialize_params():
    return {"protocolVersion": LEGACY_VERSION, "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1.0"}}


class _Child(object):
    """A server child that serves until its stdin closes; ``with`` closes it."""

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()


class _RawSession(_Child):
    """The bench server over plain pipes, with no selectors and no framing layer.

    Use one reader per session: ``readline`` (buffered) or ``read_raw``
    (os.read on the fd); mixing them would lose what the buffer holds.
    """

    def __init__(self, env=None):
        self.proc = subprocess.Popen(_server_argv(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.fd_in = self.proc.stdin.fileno()
        self.fd_out = self.proc.stdout.fileno()
        self.readline = self.proc.stdout.readline
        self.next_id = 0

    def __enter__(self):
        return self

    def send(self, method, params):
        self.next_id += 1
        os.write(self.fd_in, _frame(self.next_id, method, params))

    def call(self, name, arguments):
        """One tools/call, answered through the buffered readline."""
        self.send("tools/call", _call_params(name, arguments, self.next_id + 1))
        return json.loads(self.readline())

    def read_raw(self):
        """One reply line read with os.read in a loop, parsed from the joined bytes."""
        chunks = []
        while True:
            chunk = os.read(self.fd_out, READ_SIZE)
            if not chunk:
                raise RuntimeError("the bench server closed its output")
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                break
        data = b"".join(chunks)
        del chunks[:]
        return json.loads(data)


# ---------------------------------------------------------------------------
# Streamable HTTP: the servers, and the floors' raw http.client
# ---------------------------------------------------------------------------

class _HttpServer(_Child):
    """An HTTP server child that prints its URL and serves until its stdin
    closes; entered, its URL. The CPUs it may run on are the ones this thread
    has when it starts."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.url = self.proc.stdout.readline().decode("ascii", "replace").strip()
        if not self.url.startswith("http://"):
            self.close()
            raise RuntimeError("%s printed %r, not its URL" % (_show_argv(argv), self.url))

    def __enter__(self):
        return self.url


class _LeanHttp(_HttpServer):
    """bench/http_server.py, the lean server of the HTTP call and cold rows."""

    def __init__(self, era):
        _HttpServer.__init__(self, PYTHON + [HTTP_SERVER, "--era", era])


class _FakeHttp(_HttpServer):
    """``fake_server.py --http 0``, whose event streams the SSE rows measure."""

    def __init__(self, era, modes=()):
        argv = [sys.executable, os.path.join(HERE, "fake_server.py"), "--http", "0", "--era", era]
        for mode in modes:
            argv += ["--mode", mode]
        _HttpServer.__init__(self, argv)


def _modern_meta():
    """The _meta mcp_invoke puts in every 2026-07-28 request (a clientInfo of its own)."""
    return {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1.0"},
            "io.modelcontextprotocol/clientCapabilities": {}}


class _RawHttp(object):
    """A session with an HTTP server on one plain http.client connection.

    What the HTTP floors send is what mcp_invoke sends: the same JSON-RPC
    bodies (a progress token in every call) and the headers the server
    requires: Accept and Content-Type; in the legacy era, after initialize
    and notifications/initialized, Mcp-Session-Id and MCP-Protocol-Version;
    in the modern era, the _meta of 2026-07-28 mirrored by
    MCP-Protocol-Version, Mcp-Method and Mcp-Name. TCP_NODELAY is set, as
    mcp_invoke sets it: http.client sends a request's headers and body in two
    writes (mcp_invoke joins a small request's into one, which a plain
    http.client caller does not). A connection the server closed (after an
    event stream) is opened again for the next request.
    """

    def __init__(self, url, era):
        import http.client
        from urllib.parse import urlsplit
        parts = urlsplit(url)
        self.path = parts.path
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        self.era = era
        self.meta = _modern_meta() if era == "modern" else {}
        self.next_id = 0
        self.wait = None  # seconds from a request to its response's headers
        self._headers = {}  # (method, name) -> the request's headers, built once
        if era == "legacy":
            response = self.request("initialize", _initialize_params())
            version = self.answer(response)["result"]["protocolVersion"]
            self.session = {"Mcp-Session-Id": response.getheader("Mcp-Session-Id"),
                            "MCP-Protocol-Version": version}
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"},
                       dict(HTTP_HEADERS, **self.session)).read()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.conn.close()

    def headers(self, method, name=None):
        key = (method, name)
        if key not in self._headers:
            headers = dict(HTTP_HEADERS)
            if self.era == "modern":
                headers.update({"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": method})
                if name is not None:
                    headers["Mcp-Name"] = name
            elif method != "initialize":
                headers.update(self.session)
            self._headers[key] = headers
        return self._headers[key]

    def _send(self, message, headers):
        import socket
        if self.conn.sock is None:
            self.conn.connect()
            self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        start = time.perf_counter()
        self.conn.request("POST", self.path, _dumps(message), headers)
        response = self.conn.getresponse()
        self.wait = time.perf_counter() - start
        return response

    def request(self, method, params, name=None):
        """POST one request; its response, headers read."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return self._send(message, self.headers(method, name))

    def call_params(self, name, arguments):
        params = _call_params(name, arguments, self.next_id + 1)
        params["_meta"].update(self.meta)
        return params

    def call(self, name, arguments):
        """One tools/call answered with JSON: read, json.loads; the message."""
        response = self.request("tools/call", self.call_params(name, arguments), name)
        return json.loads(response.read())

    def answer(self, response):
        """The message a response carries: a JSON body, or an event stream read
        whole and its (one) event's data line split out."""
        kind = response.getheader("Content-Type") or ""
        body = response.read()
        if not kind.startswith("text/event-stream"):
            return json.loads(body)
        start = body.index(b"\ndata: ") + len(b"\ndata: ")
        data = body[start:body.index(b"\n", start)]
        del body  # each copy let go as soon as the next is made: twice the data at most
        text = data.decode("utf-8")
        del data
        return json.loads(text)

    def big(self, size):
        """tools/call of big, answered as an event stream: the CallToolResult."""
        response = self.request("tools/call", self.call_params("big", {"size": size}), "big")
        if not (response.getheader("Content-Type") or "").startswith("text/event-stream"):
            raise RuntimeError("fake_server.py --mode sse answered big without an event "
                               "stream: %s" % response.getheader("Content-Type"))
        return self.answer(response)["result"]


# ---------------------------------------------------------------------------
# Measuring helpers
# ---------------------------------------------------------------------------

def _median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def _interleaved(tasks, runs):
    """Fastest seconds of each task over ``runs`` rounds, after one untimed round.

    Tasks run in turn within each round, so drift in the machine's speed
    falls on all of them alike; and the fastest run is each task's own cost,
    as a busy machine only ever adds time (the rule timeit follows).
    """
    times = [[] for _ in tasks]
    for round_number in range(runs + 1):
        for task, samples in zip(tasks, times):
            start = time.perf_counter()
            task()
            if round_number:
                samples.append(time.perf_counter() - start)
    return [min(samples) for samples in times]


def _run(argv, cwd=None, stdin=None, env=None):
    """A task that runs ``argv`` to completion and fails loudly if it fails.

    ``stdin``: a file to read, else /dev/null; stdout goes to /dev/null.
    ``cwd``: by default the directory whose module ``python -m`` runs (_home).
    """
    def task():
        _output(argv, cwd, stdin, subprocess.DEVNULL, env)
    return task


def _output(argv, cwd=None, stdin=None, stdout=subprocess.PIPE, env=None):
    """What ``argv`` writes to stdout (with the default ``stdout``); fails if it fails."""
    with open(stdin or os.devnull, "rb") as source:
        proc = subprocess.run(argv, stdin=source, stdout=stdout, stderr=subprocess.PIPE,
                              cwd=cwd or _home(argv), env=env)
    if proc.returncode != 0:
        raise RuntimeError("%s exited with %d: %s"
                           % (_show_argv(argv), proc.returncode,
                              proc.stderr.decode("utf-8", "replace")[-500:]))
    return proc.stdout


def _home(argv):
    """The working directory to run ``argv`` in: FLOORS for a floor module run
    with -m (a --peak wrapper's included), which finds it there as
    ``python -m mcp_invoke`` finds mcp_invoke in HERE."""
    for before, arg in zip(argv, argv[1:]):
        if before == "-m" and arg in FLOOR_MODULES:
            return FLOORS
    return HERE


def _show_argv(argv):
    return " ".join(argv)


def _write_bytecode():
    """Write the bytecode caches of mcp_invoke and the floor modules, for the
    ``python -m`` runs.

    Written here, as PYTHONDONTWRITEBYTECODE may be set; again before each
    figure that uses them, as the files may have changed since.
    """
    import py_compile
    for path in [LIBRARY] + [os.path.join(FLOORS, name + ".py") for name in FLOOR_MODULES]:
        py_compile.compile(path, doraise=True)


def _peak_runs(argvs, outputs, runs):
    """[(fastest seconds, lowest peak RSS bytes)] of each argv over ``runs`` rounds.

    Each run is one ``--peak`` wrapper child, timed inside the wrapper, so
    the wrapper's own start is not counted; the rounds interleave the argvs.
    """
    samples = [([], []) for _ in argvs]
    for _ in range(runs):
        for argv, output, (seconds, peaks) in zip(argvs, outputs, samples):
            elapsed, peak = _peak_run(argv, output)
            seconds.append(elapsed)
            peaks.append(peak)
    return [(min(seconds), min(peaks)) for seconds, peaks in samples]


def _peak_run(argv, output):
    """(seconds, peak RSS bytes) of one run of ``argv``, stdout to the file ``output``."""
    text = _output([sys.executable, BENCH, "--peak", output, "--"] + argv, _home(argv))
    seconds, peak = text.split()
    return float(seconds), int(peak)


def peak_child(output, argv):
    """``--peak FILE -- ARGV...``: run ARGV with stdout to FILE; print seconds and peak RSS.

    The peak is getrusage(RUSAGE_CHILDREN) of this wrapper, so it is that of
    the largest process of ARGV's tree it waited for: the client, or its
    server if that were larger. A fresh wrapper per run, as that figure only
    ever grows; and a small one, as a child starts its peak from what its
    parent held at fork and exec (see _peak_rss_bytes), here a few MB.
    """
    with open(output, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write("%s exited with %d: %s"
                         % (_show_argv(argv), proc.returncode,
                            proc.stderr.decode("utf-8", "replace")[-500:]))
        return 1
    sys.stdout.write("%.6f %d\n" % (seconds, _maxrss_bytes(resource.RUSAGE_CHILDREN)))
    return 0


def _server_env():
    """The environment mcp_invoke gives a server by default (its allowlist)."""
    import mcp_invoke
    return dict((k, v) for k, v in os.environ.items()
                if k in mcp_invoke.ENV_ALLOWLIST or k.startswith("LC_"))


def _peak_rss_bytes():
    """This process's peak resident set size, in bytes.

    Linux carries a parent's peak into ru_maxrss across fork and exec, so a
    child of a large parent would start from the parent's peak; where /proc
    gives VmHWM (the peak of this process's own memory) that is used instead.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return _maxrss_bytes(resource.RUSAGE_SELF)


def _maxrss_bytes(who):
    peak = resource.getrusage(who).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux and BSD: KiB


def _row(name, measured, floor, ratio, target=None, unit="x"):
    return {"name": name, "measured": measured, "floor": floor, "ratio": ratio,
            "target": target, "unit": unit}


def _ms(seconds):
    return "%.1f ms" % (seconds * 1e3)


# ---------------------------------------------------------------------------
# Figures: whole processes, against the minimal client and bare interpreters
# ---------------------------------------------------------------------------

def bench_startup(counts, notes):
    """Cold ``tools`` against the minimal client; ``--version`` against importing its needs.

    Every run here is one whole process, and all of them go in one
    interleaved loop, so the compile time taken from two of them (which the
    script rows add to their floors) comes from the same rounds.
    """
    _write_bytecode()
    server = _server_argv()
    module, script = PYTHON + ["-m", "mcp_invoke"], PYTHON + [LIBRARY]
    imports = "import " + ", ".join(VERSION_FLOOR)
    compiles = "%s; compile(open(%r, 'rb').read(), %r, 'exec')" % (imports, LIBRARY, LIBRARY)
    _check_tools(module + ["tools", "--"] + server, _minimal_argv("tools") + server)
    env = _server_env()

    def server_start():
        with _RawSession(env) as raw:
            raw.send("initialize", _initialize_params())
            raw.readline()

    # cold tools and its floor as a plain python3 starts them here (site, environment)
    site = [[sys.executable] + argv[len(PYTHON):] for argv in (module, _minimal_argv("tools"))]
    empty = PYTHON + ["-m", "import_floor"]  # python -m of a module that does nothing
    names = ("tools", "tools script", "minimal", "minimal script", "version",
             "version script", "imports", "imports -c", "compile", "bare", "bare -m", "server",
             "tools site", "minimal site", "bare site")
    tasks = (_run(module + ["tools", "--"] + server), _run(script + ["tools", "--"] + server),
             _run(_minimal_argv("tools") + server),
             _run(_minimal_argv("tools", script=True) + server), _run(module + ["--version"]),
             _run(script + ["--version"]), _run(empty + list(VERSION_FLOOR)),
             _run(PYTHON + ["-c", imports]), _run(PYTHON + ["-c", compiles]),
             _run(PYTHON + ["-c", "pass"]), _run(empty), server_start,
             _run(site[0] + ["tools", "--"] + server), _run(site[1] + server),
             _run([sys.executable, "-c", "pass"]))
    t = dict(zip(names, _interleaved(tasks, counts["process_runs"])))
    compiling = max(t["compile"] - t["imports -c"], 0.0)
    notes.append("startup: fastest of %d runs each; compiling mcp_invoke.py %.1f ms (compile "
                 "floor - import floor); the minimal client's tools %.1f ms = python -E -S -m "
                 "of a module doing nothing %.1f ms (-c pass %.1f ms, runpy the rest) + the "
                 "server's start and handshake %.1f ms + the rest; as a script %.1f ms"
                 % (counts["process_runs"], compiling * 1e3, t["minimal"] * 1e3,
                    t["bare -m"] * 1e3, t["bare"] * 1e3, t["server"] * 1e3,
                    t["minimal script"] * 1e3))
    notes.append("startup as a plain python3 starts (no -E -S; the client only): cold tools "
                 "%.1f ms against the minimal client's %.1f ms, %.2fx; python -c pass %.1f ms, "
                 "so site costs %.1f ms a start here"
                 % (t["tools site"] * 1e3, t["minimal site"] * 1e3,
                    t["tools site"] / t["minimal site"], t["bare site"] * 1e3,
                    (t["bare site"] - t["bare"]) * 1e3))
    extra = sorted(set(_library_imports()) - set(VERSION_FLOOR))
    notes.append("--version floor imports %s; mcp_invoke.py imports at its top%s"
                 % (", ".join(VERSION_FLOOR),
                    " also " + ", ".join(extra) if extra else " nothing more"))
    script_floor = t["minimal script"] + compiling
    return [
        _row("cold tools, python -m (.pyc)", _ms(t["tools"]), _ms(t["minimal"]),
             t["tools"] / t["minimal"], TARGETS["cold"]),
        _row("cold tools, script, floor + compile", _ms(t["tools script"]), _ms(script_floor),
             t["tools script"] / script_floor, TARGETS["cold"]),
        _row("--version, python -m (.pyc)", _ms(t["version"]), _ms(t["imports"]),
             t["version"] / t["imports"], TARGETS["version"]),
        _row("--version, script", _ms(t["version script"]), _ms(t["imports -c"]),
             t["version script"] / t["imports -c"]),
        _row("--version, script, floor + compile", _ms(t["version script"]),
             _ms(t["compile"]), t["version script"] / t["compile"], TARGETS["version"]),
    ]


def bench_agents(counts, notes):
    """What the agents' front door costs: cold tools through the launcher
    install writes, against the minimal client; search over a config of 8
    servers whose tool lists the cache holds, against a cold tools of one;
    cold tools as a script, which compiles the file each run (no target);
    and a skill's size against --json tools of the same server.
    """
    _write_bytecode()
    server = _server_argv()
    module, script = PYTHON + ["-m", "mcp_invoke"], PYTHON + [LIBRARY]
    work = tempfile.mkdtemp(prefix="bench_mcp_invoke.agents.")
    try:
        env = dict(os.environ, HOME=work, XDG_STATE_HOME=os.path.join(work, "state"))
        _output(module + ["install", "--bin", os.path.join(work, "bin")], env=env)
        launcher = [os.path.join(work, "bin", "mcp-invoke")]
        _check_tools(launcher + ["tools", "--"] + server, _minimal_argv("tools") + server)
        config = os.path.join(work, "servers.json")
        with open(config, "w") as f:  # eight servers, each its own command line
            json.dump({"mcpServers": dict(("s%d" % i, {"command": server[0], "args": server[1:]
                                                       + ["--bench-id", str(i)]})
                                          for i in range(8))}, f)
        search = module + ["--config", config, "--cache-ttl", "3600", "search", "echo"]
        found = _output(search, env=env).decode("utf-8").splitlines()  # the lists kept
        if len(found) != 8 or not all(line.startswith("s") and "__echo(" in line
                                      for line in found):
            raise RuntimeError("search listed %r, not echo of the 8 servers" % found)
        names = ("launcher", "minimal", "module", "search", "script")
        tasks = (_run(launcher + ["tools", "--"] + server), _run(_minimal_argv("tools") + server),
                 _run(module + ["tools", "--"] + server), _run(search, env=env),
                 _run(script + ["tools", "--"] + server))
        t = dict(zip(names, _interleaved(tasks, counts["process_runs"])))
        sizes = []
        for argv in (server, PYTHON + [os.path.join(HERE, "fake_server.py")]):
            sizes.append((len(_output(module + ["skill", "--"] + argv, env=env)),
                          len(_output(module + ["--json", "tools", "--"] + argv, env=env))))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    notes.append("agents: fastest of %d runs each; the launcher runs the file from its own "
                 "cached bytecode with python -E -S; search reads the 8 lists from the "
                 "tool-list cache (--cache-ttl 3600) and starts no server; the skill's tokens "
                 "are estimated at 4 characters each" % counts["process_runs"])
    return [
        _row("cold tools, launcher (install)", _ms(t["launcher"]), _ms(t["minimal"]),
             t["launcher"] / t["minimal"], TARGETS["launcher"]),
        _row("search, 8 servers cached, vs cold tools", _ms(t["search"]), _ms(t["module"]),
             t["search"] / t["module"], TARGETS["search"]),
        _row("cold tools, script (compiles each run)", _ms(t["script"]), _ms(t["minimal"]),
             t["script"] / t["minimal"]),
    ] + [_row("skill vs --json tools, %s" % name, "%d B, ~%d tok" % (skill, skill // 4),
              "%d B, ~%d tok" % (listed, listed // 4), skill / float(listed))
         for name, (skill, listed) in zip(("bench server, 2 tools", "fake_server.py, 19 tools"),
                                           sizes)]


def bench_search(counts, notes):
    """``search`` over six configured servers whose tool lists the cache holds,
    against ``--version``: as python -m (.pyc), as scripts, and in
    instructions (callgrind, full run only, with valgrind).

    The cache is this figure's own (XDG_CACHE_HOME, HOME and the rest in a
    temporary directory), filled by one search; then the servers' file is
    removed, so a run that started a server would fail: every timed search
    takes the six lists from the cache, as any made in the last hour.
    """
    _write_bytecode()
    module, script = PYTHON + ["-m", "mcp_invoke"], PYTHON + [LIBRARY]
    work = tempfile.mkdtemp(prefix="bench_mcp_invoke.search.")
    try:
        env, search = _cached_search(work)
        _check_search(script + search, env)
        names = ("search", "version", "search script", "version script")
        tasks = (_run(module + search, env=env), _run(module + ["--version"], env=env),
                 _run(script + search, env=env), _run(script + ["--version"], env=env))
        t = dict(zip(names, _interleaved(tasks, counts["process_runs"])))
        valgrind = shutil.which("valgrind")
        counted = None
        if valgrind is not None and counts["instruction_calls"] is not None:
            counted = []
            for argv in (search, ["--version"]):
                _write_bytecode()  # one run each: a compile in it would be counted
                counted.append(_counted_run(valgrind, module + argv, env=env))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    notes.append("search: fastest of %d runs each; six stdio servers configured, their tool "
                 "lists cached by one search before (no --cache-ttl), their file then removed: "
                 "no server starts; instructions: %s"
                 % (counts["process_runs"], "callgrind, one run each" if counted else
                    "skipped (%s)" % ("no valgrind on PATH" if valgrind is None
                                      else "quick run")))
    rows = [
        _row("search, 6 servers cached, python -m (.pyc) vs --version", _ms(t["search"]),
             _ms(t["version"]), t["search"] / t["version"], TARGETS["search_version"]),
        _row("search, 6 servers cached, script vs --version", _ms(t["search script"]),
             _ms(t["version script"]), t["search script"] / t["version script"],
             TARGETS["search_version"]),
    ]
    if counted:
        rows.append(_row("search, 6 servers cached, -m vs --version, CPU",
                         "%.1fM instr" % (counted[0] / 1e6), "%.1fM instr" % (counted[1] / 1e6),
                         counted[0] / float(counted[1]), TARGETS["search_version"]))
    return rows


def _cached_search(work):
    """(env, search arguments) of six servers configured in ``work``, whose tool
    lists the cache (in ``work`` too) holds, and which can no longer start."""
    env = dict(os.environ, HOME=work, XDG_CACHE_HOME=os.path.join(work, "cache"),
               XDG_CONFIG_HOME=os.path.join(work, "config"),
               XDG_STATE_HOME=os.path.join(work, "state"))
    server = PYTHON + [os.path.join(work, "stdio_server.py")]
    shutil.copy(STDIO_SERVER, server[-1])
    config = os.path.join(work, "servers.json")
    with open(config, "w") as f:  # six servers, each its own command line
        json.dump({"mcpServers": dict(("s%d" % i, {"command": server[0], "args": server[1:]
                                                   + ["--bench-id", str(i)]})
                                      for i in range(6))}, f)
    search = ["--config", config, "search", "echo"]
    module = PYTHON + ["-m", "mcp_invoke"]
    _check_search(module + search, env)  # fills the cache
    os.remove(server[-1])
    _check_search(module + search, env)
    return env, search


def _check_search(argv, env):
    """search lists echo of each of the six servers, one line each."""
    found = _output(argv, env=env).decode("utf-8").splitlines()
    if sorted(line.split("(")[0] for line in found) != ["s%d__echo" % i for i in range(6)]:
        raise RuntimeError("%s listed %r, not echo of the 6 servers" % (_show_argv(argv), found))


def _check_tools(cli, minimal):
    """Both list the server's tools, one line each, the name first."""
    expected = TOOL_NAMES
    for argv in (cli, minimal):
        lines = _output(argv).decode("utf-8").splitlines()
        names = [re.match(r"\w*", line).group() for line in lines]
        if names != expected:
            raise RuntimeError("%s listed %r, not the tools %r"
                               % (_show_argv(argv), lines, expected))


def _library_imports():
    """The modules mcp_invoke.py imports at its top level, read from its source."""
    with open(LIBRARY) as f:
        source = f.read()
    names = re.findall(r"^(?:import|from) ([\w.]+)", source, re.M)
    return sorted(set(names) - {"__future__"})


def bench_cli_batch(counts, notes):
    """``mcp_invoke batch`` of many echo lines, per call, the start of the process taken off.

    The start is the same command with one line; the floor is the minimal
    client, with its own one-line run taken off the same way. The server
    alone (frames from a file, answers to /dev/null) is timed too, for the
    notes: a client quicker than the server per call waits on it.
    """
    _write_bytecode()
    lines = counts["batch_lines"]
    server = _echo_server_argv()
    cli = PYTHON + ["-m", "mcp_invoke", "batch", "--"] + server
    minimal = _minimal_argv("batch") + server
    workdir = tempfile.mkdtemp(prefix="bench_mcp_invoke.")
    try:
        paths = [os.path.join(workdir, name) for name in ("many", "one", "frames", "frame")]
        frame = _frame(1, "tools/call", _call_params(ECHO[0], ECHO[1], 1))
        for path, data in zip(paths, (BATCH_LINE * lines, BATCH_LINE, frame * lines, frame)):
            with open(path, "wb") as f:
                f.write(data)
        many, one, frames, single = paths
        _check_batch(cli, minimal, many, lines)
        t_many, t_one, f_many, f_one, s_many, s_one = _interleaved(
            [_run(cli, stdin=many), _run(cli, stdin=one),
             _run(minimal, stdin=many), _run(minimal, stdin=one),
             _run(server, stdin=frames), _run(server, stdin=single)], counts["batch_runs"])
    finally:
        shutil.rmtree(workdir)
    per_call, floor = (t_many - t_one) / (lines - 1), (f_many - f_one) / (lines - 1)
    notes.append("CLI batch: %d lines, less a one-line batch (%.1f ms; the minimal client's "
                 "%.1f ms), fastest of %d runs each; the server alone answers in %.1f us/call"
                 % (lines, t_one * 1e3, f_one * 1e3, counts["batch_runs"],
                    (s_many - s_one) / (lines - 1) * 1e6))
    return [_row("CLI batch, %s echo calls" % format(lines, ","), _us(per_call), _us(floor),
                 per_call / floor, TARGETS["batch"])]


def _check_batch(cli, minimal, stdin, lines):
    """Both print one line per request, the same bytes."""
    printed = _output(cli, stdin=stdin)
    if printed.count(b"\n") != lines or _output(minimal, stdin=stdin) != printed:
        raise RuntimeError("mcp_invoke batch and the minimal client differ: %r..."
                           % printed[:200])


def bench_cli_large(counts, notes):
    """``mcp_invoke call`` of a large text result as a whole process: time and peak RSS.

    stdout goes to a file. The floor is the minimal client making the same
    call; the --json row's floor is the text call itself. ``--max-bytes``
    lets a result past the default 64 MiB through.
    """
    _write_bytecode()
    size = counts["cli_size"]
    label = "%d MB" % (size // MB)
    server = _server_argv()
    arguments = json.dumps({"size": size})
    cli = PYTHON + ["-m", "mcp_invoke", "--max-bytes", str(size + MB)]
    argvs = [cli + ["call", "blob", arguments, "--"] + server,
             cli + ["--json", "call", "blob", arguments, "--"] + server,
             _minimal_argv("call", "blob", arguments) + server]
    workdir = tempfile.mkdtemp(prefix="bench_mcp_invoke.")
    try:
        outputs = [os.path.join(workdir, name) for name in ("text", "json", "minimal")]
        for argv, output in zip(argvs, outputs):  # the warm-up round, and the check
            _peak_run(argv, output)
        _check_large(outputs, size)
        (text, text_peak), (as_json, json_peak), (floor, floor_peak) = _peak_runs(
            argvs, outputs, counts["cli_runs"])
    finally:
        shutil.rmtree(workdir)
    notes.append("CLI call %s: fastest of %d runs each, and the lowest peak RSS of the client "
                 "or its server (the server's is about the payload); --json peak RSS %.0f MB"
                 % (label, counts["cli_runs"], json_peak / MB))
    return [
        _row("CLI call %s text, time" % label, _ms(text), _ms(floor), text / floor,
             TARGETS["cli_time"]),
        _row("CLI call %s text, peak RSS" % label, "%.0f MB" % (text_peak / MB),
             "%.0f MB" % (floor_peak / MB), text_peak / float(floor_peak), TARGETS["cli_rss"]),
        _row("CLI --json call %s vs text" % label, _ms(as_json), _ms(text), as_json / text,
             TARGETS["json"]),
    ]


def _check_large(outputs, size):
    """The text call and the minimal client wrote the same text; --json wrote more."""
    text, as_json, minimal = outputs
    if os.path.getsize(text) != size + 1 or not filecmp.cmp(text, minimal, shallow=False):
        raise RuntimeError("the text call wrote %d bytes, the minimal client %d; both "
                           "should write the %d bytes of text and a newline"
                           % (os.path.getsize(text), os.path.getsize(minimal), size))
    if os.path.getsize(as_json) <= size:
        raise RuntimeError("--json call wrote %d bytes for a %d-byte text"
                           % (os.path.getsize(as_json), size))


# ---------------------------------------------------------------------------
# Figures: the library in one process, against raw pipes
# ---------------------------------------------------------------------------

def bench_calls(counts, notes):
    """Sequential and pipelined call_tool in one session, against a raw ping-pong.

    Where the OS allows, the CPUs are chosen rather than left to the scheduler,
    whose placement (both processes of a pair on one CPU, or on two) swings a
    round trip by 2x from run to run and would decide the ratio: first the
    servers on one CPU and the bench on another, as on any multi-core machine;
    then all on one CPU, where the round trip is CPU time alone.
    """
    placements = _placements()
    seq, raw, pipe = _call_rounds(counts, True, placements[0][1])
    rows = [
        _row("sequential call_tool" + placements[0][0], _us(seq), _us(raw), seq / raw,
             TARGETS["sequential"]),
        _row("pipelined batch" + placements[0][0], _us(pipe), _us(raw), pipe / raw),
    ]
    for label, cpus in placements[1:]:
        seq, raw, _ = _call_rounds(counts, False, cpus)
        rows.append(_row("sequential call_tool" + label, _us(seq), _us(raw), seq / raw,
                         TARGETS["sequential"]))
    notes.append("calls: median of %d rounds of %d calls each"
                 % (counts["rounds"], counts["calls"]))
    return rows


def _placements():
    """[(row label, (server CPUs, bench CPUs) or None)], the first one for every row."""
    if not hasattr(os, "sched_setaffinity"):
        return [("", None)]
    cpus = sorted(os.sched_getaffinity(0))
    one = [(", one CPU", ({cpus[0]}, {cpus[0]}))]
    if len(cpus) < 2:
        return one
    return [(", two CPUs", ({cpus[1]}, {cpus[0]}))] + one


def _call_rounds(counts, pipelined, cpus=None):
    """Median seconds per call: (client sequential, raw floor, client pipelined).

    ``cpus``: (server CPUs, bench CPUs), or None to leave placement to the OS.
    """
    import mcp_invoke
    n = counts["calls"]
    requests = [("tools/call", {"name": ECHO[0], "arguments": ECHO[1]})] * n
    seq, raw_times, pipe = [], [], []
    saved = os.sched_getaffinity(0) if cpus else None
    try:
        if cpus:
            os.sched_setaffinity(0, cpus[0])  # the servers inherit it at fork
        with mcp_invoke.Client(_server_argv()) as client, _RawSession(_server_env()) as raw:
            if cpus:
                os.sched_setaffinity(0, cpus[1])
            _sequential(client, WARM_UP_CALLS)
            _raw_calls(raw, WARM_UP_CALLS)
            if pipelined:
                _pipelined(client, requests)
            for _ in range(counts["rounds"]):
                seq.append(_sequential(client, n) / n)
                raw_times.append(_raw_calls(raw, n) / n)
                if pipelined:
                    pipe.append(_pipelined(client, requests) / n)
    finally:
        if saved:
            os.sched_setaffinity(0, saved)
    return _median(seq), _median(raw_times), _median(pipe) if pipe else None


def bench_instructions(counts, notes):
    """Client CPU per call as instructions counted by callgrind, against the floor's.

    Unlike time, an instruction count does not move with the machine's load:
    the same code and inputs give the same count, so this row is the steady
    measure of what the client itself adds per call. Only the calling process
    is counted (the server runs natively). Needs valgrind; skipped without it.
    """
    valgrind = shutil.which("valgrind")
    if valgrind is None or counts["instruction_calls"] is None:
        notes.append("instructions: skipped (%s)"
                     % ("no valgrind on PATH" if valgrind is None else "quick run"))
        return []
    few, many = counts["instruction_calls"]
    per_call = {}
    for side in ("client", "floor"):
        base, more = (_instructions(valgrind, side, n) for n in (few, many))
        per_call[side] = (more - base) / float(many - few)
    notes.append("instructions: callgrind, (count at %d calls - count at %d) / %d"
                 % (many, few, many - few))
    return [_row("sequential call_tool, CPU", "%.0f instr/call" % per_call["client"],
                 "%.0f instr/call" % per_call["floor"],
                 per_call["client"] / per_call["floor"], TARGETS["sequential"])]


def _instructions(valgrind, side, calls):
    """Instructions the bench process runs for ``calls`` echo calls, setup included."""
    return _counted_run(valgrind, [sys.executable, BENCH, "--calls", side, str(calls)])


def _counted_run(valgrind, argv, stdin=None, env=None):
    """Instructions callgrind counts in the process ``argv`` (every thread of it, no
    child: a server runs natively), run from _home(argv), stdin from ``stdin``."""
    with open(stdin or os.devnull, "rb") as source:
        proc = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                              + argv, cwd=_home(argv), stdin=source,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    found = re.search(rb"Collected\s*:\s*(\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        raise RuntimeError("callgrind run failed: %s"
                           % proc.stderr.decode("utf-8", "replace")[-500:])
    return int(found.group(1))


def bench_process_instructions(counts, notes):
    """The cold and batch figures in instructions: what callgrind counts in the
    client's process and in the floor's, the server not counted (it runs
    natively). Steady where time is not; full run only, and only with valgrind.

    cold tools (stdio) and cold tools --url (legacy and modern) against the
    minimal clients, each run once after a run that settles the era cache;
    and batch per call, (count at 2,200 lines - count at 200) / 2,000.
    """
    valgrind = shutil.which("valgrind")
    if valgrind is None or counts["instruction_calls"] is None:
        notes.append("process instructions: skipped (%s)"
                     % ("no valgrind on PATH" if valgrind is None else "quick run"))
        return []
    _write_bytecode()
    server = _server_argv()
    module = PYTHON + ["-m", "mcp_invoke"]
    rows = []
    pairs = [("cold tools, python -m, CPU", module + ["tools", "--"] + server,
              _minimal_argv("tools") + server, "cold")]
    with _LeanHttp("legacy") as legacy, _LeanHttp("modern") as modern:
        for era, url in zip(HTTP_ERAS, (legacy, modern)):
            pairs.append(("HTTP cold tools, %s, python -m, CPU" % era,
                          module + ["tools", "--url", url], _minimal_http_argv(era, url),
                          "http_cold"))
        for name, cli, floor, target in pairs:
            _output(cli)  # the era remembered, as in the timed figures
            client, minimal = _counted_run(valgrind, cli), _counted_run(valgrind, floor)
            rows.append(_row(name, "%.1fM instr" % (client / 1e6),
                             "%.1fM instr" % (minimal / 1e6), client / float(minimal),
                             TARGETS[target]))
    workdir = tempfile.mkdtemp(prefix="bench_mcp_invoke.")
    try:
        per_call = []
        batch = [module + ["batch", "--"], _minimal_argv("batch")]
        for argv in [start + _echo_server_argv() for start in batch]:
            found = []
            for lines in (200, 2200):
                path = os.path.join(workdir, "lines")
                with open(path, "wb") as f:
                    f.write(BATCH_LINE * lines)
                found.append(_counted_run(valgrind, argv, path))
            per_call.append((found[1] - found[0]) / 2000.0)
    finally:
        shutil.rmtree(workdir)
    rows.insert(1, _row("CLI batch, CPU", "%.0f instr/call" % per_call[0],
                        "%.0f instr/call" % per_call[1], per_call[0] / per_call[1],
                        TARGETS["batch"]))
    notes.append("process instructions: callgrind in the client's process and the floor's "
                 "(every thread, the server not counted), one run each; batch per call: "
                 "(count at 2,200 lines - count at 200) / 2,000")
    return rows


def calls_child(side, calls):
    """``--calls client|floor N``: one session of N echo calls, for callgrind to count."""
    if side == "client":
        import mcp_invoke
        with mcp_invoke.Client(_server_argv()) as client:
            _sequential(client, calls)
    else:
        with _RawSession(_server_env()) as raw:
            raw.send("initialize", _initialize_params())
            raw.readline()
            _raw_calls(raw, calls)
    return 0


def _us(seconds):
    return "%.1f us/call" % (seconds * 1e6)


def _timed_calls(call, n):
    """Seconds for ``n`` echo calls through ``call(name, arguments) -> result``."""
    name, arguments = ECHO
    result = None
    start = time.perf_counter()
    for _ in range(n):
        result = call(name, arguments)
    elapsed = time.perf_counter() - start
    if n:
        _check_echo(result)
    return elapsed


def _sequential(client, n):
    return _timed_calls(client.call_tool, n)


def _raw_calls(raw, n):
    return _timed_calls(lambda name, arguments: raw.call(name, arguments).get("result"), n)


def _pipelined(client, requests):
    start = time.perf_counter()
    results = list(client.batch(requests))
    elapsed = time.perf_counter() - start
    for result in results:
        _check_echo(result)
    return elapsed


def _check_echo(result):
    if not isinstance(result, dict) or result.get("content") != [{"type": "text", "text": "hi"}]:
        raise RuntimeError("unexpected echo result: %r" % (result,))


def bench_large(counts, notes):
    """Large results: throughput here, client and floor in turn; peak RSS in fresh children."""
    rows = []
    for size, repeats in counts["sizes"]:
        label = "%d MB" % (size // MB)
        growth, floor_growth = _rss_child("client", size), _rss_child("floor", size)
        with _BlobCaller("client", size) as client, _BlobCaller("floor", size) as floor:
            seconds, floor_seconds = _interleaved([_fetch(client, size), _fetch(floor, size)],
                                                  repeats)
        rate, floor_rate = size / seconds / MB, size / floor_seconds / MB
        rows.append(_row("large %s: call_tool MB/s" % label, "%.0f MB/s" % rate,
                         "%.0f MB/s" % floor_rate, rate / floor_rate))
        rows.append(_row("large %s: peak RSS growth" % label, "%.1f MB" % (growth / MB),
                         "%.1f MB" % (floor_growth / MB), growth / float(size),
                         unit="x payload"))
        notes.append("large %s: fastest of %d calls each; the floor's peak RSS growth is "
                     "%.2fx the payload" % (label, repeats, floor_growth / float(size)))
    return rows


class _BlobCaller(object):
    """A session that fetches blob results: through the client, or the floor's raw pipes.

    Calling it with a size returns the CallToolResult dict.
    """

    def __init__(self, side, size):
        self.side = side
        if side == "client":
            import mcp_invoke
            self._session = mcp_invoke.Client(_server_argv(), max_bytes=size + MB)
        else:
            # No mcp_invoke import here: in the RSS child it would change the
            # floor's allocator state (compiling a large module raises glibc's
            # mmap threshold). The server's environment does not matter here.
            self._session = _RawSession()

    def __enter__(self):
        self._session.__enter__()
        if self.side != "client":
            self._session.send("initialize", _initialize_params())
            self._session.read_raw()
        return self

    def __exit__(self, *exc):
        self._session.__exit__(*exc)

    def __call__(self, size):
        if self.side == "client":
            return self._session.call_tool("blob", {"size": size})
        raw = self._session
        raw.send("tools/call", _call_params("blob", {"size": size}, raw.next_id + 1))
        return raw.read_raw()["result"]


def _fetch(caller, size):
    def task():
        _check_blob(caller(size), size)
    return task


def _check_blob(result, size):
    text = result["content"][0]["text"]
    if len(text) != size:
        raise RuntimeError("blob result has %d characters, not %d" % (len(text), size))


def _rss_child(side, size):
    """Peak RSS growth (bytes) of one large call, measured in a fresh interpreter."""
    argv = [sys.executable, BENCH, "--rss", side, str(size)]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError("RSS child (%s, %d bytes) failed: %s"
                           % (side, size, proc.stderr.decode("utf-8", "replace")[-500:]))
    return int(proc.stdout)


def rss_child(side, size):
    """In the child: print the peak RSS growth of one large call over the baseline.

    The baseline is taken with the session open and warmed up, so the growth
    is what the large message itself costs, in a process that has not held
    one before (a command line call's case). Only one large call is made: once
    a large block is freed, glibc raises its mmap threshold and keeps freed
    heap, which adds about one payload to the peak of a second call.
    """
    with _BlobCaller(side, size) as call:
        _check_blob(call(1000), 1000)
        before = _peak_rss_bytes()
        _check_blob(call(size), size)
        growth = _peak_rss_bytes() - before
    sys.stdout.write("%d\n" % growth)
    return 0


def bench_probe(counts, notes):
    """What finding the era costs on a legacy server: probe, then handshake.

    The bench server is of the handshake era, so ``server/discover`` is
    answered with -32601 and ``initialize`` follows: one extra round trip
    per session, against a session pinned to 2025-11-25 (no probe). The CLI
    row probes with --no-cache, as on a first run: later runs remember the era.
    """
    import mcp_invoke
    server = _server_argv()

    def session(version):
        def task():
            with mcp_invoke.Client(server, protocol_version=version) as client:
                assert client.era == "legacy"
        return task

    probed, pinned = _interleaved([session(None), session("2025-11-25")],
                                  counts["process_runs"])
    _write_bytecode()
    cli = PYTHON + ["-m", "mcp_invoke", "tools"]
    _output(cli + ["--"] + server)  # the era cache remembers the server from here on
    cli_probed, cli_pinned, cli_remembered = _interleaved(
        [_run(cli + ["--no-cache", "--"] + server),
         _run(cli + ["--protocol-version", LEGACY_VERSION, "--"] + server),
         _run(cli + ["--"] + server)],
        counts["process_runs"])
    notes.append("probe: %.2f ms more per session; %.2f ms more per CLI run (python -m, "
                 "--no-cache against --protocol-version); the era remembered (the cache, "
                 "as for every other CLI row): %.2f ms against pinned"
                 % ((probed - pinned) * 1e3, (cli_probed - cli_pinned) * 1e3,
                    (cli_remembered - cli_pinned) * 1e3))
    return [_row("probe, legacy server: session", "%.1f ms" % (probed * 1e3),
                 "%.1f ms" % (pinned * 1e3), probed / pinned),
            _row("probe, legacy server: CLI tools (-m, --no-cache)", _ms(cli_probed),
                 _ms(cli_pinned), cli_probed / cli_pinned)]


# ---------------------------------------------------------------------------
# Figures: tasks, against a plain call and against the interval asked
# ---------------------------------------------------------------------------

def bench_tasks(counts, notes):
    """Tools run as tasks, in both forms, on one open Client of bench/task_server.py.

    A task done at once: echo_task asking pollIntervalMs 0, completed at its
    first tasks/get; against echo called plainly in the same session: the
    requests the server counts per call, and the time per call (the median
    of rounds, the two in turn; reported); and as a user runs it, a CLI call
    (python -m) on a server of its own against a CLI call of echo, the
    target. A task created completed is timed beside it
    (no target): the task's own rounds, with no poll to wait for. Polling: a
    task completed at its 20th tasks/get, the spacing of what the server
    received (each poll after the first, which may go at once) by the
    server's clock, asking 100 ms, then 0 and 10 ms.
    """
    import mcp_invoke
    rows = []
    at_once, created = dict(ECHO[1]), dict(ECHO[1], polls=0)
    floor = mcp_invoke.MIN_POLL_INTERVAL
    for era, revision in TASK_FORMS:
        with mcp_invoke.Client(_task_server_argv(era)) as client:
            if client.era != era:
                raise RuntimeError("bench/task_server.py --era %s was taken for %s"
                                   % (era, client.era))
            _sequential(client, WARM_UP_CALLS)
            trips = [_requests_per_call(client, arguments)
                     for arguments in (None, at_once, created)]
            plain, soon, done = _task_rounds(client, counts, at_once, created)
            gaps = [_poll_gaps(client, asked)[1:] for asked in (POLL_ASKED,) + POLL_FAST]
            first = min(_poll_gaps(client, 0, 1)[0] for _ in range(3))
        cli = _task_cli(era, at_once, counts["process_runs"])
        means = [sum(found) / len(found) for found in gaps]
        fast = min(min(found) for found in gaps[1:])
        rows += [
            _row("task done at once, %s: requests" % revision, "%.1f/call" % trips[1],
                 "%.1f/call" % trips[0], trips[1] - trips[0], TARGETS["task_trips"],
                 unit=" more"),
            _row("task done at once, %s: CLI call time" % revision, _ms(cli[0]), _ms(cli[1]),
                 cli[0] / cli[1], TARGETS["task_time"]),
            _row("task done at once, %s: library call time" % revision,
                 "%.2f ms/call" % (soon * 1e3), _us(plain), soon / plain),
            _row("task created completed, %s: time" % revision, _us(done), _us(plain),
                 done / plain),
            _row("task polls, %s, asked %d ms: mean spacing" % (revision, POLL_ASKED),
                 _ms(means[0]), "%d ms asked" % POLL_ASKED, means[0] / (POLL_ASKED / 1e3),
                 TARGETS["poll_mean"]),
            _row("task polls, %s, asked %d ms: least spacing" % (revision, POLL_ASKED),
                 _ms(min(gaps[0])), "%s least" % _ms(floor), min(gaps[0]) / floor,
                 TARGETS["poll_min"]),
            _row("task polls, %s, asked %s ms: least spacing"
                 % (revision, " and ".join(str(asked) for asked in POLL_FAST)),
                 " / ".join(_ms(min(found)) for found in gaps[1:]), "%s least" % _ms(floor),
                 fast / floor, TARGETS["poll_min"]),
        ]
        notes.append("tasks, %s: a task done at once is polled first %.1f ms after the call "
                     "reached the server (the least of 3); a task created completed takes %.1f "
                     "requests a call; polls asking %s ms came %s ms apart on average"
                     % (revision, first * 1e3, trips[2],
                        " and ".join(str(asked) for asked in POLL_FAST),
                        " and ".join("%.1f" % (mean * 1e3) for mean in means[1:])))
    notes.append("tasks: requests counted by the server over 10 calls; times the median of "
                 "%d rounds of %d plain calls, %d tasks done at once and %d created completed; "
                 "CLI calls the fastest of %d runs; polls: %d to a task, spaced by the "
                 "server's clock from the first poll on"
                 % (counts["rounds"], counts["calls"], counts["task_calls"], counts["calls"],
                    counts["process_runs"], POLLS))
    return rows


def _task_calls(client, arguments, n):
    """Seconds for ``n`` calls of echo_task with ``arguments``, or of echo (None)."""
    if arguments is None:
        return _sequential(client, n)
    return _timed_calls(lambda name, _: client.call_tool("echo_task", arguments), n)


def _task_stats(client):
    """What bench/task_server.py received since it was last asked (then forgotten)."""
    return json.loads(client.call_tool("stats")["content"][0]["text"])


def _requests_per_call(client, arguments, calls=10):
    """The requests the server receives for each call (as _task_calls)."""
    _task_calls(client, arguments, 1)  # a first task call lists the tools (2025-11-25)
    _task_stats(client)
    _task_calls(client, arguments, calls)
    return sum(_task_stats(client)["counts"].values()) / float(calls)


def _task_rounds(client, counts, at_once, created):
    """Median seconds per call: (echo, a task done at once, a task created completed)."""
    n, few = counts["calls"], counts["task_calls"]
    sides = ((None, n), (at_once, few), (created, n))
    for arguments, calls in sides:
        _task_calls(client, arguments, calls)
    times = [[] for _ in sides]
    for _ in range(counts["rounds"]):
        for (arguments, calls), samples in zip(sides, times):
            samples.append(_task_calls(client, arguments, calls) / calls)
    return [_median(samples) for samples in times]


def _poll_gaps(client, asked, polls=POLLS):
    """Seconds between what the server received for one task asking ``asked`` ms,
    completed at its ``polls``-th poll: the call, then each tasks/get. The
    first is the call's to the first poll, which may go at once; the rest
    are the spacing of the polls."""
    _task_stats(client)
    _check_echo(client.call_tool("echo_task", dict(ECHO[1], interval=asked, polls=polls)))
    arrivals = _task_stats(client)["arrivals"]
    if [method for method, _ in arrivals] != ["tools/call"] + ["tasks/get"] * polls:
        raise RuntimeError("a task of %d polls came as %r" % (polls, arrivals))
    return [later[1] - before[1] for before, later in zip(arrivals, arrivals[1:])]


def _task_cli(era, at_once, runs):
    """Fastest seconds of a CLI call (python -m) of echo_task done at once, and
    of echo, each on a server of its own as a user runs them."""
    _write_bytecode()
    module = PYTHON + ["-m", "mcp_invoke", "call"]
    server = ["--"] + _task_server_argv(era)
    with tempfile.TemporaryDirectory(prefix="bench_mcp_invoke.tasks.") as work:
        env = dict(os.environ, HOME=work, XDG_CACHE_HOME=os.path.join(work, "cache"),
                   XDG_STATE_HOME=os.path.join(work, "state"),
                   XDG_CONFIG_HOME=os.path.join(work, "config"))
        argvs = (module + ["echo_task", json.dumps(at_once)] + server,
                 module + ["echo", json.dumps(ECHO[1])] + server)
        for argv in argvs:  # the era cache, as on any run but a server's first
            _output(argv, env=env)
        return _interleaved([_run(argv, env=env) for argv in argvs], runs)


# ---------------------------------------------------------------------------
# Figures: Streamable HTTP, against plain http.client
# ---------------------------------------------------------------------------

def bench_http_calls(counts, notes):
    """Sequential call_tool on an open Client(url=...), against a raw keep-alive POST.

    One server per era and placement, the CPUs chosen as for the stdio rows
    (the client's worker threads start on the bench's CPUs). The floor is
    _RawHttp.call on one connection kept for the whole session.
    """
    rows, opened, spread = [], [], []
    for label, cpus in _placements():
        for era in HTTP_ERAS:
            seq, raw, connects, floors = _http_call_rounds(counts, era, cpus)
            rows.append(_row("HTTP call_tool, %s%s" % (era, label), _us(seq), _us(raw),
                             seq / raw, TARGETS["http_call"]))
            opened.append("%s%s %d" % (era, label, connects))
            spread.append("%s%s %.0f-%.0f" % (era, label, floors[0] * 1e6, floors[-1] * 1e6))
    notes.append("HTTP calls: median of %d rounds of %d calls each; the floor keeps one "
                 "connection; TCP connections the client opened for its %d warm-up calls: %s"
                 % (counts["rounds"], counts["calls"], WARM_UP_CALLS, ", ".join(opened)))
    notes.append("HTTP calls: the floor's rounds ranged %s us/call" % ", ".join(spread))
    return rows


def _http_call_rounds(counts, era, cpus=None):
    """Median seconds per call (client, raw floor), the connections the client
    opened for its warm-up calls, and the floor's rounds, sorted. ``cpus``: as
    for _call_rounds."""
    import mcp_invoke
    n = counts["calls"]
    seq, raw_times = [], []
    saved = os.sched_getaffinity(0) if cpus else None
    try:
        if cpus:
            os.sched_setaffinity(0, cpus[0])  # the server inherits it at fork
        with _LeanHttp(era) as url:
            if cpus:
                os.sched_setaffinity(0, cpus[1])  # the client's threads inherit this
            with mcp_invoke.Client(url=url) as client, _RawHttp(url, era) as raw:
                connects = _connects(lambda: _sequential(client, WARM_UP_CALLS))
                _raw_calls(raw, WARM_UP_CALLS)
                for _ in range(counts["rounds"]):
                    seq.append(_sequential(client, n) / n)
                    raw_times.append(_raw_calls(raw, n) / n)
    finally:
        if saved:
            os.sched_setaffinity(0, saved)
    return _median(seq), _median(raw_times), connects, sorted(raw_times)


def _connects(work):
    """How many TCP connections ``work()`` opens from this process, in any thread
    (socket.socket.connect and connect_ex counted). Not for timed work."""
    import socket
    cls, count, saved = socket.socket, [0], {}
    for name in ("connect", "connect_ex"):
        saved[name] = cls.__dict__.get(name)
        setattr(cls, name, _counted(getattr(cls, name), count))
    try:
        work()
    finally:
        for name, original in saved.items():
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)
    return count[0]


def _counted(method, count):
    def counting(sock, address):
        count[0] += 1
        return method(sock, address)
    return counting


def bench_http_sse(counts, notes):
    """A large result as an event stream: MB/s, and peak RSS growth in fresh children.

    Every call, timed or not, goes to a server started for it (legacy era,
    --mode sse), so each side meets the same server state: fake_server.py
    keeps every event it sends for resumption, a payload per call. Only the
    call is timed; the server's start and the session's are not.
    """
    size = counts["sse_size"]
    label = "%d MB" % (size // MB)
    (growth, peak), (floor_growth, floor_peak) = (_http_rss_child(side, size)
                                                  for side in ("client", "floor"))
    waits = []
    seconds, floor_seconds = _fastest_own([_sse_fetch("client", size),
                                           _sse_fetch("floor", size, waits)],
                                          counts["sse_runs"])
    rate, floor_rate = size / seconds / MB, size / floor_seconds / MB
    notes.append("HTTP SSE %s: fastest of %d calls each (legacy era, a server per call); "
                 "the server works %.0f ms before its first byte (the floor's fastest wait for "
                 "the response's headers, %.0f%% of its fastest call); peak RSS of the whole "
                 "child: client %.0f MB (%.2fx the payload), floor %.0f MB (%.2fx); the "
                 "floor's growth is %.2fx the payload"
                 % (label, counts["sse_runs"], min(waits) * 1e3,
                    min(waits) / floor_seconds * 100, peak / MB, peak / float(size),
                    floor_peak / MB, floor_peak / float(size), floor_growth / float(size)))
    return [
        _row("HTTP SSE %s: call_tool MB/s" % label, "%.0f MB/s" % rate,
             "%.0f MB/s" % floor_rate, rate / floor_rate, TARGETS["sse_rate"]),
        _row("HTTP SSE %s: peak RSS growth" % label, "%.1f MB" % (growth / MB),
             "%.1f MB" % (floor_growth / MB), growth / float(size), TARGETS["sse_rss"],
             unit="x payload"),
    ]


def _fastest_own(tasks, runs):
    """Like _interleaved, for tasks that time themselves: each returns its seconds."""
    times = [[] for _ in tasks]
    for round_number in range(runs + 1):
        for task, samples in zip(tasks, times):
            seconds = task()
            if round_number:
                samples.append(seconds)
    return [min(samples) for samples in times]


class _SSECaller(object):
    """A session that fetches big results as event streams: through the client
    (max_bytes past the payload), or the floor's _RawHttp.

    Calling it with a size returns the CallToolResult dict.
    """

    def __init__(self, side, url, size):
        self.side = side
        if side == "client":
            import mcp_invoke
            self._session = mcp_invoke.Client(url=url, max_bytes=size + MB)
        else:
            # No mcp_invoke import here, as in _BlobCaller: it would change the
            # floor's allocator state in the RSS child.
            self._session = _RawHttp(url, "legacy")

    def __enter__(self):
        self._session.__enter__()
        return self

    def __exit__(self, *exc):
        self._session.__exit__(*exc)

    def wait(self):
        return self._session.wait

    def __call__(self, size):
        if self.side == "client":
            return self._session.call_tool("big", {"size": size})
        return self._session.big(size)


def _sse_fetch(side, size, waits=None):
    """A task: one big call on a new server and session; its seconds (the call only)."""
    def task():
        with _FakeHttp("legacy", ("sse",)) as url, _SSECaller(side, url, size) as call:
            _check_big(call(1000), 1000)
            start = time.perf_counter()
            result = call(size)
            elapsed = time.perf_counter() - start
            if waits is not None:
                waits.append(call.wait())
        _check_big(result, size)
        return elapsed
    return task


def _check_big(result, size):
    text = result["content"][0]["text"]
    if len(text) != size or text.strip("x"):
        raise RuntimeError("big result has %d characters, not %d x's" % (len(text), size))


def _http_rss_child(side, size):
    """(peak RSS growth, peak RSS) in bytes of one big call, in a fresh interpreter."""
    with _FakeHttp("legacy", ("sse",)) as url:
        proc = subprocess.run([sys.executable, BENCH, "--http-rss", side, url, str(size)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError("HTTP RSS child (%s, %d bytes) failed: %s"
                           % (side, size, proc.stderr.decode("utf-8", "replace")[-500:]))
    growth, peak = proc.stdout.split()
    return int(growth), int(peak)


def http_rss_child(side, url, size):
    """In the child: print the peak RSS growth of one big call over the warmed-up
    baseline (as rss_child), and the peak RSS itself, in bytes."""
    with _SSECaller(side, url, size) as call:
        _check_big(call(1000), 1000)
        before = _peak_rss_bytes()
        _check_big(call(size), size)
        peak = _peak_rss_bytes()
    sys.stdout.write("%d %d\n" % (peak - before, peak))
    return 0


def bench_http_startup(counts, notes):
    """Cold ``tools --url`` against the minimal HTTP client, on a legacy and a modern server.

    As bench_startup: python -m from the bytecode cache against the minimal
    client run so too, and the script against the minimal client as a script
    plus compiling mcp_invoke.py (the compile floor less the import floor,
    from the same rounds). The servers run throughout.
    """
    _write_bytecode()
    module, script = PYTHON + ["-m", "mcp_invoke"], PYTHON + [LIBRARY]
    imports = "import " + ", ".join(VERSION_FLOOR)
    compiles = "%s; compile(open(%r, 'rb').read(), %r, 'exec')" % (imports, LIBRARY, LIBRARY)
    with _LeanHttp("legacy") as legacy, _LeanHttp("modern") as modern:
        names, tasks = ["imports", "compile", "bare"], [
            _run(PYTHON + ["-c", imports]), _run(PYTHON + ["-c", compiles]),
            _run(PYTHON + ["-c", "pass"])]
        for era, url in zip(HTTP_ERAS, (legacy, modern)):
            tools = ["tools", "--url", url]
            _check_http_tools(module + tools, _minimal_http_argv(era, url))
            names += [era, era + " script", era + " minimal", era + " minimal script"]
            tasks += [_run(module + tools), _run(script + tools),
                      _run(_minimal_http_argv(era, url)),
                      _run(_minimal_http_argv(era, url, script=True))]
        t = dict(zip(names, _interleaved(tasks, counts["process_runs"])))
    compiling = max(t["compile"] - t["imports"], 0.0)
    notes.append("HTTP cold: fastest of %d runs each; compiling mcp_invoke.py %.1f ms; "
                 "python -E -S -c pass %.1f ms; on the legacy server the CLI sends initialize "
                 "at once (the era remembered) and DELETEs the session at the end (a lone list "
                 "opens no GET stream); on the modern one it asks server/discover first, "
                 "where the floor sends tools/list alone" % (counts["process_runs"],
                                                             compiling * 1e3, t["bare"] * 1e3))
    rows = []
    for era in HTTP_ERAS:
        floor, script_floor = t[era + " minimal"], t[era + " minimal script"] + compiling
        rows += [
            _row("HTTP cold tools, %s, python -m (.pyc)" % era, _ms(t[era]), _ms(floor),
                 t[era] / floor, TARGETS["http_cold"]),
            _row("HTTP cold tools, %s, script, floor + compile" % era,
                 _ms(t[era + " script"]), _ms(script_floor),
                 t[era + " script"] / script_floor, TARGETS["http_cold"]),
        ]
    return rows


def _check_http_tools(cli, minimal):
    """Both list the same tools, one line each, the name first."""
    listed = []
    for argv in (cli, minimal):
        lines = _output(argv).decode("utf-8").splitlines()
        listed.append([re.match(r"\w*", line).group() for line in lines])
    if not listed[0] or listed[0] != listed[1]:
        raise RuntimeError("mcp_invoke listed the tools %r, the minimal HTTP client %r"
                           % tuple(listed))


def profile_calls(counts):
    """cProfile of sequential calls and one 10 MB call (stdio), and of sequential calls
    over HTTP: top functions by own time."""
    import cProfile
    import io
    import pstats

    import mcp_invoke
    reports = []
    with mcp_invoke.Client(_server_argv(), max_bytes=11 * MB) as client:
        _sequential(client, WARM_UP_CALLS)
        calls = counts["calls"] * counts["rounds"]
        for title, work in (("%d sequential call_tool" % calls,
                             lambda: _sequential(client, calls)),
                            ("one 10 MB call_tool", lambda: client.call_tool(
                                "blob", {"size": 10 * MB}))):
            profiler = cProfile.Profile()
            profiler.runcall(work)
            stream = io.StringIO()
            pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(14)
            reports.append("profile: %s\n%s" % (title, _trim_profile(stream.getvalue())))
    reports.append(_profile_http(counts))
    reports.extend(_profile_cold(counts))
    reports.append(_profile_tasks(counts))
    reports.append(_profile_search())
    return reports


def _profile_tasks(counts):
    """cProfile of tasks done at once (2025-11-25 form): where the call's time goes."""
    import cProfile
    import io
    import pstats

    import mcp_invoke
    calls = counts["task_calls"] * 5
    with mcp_invoke.Client(_task_server_argv("legacy")) as client:
        _task_calls(client, ECHO[1], 1)
        profiler = cProfile.Profile()
        profiler.runcall(lambda: _task_calls(client, ECHO[1], calls))
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(12)
    return ("profile: %d tasks done at once (pollInterval 0), 2025-11-25, by own time\n%s"
            % (calls, _trim_profile(stream.getvalue())))


def _profile_search():
    """cProfile of main() in one cold search of six cached servers, in a child (-m)."""
    work = tempfile.mkdtemp(prefix="bench_mcp_invoke.search.")
    try:
        env, search = _cached_search(work)
        argv = PYTHON + ["-c", _PROFILE_MAIN % 30] + search
        text = subprocess.run(argv, cwd=HERE, stdin=subprocess.DEVNULL, env=env,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE).stderr.decode("utf-8", "replace")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ("profile: one search of six cached servers, main() by cumulative time\n%s"
            % _trim_profile(text))


# A cold run's main() under cProfile, in a child started as the figures start
# theirs; mcp_invoke is imported first, so the profile is of main() alone.
_PROFILE_MAIN = """
import cProfile, io, pstats, sys
import mcp_invoke
profiler = cProfile.Profile()
profiler.runcall(mcp_invoke.main, sys.argv[1:])
stream = io.StringIO()
pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(%d)
sys.stderr.write(stream.getvalue())
"""


def _profile_cold(counts):
    """Where a cold ``tools`` run's start goes, over stdio and over HTTP (legacy):
    python -X importtime of the client and of its floor, each module's fastest
    of a few runs, the modules the client imports and the floor does not (and
    the total of those both import); and cProfile of main() in a child."""
    _write_bytecode()
    runs = max(3, counts["process_runs"] // 3)
    server = _server_argv()
    reports = []
    with _LeanHttp("legacy") as url:
        for label, cli, floor in (
                ("tools -- SERVER", PYTHON + ["-m", "mcp_invoke", "tools", "--"] + server,
                 _minimal_argv("tools") + server),
                ("tools --url URL", PYTHON + ["-m", "mcp_invoke", "tools", "--url", url],
                 _minimal_http_argv("legacy", url))):
            _output(cli)  # the era remembered, as in the figures
            imported = [_import_times(argv, runs) for argv in (cli, floor)]
            only = sorted(set(imported[0]) - set(imported[1]),
                          key=lambda name: -imported[0][name])
            both = [sum(times[name] for name in set(imported[0]) & set(imported[1]))
                    for times in imported]
            lines = ["%8.2f ms  %s" % (imported[0][name] / 1e3, name) for name in only[:16]]
            reports.append(
                "profile: cold %s, python -X importtime, fastest of %d runs: the client's "
                "imports %.1f ms (the floor's %.1f ms); of the modules both import, the "
                "client %.1f ms and the floor %.1f ms; the client alone imports %d modules, "
                "%.1f ms, the largest by own time:\n%s"
                % (label, runs, sum(imported[0].values()) / 1e3,
                   sum(imported[1].values()) / 1e3, both[0] / 1e3, both[1] / 1e3, len(only),
                   sum(imported[0][name] for name in only) / 1e3, "\n".join(lines)))
            argv = PYTHON + ["-c", _PROFILE_MAIN % 22] + cli[len(PYTHON) + 2:]
            text = subprocess.run(argv, cwd=HERE, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE).stderr.decode("utf-8", "replace")
            reports.append("profile: one cold %s, main() by cumulative time, the calling "
                           "thread\n%s" % (label, _trim_profile(text)))
    return reports


def _import_times(argv, runs):
    """{module: its own import time in microseconds, the fastest of ``runs``}."""
    fastest = {}
    argv = argv[:len(PYTHON)] + ["-X", "importtime"] + argv[len(PYTHON):]
    for _ in range(runs):
        with open(os.devnull, "rb") as source:
            proc = subprocess.run(argv, cwd=_home(argv), stdin=source,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for line in proc.stderr.decode("utf-8", "replace").splitlines():
            fields = line.split("|")
            if len(fields) == 3 and line.startswith("import time:") and fields[0][12:].strip(
                    ).isdigit():
                name, own = fields[2].strip(), int(fields[0][12:])
                fastest[name] = min(own, fastest.get(name, own))
    return fastest


def _profile_http(counts):
    """cProfile of sequential calls on an open Client(url=...), legacy era, in the
    calling thread and in the client's threads (each of which has a profiler of
    its own from its start before 3.12; from 3.12 one profiler sees every thread).
    The session's start is in the threads' part; the times of all threads add up,
    their waits (the caller for its answer, a worker for the server) included."""
    import cProfile
    import io
    import pstats
    import threading

    import mcp_invoke
    calls = counts["calls"] * counts["rounds"]
    profilers = []

    def per_thread(*_):  # a new thread's first event: profile it from here on
        sys.setprofile(None)
        profiler = cProfile.Profile()
        profilers.append(profiler)
        profiler.enable()

    with _LeanHttp("legacy") as url:
        if sys.version_info < (3, 12):
            threading.setprofile(per_thread)
        try:
            with mcp_invoke.Client(url=url) as client:
                profiler = cProfile.Profile()
                profiler.runcall(lambda: _sequential(client, calls))
        finally:
            threading.setprofile(None)
    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream)
    for other in profilers:
        stats.add(other)
    stats.sort_stats("tottime").print_stats(18)
    return ("profile: %d sequential call_tool over HTTP, legacy era, every thread\n%s"
            % (calls, _trim_profile(stream.getvalue())))


def _trim_profile(text):
    # Drop pstats' preamble up to the column header; keep the rows.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("ncalls"):
            return "\n".join(lines[i:]).rstrip()
    return text.rstrip()


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

_COLUMNS = ("figure", "measured", "floor", "ratio", "target", "")


def _cells(row):
    ratio = "%.2f%s" % (row["ratio"], row["unit"])
    if row["target"] is None:
        return [row["name"], row["measured"], row["floor"], ratio, "-", "-"]
    op, value = row["target"]
    shown = round(row["ratio"], 2)  # judged as printed: 2.004x meets "<= 2.00x"
    if op == "in":  # a range, both ends included
        met, target = value[0] <= shown <= value[1], "in %.2f-%.2f%s" % (value + (row["unit"],))
    else:
        met = shown <= value if op == "<=" else shown >= value
        target = "%s %.2f%s" % (op, value, row["unit"])
    return [row["name"], row["measured"], row["floor"], ratio, target, "ok" if met else "MISS"]


def format_table(rows):
    """The rows as aligned text, a header line first."""
    table = [list(_COLUMNS)] + [_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
                     for line in table)


def bench_session(counts, notes):
    """A ``call`` through a keep-alive session, as a whole process (.pyc): against
    a cold ``call`` of the same tool, and against what it cannot do without,
    starting Python as the call starts it (``python -m`` of a module doing
    nothing) and one call on an open Client."""
    import mcp_invoke
    _write_bytecode()
    runtime = tempfile.mkdtemp(prefix="mib", dir="/tmp")  # short: a socket path
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, XDG_STATE_HOME=runtime,
               XDG_CACHE_HOME=runtime)
    module = PYTHON + ["-m", "mcp_invoke"]
    call = ["call", ECHO[0], "text=%s" % ECHO[1]["text"]]
    try:
        _output(module + ["session", "start", "bench", "--"] + _server_argv(), env=env)
        through, cold = module + ["--session", "bench"] + call, module + call + ["--"]
        for argv in (through, cold + _server_argv()):
            if _output(argv, env=env) != b"hi\n":
                raise RuntimeError("%s did not print the echo" % _show_argv(argv))
        with mcp_invoke.Client(_server_argv()) as client:
            _sequential(client, WARM_UP_CALLS)
            library = _median([_sequential(client, 20) / 20 for _ in range(counts["rounds"])])
        t = _interleaved((_run(through, env=env), _run(cold + _server_argv(), env=env),
                          _run(PYTHON + ["-m", "import_floor"])), counts["process_runs"])
    finally:
        subprocess.run(module + ["session", "stop", "--all"], env=env, cwd=HERE,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(runtime, ignore_errors=True)
    floor = t[2] + library
    notes.append("sessions: fastest of %d runs each; the session call lists the tools, then "
                 "calls (no tool-list cache through a session); library call %.0f us"
                 % (counts["process_runs"], library * 1e6))
    return [
        _row("call via --session, vs cold call", _ms(t[0]), _ms(t[1]), t[0] / t[1],
             TARGETS["session_cold"]),
        _row("call via --session, vs -m (nothing) + call", _ms(t[0]), _ms(floor), t[0] / floor,
             TARGETS["session_floor"]),
    ]


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Figures: skills a server publishes, fetched verified and listed
# ---------------------------------------------------------------------------

SKILL_FILES, SKILL_BYTES, SKILL_COUNT = 200, 16 * MB, 1000


def bench_skills(counts, notes):
    """``skills get bulk --out DIR`` of a skill of 200 files and 16 MiB, as a
    whole process, against the minimal client reading and hashing the same
    files (time); its peak RSS growth over ``skills get bulk`` (SKILL.md
    alone), against the largest file and two messages; and ``skills`` of
    1,000 skills over 10 pages against ``resources`` of 1,000 (time). The
    server is bench/stdio_server.py, every answer made before it is asked."""
    _write_bytecode()
    server = _server_argv() + ["--bulk", str(SKILL_FILES), str(SKILL_BYTES)]
    catalog = _server_argv() + ["--skills", str(SKILL_COUNT)]
    cli = PYTHON + ["-m", "mcp_invoke"]
    workdir = tempfile.mkdtemp(prefix="bench_mcp_invoke.")
    try:
        out = os.path.join(workdir, "skills")
        argvs = [cli + ["skills", "get", "bulk", "--out", out, "--"] + server,
                 _minimal_argv("skill", "skill://bulk/SKILL.md") + server,
                 cli + ["skills", "get", "bulk", "--"] + server,
                 cli + ["skills", "--"] + catalog, cli + ["resources", "--"] + catalog]
        outputs = [os.path.join(workdir, "out%d" % n) for n in range(len(argvs))]
        for argv, output in zip(argvs, outputs):  # the warm-up round, and the check
            _peak_run(argv, output)
        _check_skills(out, outputs)
        (fetch, fetch_peak), (floor, _), (_, alone_peak), (listed, _), (resources, _) = \
            _peak_runs(argvs, outputs, counts["cli_runs"])
    finally:
        shutil.rmtree(workdir)
    largest = (SKILL_BYTES - 44) // (SKILL_FILES - 1)  # a part; SKILL.md is smaller
    message = largest + 1024  # a resources/read answer of the largest file, JSON around it
    bound = largest + 2 * message
    notes.append("skills: a %d-file, %d MiB skill and a %d-skill catalog; fastest of %d runs "
                 "each; peak RSS of skills get --out %.1f MB, of skills get (SKILL.md) %.1f MB"
                 % (SKILL_FILES, SKILL_BYTES // MB, SKILL_COUNT, counts["cli_runs"],
                    fetch_peak / float(MB), alone_peak / float(MB)))
    return [
        _row("skills get --out %d files, %d MiB, time" % (SKILL_FILES, SKILL_BYTES // MB),
             _ms(fetch), _ms(floor), fetch / floor, TARGETS["skill_fetch"]),
        _row("skills get --out, peak RSS growth", "%.1f MB" % ((fetch_peak - alone_peak) / MB),
             "%.1f MB" % (bound / float(MB)), (fetch_peak - alone_peak) / float(bound),
             TARGETS["skill_rss"]),
        _row("skills of %d skills vs resources" % SKILL_COUNT, _ms(listed), _ms(resources),
             listed / resources, TARGETS["skills_list"]),
    ]


def _check_skills(out, outputs):
    """Every file of the skill written, and the listings as long as each other."""
    written = sum(len(names) for _, _, names in os.walk(out))
    if written != SKILL_FILES:
        raise RuntimeError("skills get --out wrote %d files of %d" % (written, SKILL_FILES))
    with open(outputs[3]) as skills, open(outputs[4]) as resources:
        lines = (len(skills.read().splitlines()), len(resources.read().splitlines()))
    if lines != (2 * SKILL_COUNT, SKILL_COUNT):
        raise RuntimeError("skills printed %d lines, resources %d" % lines)


FIGURES = (
    ("startup", bench_startup),
    ("CLI batch", bench_cli_batch),
    ("CLI large call", bench_cli_large),
    ("calls", bench_calls),
    ("instructions", bench_instructions),
    ("large results", bench_large),
    ("probe", bench_probe),
    ("HTTP calls", bench_http_calls),
    ("HTTP event stream", bench_http_sse),
    ("HTTP startup", bench_http_startup),
    ("process instructions", bench_process_instructions),
    ("sessions", bench_session),
    ("agents", bench_agents),
    ("search", bench_search),
    ("tasks", bench_tasks),
    ("skills", bench_skills),
)


def _describe_run(quick):
    import platform

    import mcp_invoke
    return ("mcp_invoke %s on %s %s, %s, %d CPUs; %s"
            % (mcp_invoke.__version__, platform.python_implementation(),
               platform.python_version(), platform.system(), os.cpu_count() or 1,
               "quick run (smaller counts and sizes)" if quick else "full run"))


def _figure_key(title):
    """A figure's name for --only: its title, lower case, hyphens for spaces."""
    return title.lower().replace(" ", "-")


def run(quick=False, profile=False, only=None):
    """Measure every figure (``only``: those of these names) and print the
    table (and profiles); returns 0."""
    counts = QUICK if quick else FULL
    figures = [(title, figure) for title, figure in FIGURES
               if only is None or _figure_key(title) in only]
    started = time.perf_counter()
    rows, notes = [], []
    if quick:
        notes.append("quick run: %d MB CLI call, %d batch lines, library results of %s, "
                     "fewer runs and rounds, no callgrind"
                     % (counts["cli_size"] // MB, counts["batch_lines"],
                        " and ".join("%d MB" % (size // MB) for size, _ in counts["sizes"])))
    # The era cache the command line keeps, a fresh one for this run, so each
    # server is probed once (the check before its figure) and remembered after,
    # whatever runs did before; no other cache is read or written.
    source = os.stat(LIBRARY).st_mtime
    cache, saved = tempfile.mkdtemp(prefix="bench_mcp_invoke."), os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = cache
    try:
        for title, figure in figures:
            sys.stderr.write("bench: %s ...\n" % title)
            sys.stderr.flush()
            rows.extend(figure(counts, notes))
        reports = profile_calls(counts) if profile else []
    finally:
        if saved is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = saved
        shutil.rmtree(cache, ignore_errors=True)
    if os.stat(LIBRARY).st_mtime != source:
        notes.append("mcp_invoke.py changed during this run: its figures mix versions, and a "
                     "run that compiled it may be among them")
    notes.append("total %.1f s" % (time.perf_counter() - started))
    print(_describe_run(quick))
    print(format_table(rows))
    for note in notes:
        print("  " + note)
    for report in reports:
        print("\n" + report)
    return 0


def main(argv=None):
    """``--rss``, ``--calls``, ``--peak`` and ``--http-rss`` are the bench's
    own children."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--rss"] and len(argv) == 3:
        return rss_child(argv[1], int(argv[2]))
    if argv[:1] == ["--calls"] and len(argv) == 3:
        return calls_child(argv[1], int(argv[2]))
    if argv[:1] == ["--peak"] and len(argv) > 3 and argv[2] == "--":
        return peak_child(argv[1], argv[3:])
    if argv[:1] == ["--http-rss"] and len(argv) == 4:
        return http_rss_child(argv[1], argv[2], int(argv[3]))
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    only = None
    if "--only" in argv[:-1]:
        at = argv.index("--only")
        only = set(name.strip().lower() for name in argv[at + 1].split(",") if name.strip())
        argv = argv[:at] + argv[at + 2:]
        names = set(_figure_key(title) for title, _ in FIGURES)
        if not only or not only <= names:
            sys.stderr.write("bench_mcp_invoke: --only takes figures among %s\n"
                             % ",".join(_figure_key(title) for title, _ in FIGURES))
            return 2
    unknown = [a for a in argv if a not in ("--quick", "--profile")]
    if unknown:
        sys.stderr.write("bench_mcp_invoke: unknown argument %s (see --help)\n" % unknown[0])
        return 2
    return run(quick="--quick" in argv, profile="--profile" in argv, only=only)


if __name__ == "__main__":
    sys.exit(main())
