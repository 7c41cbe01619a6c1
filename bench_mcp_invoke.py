#!/usr/bin/env python3
# bench_mcp_invoke: what mcp_invoke.py costs, against floors measured in the same run. MIT License.
"""Benchmark mcp_invoke.py against floors measured in the same run.

Every figure is a ratio: what mcp_invoke costs, over what the same work costs
without it on this machine, in this run (a bare interpreter, raw pipes, plain
os.read and json.loads). No absolute time is asserted anywhere.

Usage::

    python3 bench_mcp_invoke.py             # the full run, well under two minutes
    python3 bench_mcp_invoke.py --quick     # smaller counts, 10 MB only
    python3 bench_mcp_invoke.py --profile   # also cProfile the sequential and 10 MB calls
    python3 bench_mcp_invoke.py --serve     # the MCP echo server the bench talks to
    python3 bench_mcp_invoke.py --rss client|floor N   # one peak-RSS child, in bytes
    python3 bench_mcp_invoke.py --calls client|floor N # one session of N calls (callgrind)

Figures (after a warm-up, measured and floor runs interleaved; whole runs and
large results are the fastest of their runs, calls the median of their rounds):

    cold start    ``mcp_invoke.py tools -- <this server>`` as a whole process,
                  against ``python -c pass`` plus the server's own start
                  (spawn, initialize over a raw pipe, close stdin, wait).
    sequential    microseconds per ``Client.call_tool("echo", ...)`` in one
                  session, against a raw ping-pong over pipes with the same
                  server: os.write of a json.dumps frame, readline, json.loads.
                  Where the OS allows, the CPUs are set, not left to the
                  scheduler: the servers on one CPU and the bench on another,
                  then all on one CPU, which shows each side's CPU cost best.
    CPU           instructions per sequential call, counted by callgrind in the
                  calling process (client or floor), when valgrind is on PATH;
                  full run only. Steady where time is not: the same code gives
                  the same count on a loaded or virtual machine.
    pipelined     microseconds per call through ``Client.batch``, against the
                  same sequential floor.
    large result  MB/s of ``call_tool("blob", {"size": N})`` for 10 and 100 MB,
                  against os.read in a loop and json.loads of the joined bytes,
                  taken in turn in one process; and the peak RSS growth of one
                  such call over a warmed-up baseline, each side in a fresh
                  child process, as a multiple of the payload.
    --version     ``mcp_invoke.py --version`` against importing the standard
                  modules mcp_invoke.py imports; again against that floor plus
                  compiling mcp_invoke.py, which Python does for a script on
                  every run; and ``python -m mcp_invoke --version``, which
                  loads the bytecode cache.

Output: one table row per figure with the measured value, the floor, their
ratio, the target and ok/MISS (the ratio judged as printed, to two decimals).
Targets are informational; the exit status is 0 unless the bench itself fails.
Standard library only; CPython 3.6 or newer; POSIX.
"""

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

BENCH = os.path.abspath(__file__)
LIBRARY = os.path.join(os.path.dirname(BENCH), "mcp_invoke.py")

MB = 1000 * 1000

# Counts for a full run and for --quick.
# Calls go in many short rounds: a median over many rounds shrugs off the
# bursts of a busy or virtual machine. Sizes come with how often each is timed.
FULL = {"process_runs": 10, "version_runs": 15, "calls": 200, "rounds": 25,
        "sizes": ((10 * MB, 15), (100 * MB, 5)), "instruction_calls": (50, 550)}
QUICK = {"process_runs": 5, "version_runs": 7, "calls": 100, "rounds": 10,
         "sizes": ((10 * MB, 9),), "instruction_calls": None}

# Calls made before any timing, so caches, allocators and the CPU clock settle.
WARM_UP_CALLS = 200

# Targets from the issue: (comparison, value); None means reported only.
TARGETS = {
    "sequential": ("<=", 1.05),
    "throughput": (">=", 0.85),
    "rss": ("<=", 2.0),
    "version": ("<=", 1.05),
}

# The handshake-era revisions the server echoes back; anything else gets the latest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

# The library's os.read size, so the large-result floor reads the same way.
READ_SIZE = 64 * 1024

TOOLS = [
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "blob", "description": "Return a text block of the given size.",
     "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}},
                     "required": ["size"]}},
]

ECHO = ("echo", {"text": "hi"})


# ---------------------------------------------------------------------------
# The server: a fast stdio MCP echo server, run as `bench_mcp_invoke.py --serve`
# ---------------------------------------------------------------------------

def serve():
    """Answer requests on stdin, one line each, in order, until stdin ends."""
    read = sys.stdin.buffer.readline
    # A buffered writer of our own: under PYTHONUNBUFFERED sys.stdout.buffer is
    # a raw FileIO, whose write may stop short.
    out = open(sys.stdout.fileno(), "wb", closefd=False)
    blobs = {}
    while True:
        line = read()
        if not line:
            return 0
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue  # notifications/* need no answer
        for part in _reply(message, blobs):
            out.write(part)
        out.flush()


def _reply(message, blobs):
    """The answer to one request, as a list of byte strings to write in turn."""
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode("ascii")
    method = message.get("method")
    params = message.get("params") or {}
    arguments = params.get("arguments") or {}
    if method == "tools/call" and params.get("name") == "blob":
        # The payload is built once per size and written as is: no copy per call.
        size = int(arguments.get("size", 0))
        if size not in blobs:
            blobs[size] = b"x" * size
        return [head + b',"result":{"content":[{"type":"text","text":"',
                blobs[size], b'"}]}}\n']
    result = _result(method, params, arguments)
    if result is None:
        body = {"code": -32601, "message": "Method not found: %s" % method}
        return [head + b',"error":' + _dumps(body) + b"}\n"]
    return [head + b',"result":' + _dumps(result) + b"}\n"]


def _result(method, params, arguments):
    if method == "initialize":
        version = params.get("protocolVersion")
        return {"protocolVersion": version if version in PROTOCOL_VERSIONS
                else PROTOCOL_VERSIONS[-1],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench-echo", "version": "1.0"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and params.get("name") == "echo":
        return {"content": [{"type": "text", "text": arguments.get("text", "")}]}
    return None


def _dumps(value):
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def _server_argv():
    return [sys.executable, BENCH, "--serve"]


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
    return {"protocolVersion": PROTOCOL_VERSIONS[-1], "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1.0"}}


class _RawSession(object):
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

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()

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


def _run(argv, cwd=None):
    """A task that runs ``argv`` to completion and fails loudly if it fails."""
    def task():
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, cwd=cwd)
        if proc.returncode != 0:
            raise RuntimeError("%s exited with %d: %s"
                               % (" ".join(argv), proc.returncode,
                                  proc.stderr.decode("utf-8", "replace")[-500:]))
    return task


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
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux and BSD: KiB


def _row(name, measured, floor, ratio, target=None, unit="x"):
    return {"name": name, "measured": measured, "floor": floor, "ratio": ratio,
            "target": target, "unit": unit}


# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------

def bench_cold_start(counts, notes):
    """The CLI as a whole process, against an interpreter start plus the server's start."""
    env = _server_env()

    def server_start():
        with _RawSession(env) as raw:
            raw.send("initialize", _initialize_params())
            raw.readline()

    tools = _run([sys.executable, LIBRARY, "tools", "--"] + _server_argv())
    bare = _run([sys.executable, "-c", "pass"])
    measured, interpreter, server = _interleaved([tools, bare, server_start],
                                                 counts["process_runs"])
    floor = interpreter + server
    notes.append("cold start floor = %.1f ms python -c pass + %.1f ms server start"
                 % (interpreter * 1e3, server * 1e3))
    return [_row("cold start: mcp_invoke tools", "%.1f ms" % (measured * 1e3),
                 "%.1f ms" % (floor * 1e3), measured / floor)]


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
    proc = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           sys.executable, BENCH, "--calls", side, str(calls)],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    found = re.search(rb"Collected\s*:\s*(\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        raise RuntimeError("callgrind run failed: %s"
                           % proc.stderr.decode("utf-8", "replace")[-500:])
    return int(found.group(1))


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
                         "%.0f MB/s" % floor_rate, rate / floor_rate, TARGETS["throughput"]))
        rows.append(_row("large %s: peak RSS growth" % label, "%.1f MB" % (growth / MB),
                         "%.1f MB" % (floor_growth / MB), growth / float(size),
                         TARGETS["rss"], unit="x payload"))
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
    per session, against a session pinned to 2025-11-25 (no probe).
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
    cli = [sys.executable, LIBRARY, "tools"]
    cli_probed, cli_pinned = _interleaved(
        [_run(cli + ["--"] + server),
         _run(cli + ["--protocol-version", "2025-11-25", "--"] + server)],
        counts["process_runs"])
    notes.append("probe: %.2f ms more per session (%.2f ms more per CLI run)"
                 % ((probed - pinned) * 1e3, (cli_probed - cli_pinned) * 1e3))
    return [_row("probe, legacy server: session", "%.1f ms" % (probed * 1e3),
                 "%.1f ms" % (pinned * 1e3), probed / pinned),
            _row("probe, legacy server: CLI tools", "%.1f ms" % (cli_probed * 1e3),
                 "%.1f ms" % (cli_pinned * 1e3), cli_probed / cli_pinned)]


def bench_version(counts, notes):
    """``mcp_invoke.py --version`` against importing what mcp_invoke.py imports."""
    modules = _library_imports()
    importer = _run([sys.executable, "-c", "import " + ", ".join(modules)])
    version = _run([sys.executable, LIBRARY, "--version"])
    # The same through -m, from the bytecode cache (a script is always
    # compiled); the cache is written here, as PYTHONDONTWRITEBYTECODE may be set.
    import py_compile
    py_compile.compile(LIBRARY, doraise=True)
    imported = _run([sys.executable, "-m", "mcp_invoke", "--version"],
                    cwd=os.path.dirname(LIBRARY))
    # Python compiles a script on every run, before its first line runs; no
    # code in the file can skip that. The second row's floor compiles it too.
    compiler = _run([sys.executable, "-c", "import %s; compile(open(%r, 'rb').read(), %r, "
                     "'exec')" % (", ".join(modules), LIBRARY, LIBRARY)])
    measured, cached, floor, compiled = _interleaved([version, imported, importer, compiler],
                                                     counts["version_runs"])
    notes.append("--version floor imports %s" % ", ".join(modules))
    return [_row("--version as a script", "%.1f ms" % (measured * 1e3),
                 "%.1f ms" % (floor * 1e3), measured / floor, TARGETS["version"]),
            _row("--version as a script, floor + compile", "%.1f ms" % (measured * 1e3),
                 "%.1f ms" % (compiled * 1e3), measured / compiled),
            _row("--version as python -m (.pyc)", "%.1f ms" % (cached * 1e3),
                 "%.1f ms" % (floor * 1e3), cached / floor, TARGETS["version"])]


def _library_imports():
    """The modules mcp_invoke.py imports at its top level, read from its source."""
    with open(LIBRARY) as f:
        source = f.read()
    names = re.findall(r"^(?:import|from) ([\w.]+)", source, re.M)
    return sorted(set(names) - {"__future__"})


def profile_calls(counts):
    """cProfile of sequential calls and one 10 MB call, top functions by own time."""
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
    return reports


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
    met = shown <= value if op == "<=" else shown >= value
    return [row["name"], row["measured"], row["floor"], ratio,
            "%s %.2f%s" % (op, value, row["unit"]), "ok" if met else "MISS"]


def format_table(rows):
    """The rows as aligned text, a header line first."""
    table = [list(_COLUMNS)] + [_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
                     for line in table)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

FIGURES = (
    ("cold start", bench_cold_start),
    ("calls", bench_calls),
    ("instructions", bench_instructions),
    ("large results", bench_large),
    ("probe", bench_probe),
    ("--version", bench_version),
)


def _describe_run(quick):
    import platform

    import mcp_invoke
    return ("mcp_invoke %s on %s %s, %s, %d CPUs; %s run"
            % (mcp_invoke.__version__, platform.python_implementation(),
               platform.python_version(), platform.system(), os.cpu_count() or 1,
               "quick" if quick else "full"))


def run(quick=False, profile=False):
    """Measure every figure and print the table (and profiles); returns 0."""
    counts = QUICK if quick else FULL
    started = time.perf_counter()
    rows, notes = [], []
    for title, figure in FIGURES:
        sys.stderr.write("bench: %s ...\n" % title)
        sys.stderr.flush()
        rows.extend(figure(counts, notes))
    reports = profile_calls(counts) if profile else []
    notes.append("total %.1f s" % (time.perf_counter() - started))
    print(_describe_run(quick))
    print(format_table(rows))
    for note in notes:
        print("  " + note)
    for report in reports:
        print("\n" + report)
    return 0


def main(argv=None):
    """``--serve`` and ``--rss`` are the bench's own children; the rest is the bench."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--serve"]:
        return serve()
    if argv[:1] == ["--rss"] and len(argv) == 3:
        return rss_child(argv[1], int(argv[2]))
    if argv[:1] == ["--calls"] and len(argv) == 3:
        return calls_child(argv[1], int(argv[2]))
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    unknown = [a for a in argv if a not in ("--quick", "--profile")]
    if unknown:
        sys.stderr.write("bench_mcp_invoke: unknown argument %s (see --help)\n" % unknown[0])
        return 2
    return run(quick="--quick" in argv, profile="--profile" in argv)


if __name__ == "__main__":
    sys.exit(main())
