#!/usr/bin/env python3
"""A stdio MCP server that misbehaves on request, for testing mcp_invoke.

The server speaks JSON-RPC 2.0 over stdin/stdout, one message per line, and
implements the handshake-era protocol (2024-11-05 to 2025-11-25): initialize,
ping, logging/setLevel, tools, resources and prompts.  Requests are handled
strictly one after another, in arrival order.  Each ``--mode`` switches on one
misbehaviour and leaves everything else normal.  Standard library only; runs
on CPython 3.6 and later.

Usage::

    python3 fake_server.py [--mode MODE]... [--record FILE] [--pidfile FILE]
                           [--size N] [--delay SECONDS]

    --mode MODE      switch on a misbehaviour; repeatable, or comma-separated
    --record FILE    append every line read from stdin to FILE, and the line
                     {"signal":"SIGTERM"} when SIGTERM arrives
    --pidfile FILE   where the grandchild mode writes its grandchild's pid
    --size N         bytes for flood-stderr (default 1 MiB) and
                     write-before-read (default 2 MiB)
    --delay SECONDS  how long the late mode sleeps (default 1.0)

Tools: echo, add, web_search, slow, image, fail, weather, types, big, log,
control, env.  Resources: fake://item/1 .. fake://item/5 (listed 2 per page) and
fake://blob.  Prompt: greet.

Modes:

    hang-init          never answer initialize
    hang-call          never answer tools/call
    ignore-sigterm     ignore SIGTERM and stay alive after stdin EOF
    no-exit-on-eof     stay alive after stdin EOF (SIGTERM still ends it)
    grandchild         start a sleeping grandchild, write its pid to --pidfile
    flood-stderr       write --size bytes to stderr before each answer
    banner             print three non-JSON lines to stdout at startup
    invalid-utf8       answer tools/call with a raw 0xff byte in the text
    bytewise           write every message one byte at a time
    crash-call         on tools/call, print an error to stderr and exit 3
    close-stdout       on tools/call, close stdout and wait to be signalled
    write-before-read  write --size bytes of log notifications before reading
    server-requests    on tools/call, first send five requests to the client
    wrong-version      answer initialize with protocolVersion 1999-01-01
    error-init         answer initialize with a JSON-RPC error
    exit-early         print an error to stderr and exit 1 before reading
    paginate           list tools 2 per page
    cursor-cycle       list tools with a nextCursor that never ends
    late               sleep --delay seconds before answering tools/call
    stray              send an unknown-id response and a notification first
    bad-frame          answer tools/call with neither result nor error
    huge-stderr-line   write one 300000-byte stderr line with no newline

Exit status: 0 on stdin EOF, 143 on SIGTERM, 3 in crash-call, 1 in exit-early,
2 on a bad command line.
"""

import argparse
import base64
import collections
import json
import os
import signal
import subprocess
import sys
import time

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

# The handshake-era versions; anything else is answered with the latest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"

MODES = (
    "hang-init", "hang-call", "ignore-sigterm", "no-exit-on-eof", "grandchild",
    "flood-stderr", "banner", "invalid-utf8", "bytewise", "crash-call",
    "close-stdout", "write-before-read", "server-requests", "wrong-version",
    "error-init", "exit-early", "paginate", "cursor-cycle", "late", "stray",
    "bad-frame", "huge-stderr-line",
)

# Default --size per mode: enough to overflow a 64 KiB pipe many times over.
DEFAULT_SIZES = {"flood-stderr": 1048576, "write-before-read": 2097152}

# RFC 5424 severities, lowest first, as logging/setLevel names them.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical",
              "alert", "emergency")

# A valid 1x1 RGBA PNG.
PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDw"
           "AChwGA60e6kgAAAABJRU5ErkJggg==")

PAGE_SIZE = 2
ITEM_COUNT = 5

# JSON-RPC error codes (JSON-RPC 2.0 section 5.1; -32002 from MCP resources).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

# Returned by a handler that answers by itself, or not at all.
_NO_REPLY = object()


class _RpcError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------
# Catalogue: tools, resources, prompts
# ---------------------------------------------------------------------------

def _tool(name, description, properties, required=(), **extra):
    """Build one tools/list entry."""
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    tool = {"name": name, "description": description, "inputSchema": schema}
    tool.update(extra)
    return tool


def _tools():
    """Every tool, in the order tools/list returns them."""
    string, integer = {"type": "string"}, {"type": "integer"}
    weather_out = {
        "type": "object",
        "properties": {"temperature": {"type": "number"},
                       "conditions": {"type": "string"}},
        "required": ["temperature", "conditions"],
    }
    types = {
        "count": integer, "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": string},
        "opts": {"type": "object"}, "zip": string, "nothing": {"type": "null"},
        "either": {"type": ["integer", "string"]},
    }
    return [
        _tool("echo", "Echo the text back.\nSecond line of the description.",
              {"text": string}, ["text"]),
        _tool("add", "Add two integers.", {"a": integer, "b": integer},
              ["a", "b"]),
        _tool("web_search", "Search the web (canned results).",
              {"query": string}, ["query"]),
        _tool("slow", "Count steps slowly, reporting progress.",
              {"steps": {"type": "integer", "default": 3},
               "delay": {"type": "number", "default": 0.05}}),
        _tool("image", "Return one block of each media kind.", {}),
        _tool("fail", "Always fail with a tool error.", {}),
        _tool("weather", "Report the weather for a city.", {"city": string},
              ["city"], outputSchema=weather_out),
        _tool("types", "Echo the arguments back as sorted JSON.", types),
        _tool("big", "Return a text of the given size.",
              {"size": {"type": "integer", "default": 1000}}),
        _tool("log", "Send two log messages.", {}),
        _tool("control", "Return text with terminal control characters.", {}),
        _tool("env", "Return the server's environment and working directory.", {}),
    ]


def _resources():
    """The listed resources, fake://item/1 to fake://item/5."""
    return [{"uri": "fake://item/%d" % n, "name": "item-%d" % n,
             "mimeType": "text/plain", "description": "Item number %d" % n}
            for n in range(1, ITEM_COUNT + 1)]


def _prompts():
    """The one prompt, greet."""
    return [{
        "name": "greet",
        "description": "Greet someone.",
        "arguments": [
            {"name": "name", "description": "Who to greet", "required": True},
            {"name": "style", "description": "formal or casual",
             "required": False},
        ],
    }]


def _paginate(items, key, cursor, per_page=PAGE_SIZE):
    """One page of items; the cursor is the next start index as a string."""
    start = 0
    if cursor is not None:
        try:
            start = int(cursor) if isinstance(cursor, str) else -1
        except ValueError:
            start = -1
        if not 0 <= start < len(items):
            raise _RpcError(INVALID_PARAMS, "Invalid cursor: %r" % (cursor,))
    result = {key: items[start:start + per_page]}
    if start + per_page < len(items):
        result["nextCursor"] = str(start + per_page)
    return result


def _text(text, **extra):
    """A tool result holding one text block."""
    result = {"content": [{"type": "text", "text": text}]}
    result.update(extra)
    return result


_JSON_TYPES = {
    "string": (str,), "integer": (int,), "number": (int, float),
    "boolean": (bool,), "array": (list,), "object": (dict,),
    "null": (type(None),),
}


def _argument_problem(schema, arguments):
    """Say what is wrong with the arguments, or return None."""
    for name in schema.get("required", ()):
        if name not in arguments:
            return "missing required argument %r" % name
    for name, value in sorted(arguments.items()):
        wanted = schema["properties"].get(name, {}).get("type")
        if wanted is None:
            continue
        names = wanted if isinstance(wanted, list) else [wanted]
        # bool is an int subclass, but JSON keeps true apart from 1.
        if not any(isinstance(value, _JSON_TYPES[t]) and
                   (t == "boolean" or not isinstance(value, bool))
                   for t in names):
            return "argument %r must be %s" % (name, " or ".join(names))
    return None


# ---------------------------------------------------------------------------
# Server: wire, dispatch and the standard methods
# ---------------------------------------------------------------------------

class _Server(object):
    """One stdio MCP server, shaped by its modes."""

    def __init__(self, options):
        self.modes = frozenset(options.modes)
        self.record = options.record
        self.pidfile = options.pidfile
        self.size = options.size
        self.delay = options.delay
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer
        self.log_level = "debug"
        self.pending = collections.deque()  # messages read while waiting

    # -- writing --------------------------------------------------------

    def write_line(self, line):
        """Write one raw line (bytes, without newline) to stdout."""
        data = line + b"\n"
        try:
            if "bytewise" in self.modes:
                for i in range(len(data)):
                    self.stdout.write(data[i:i + 1])
                    self.stdout.flush()
            else:
                self.stdout.write(data)
                self.stdout.flush()
        except BrokenPipeError:
            _quit_quietly()

    def send(self, message):
        """Write one JSON-RPC message as compact JSON."""
        self.write_line(_encode(message))

    def send_response_line(self, line):
        """Write one encoded response, after the stray frames if asked."""
        if "stray" in self.modes:
            self.send({"jsonrpc": "2.0", "id": 99999, "result": {}})
            self.send({"jsonrpc": "2.0", "method": "notifications/unknown",
                       "params": {}})
        self.write_line(line)

    def reply(self, request_id, result):
        self.send_response_line(
            _encode({"jsonrpc": "2.0", "id": request_id, "result": result}))

    def reply_error(self, request_id, code, message):
        error = {"code": code, "message": message}
        self.send_response_line(
            _encode({"jsonrpc": "2.0", "id": request_id, "error": error}))

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def log(self, level, data, logger=None):
        """Send notifications/message if the level passes logging/setLevel."""
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return
        params = {"level": level}
        if logger is not None:
            params["logger"] = logger
        params["data"] = data
        self.notify("notifications/message", params)

    # -- reading --------------------------------------------------------

    def read_stdin_message(self):
        """The next JSON object from stdin, or None at EOF."""
        while True:
            line = self.stdin.readline()
            if not line:
                return None
            if self.record:
                _append(self.record, line if line.endswith(b"\n")
                        else line + b"\n")
            if not line.strip():
                continue
            try:
                message = json.loads(line.decode("utf-8"))
            except ValueError:
                self.reply_error(None, PARSE_ERROR, "Parse error")
                continue
            if isinstance(message, dict):
                return message
            self.reply_error(None, INVALID_REQUEST, "Invalid Request")

    def next_message(self):
        """The next message to handle: queued ones first, then stdin."""
        if self.pending:
            return self.pending.popleft()
        return self.read_stdin_message()

    def at_eof(self):
        """Stdin is closed: exit, unless a mode says to linger."""
        if self.modes & {"ignore-sigterm", "no-exit-on-eof"}:
            _sleep_forever()
        sys.exit(0)

    # -- dispatch -------------------------------------------------------

    def serve(self):
        """Handle messages until stdin ends."""
        while True:
            message = self.next_message()
            if message is None:
                self.at_eof()
            if "method" not in message:
                continue  # a response to nothing we are waiting for
            if "id" not in message:
                continue  # notifications need no reply
            self.handle_request(message)

    def handle_request(self, message):
        method = message["method"]
        request_id = message["id"]
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if "flood-stderr" in self.modes:
            self.flood_stderr()
        handler = self.HANDLERS.get(method)
        if handler is None:
            self.reply_error(request_id, METHOD_NOT_FOUND,
                             "Method not found: %s" % method)
            return
        try:
            result = handler(self, request_id, params)
        except _RpcError as exc:
            self.reply_error(request_id, exc.code, exc.message)
            return
        if result is not _NO_REPLY:
            self.reply(request_id, result)

    def initialize(self, request_id, params):
        if "hang-init" in self.modes:
            return _NO_REPLY
        if "error-init" in self.modes:
            raise _RpcError(INTERNAL_ERROR, "init failed on purpose")
        version = params.get("protocolVersion")
        if version not in PROTOCOL_VERSIONS:
            version = LATEST_VERSION
        if "wrong-version" in self.modes:
            version = "1999-01-01"
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {},
                             "prompts": {}, "logging": {}},
            "serverInfo": {"name": "fake-server", "version": "1.0.0"},
            "instructions": "Fake server for mcp_invoke tests.",
        }

    def ping(self, request_id, params):
        return {}

    def set_level(self, request_id, params):
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise _RpcError(INVALID_PARAMS, "Invalid log level: %r" % (level,))
        self.log_level = level
        return {}

    # -- tools ----------------------------------------------------------

    def tools_list(self, request_id, params):
        tools = _tools()
        if "cursor-cycle" in self.modes:
            return {"tools": tools[:PAGE_SIZE], "nextCursor": "again"}
        if "paginate" in self.modes:
            return _paginate(tools, "tools", params.get("cursor"))
        return {"tools": tools}

    def tools_call(self, request_id, params):
        """Run a tool, unless a mode intervenes first."""
        if "hang-call" in self.modes:
            return _NO_REPLY
        if "late" in self.modes:
            time.sleep(self.delay)
        if "crash-call" in self.modes:
            _write_stderr(b"fatal: boom while calling tool\n")
            sys.exit(3)
        if "close-stdout" in self.modes:
            self.stdout.flush()
            os.close(1)
            _sleep_forever()
        if "bad-frame" in self.modes:
            self.send_response_line(_encode({"jsonrpc": "2.0",
                                             "id": request_id}))
            return _NO_REPLY
        if "invalid-utf8" in self.modes:
            line = _encode({"jsonrpc": "2.0", "id": request_id,
                            "result": _text("bad:X end")})
            line = line.replace(b"bad:X end", b"bad:\xff end")
            self.send_response_line(line)
            return _NO_REPLY
        if "server-requests" in self.modes:
            return _text(self.ask_client())
        return self.run_tool(params)

    def run_tool(self, params):
        """Check the arguments against the tool's schema, then run it."""
        name = params.get("name")
        tool = {t["name"]: t for t in _tools()}.get(name)
        if tool is None:
            raise _RpcError(INVALID_PARAMS, "Unknown tool: %s" % (name,))
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _RpcError(INVALID_PARAMS, "arguments must be an object")
        # The types tool exists to show what arrived, so it takes anything.
        problem = None
        if name != "types":
            problem = _argument_problem(tool["inputSchema"], arguments)
        if problem:
            return _text("Invalid arguments: %s" % problem, isError=True)
        meta = params.get("_meta")
        return getattr(self, "tool_" + name)(arguments,
                                             meta if isinstance(meta, dict)
                                             else {})

    def tool_echo(self, args, meta):
        return _text(args["text"])

    def tool_add(self, args, meta):
        return _text(str(args["a"] + args["b"]))

    def tool_web_search(self, args, meta):
        query = args["query"]
        canned = {
            "organic": [{"title": "Result for %s" % query,
                         "link": "https://example.com/1",
                         "snippet": "A canned search result.",
                         "date": "2026-06-10"}],
            "related_searches": [{"query": "%s news" % query}],
            "base_resp": {"status_code": 0, "status_msg": "success"},
        }
        return _text(json.dumps(canned))

    def tool_slow(self, args, meta):
        steps = args.get("steps", 3)
        delay = args.get("delay", 0.05)
        token = meta.get("progressToken")
        if token is not None:
            for i in range(1, steps + 1):
                time.sleep(delay)
                self.notify("notifications/progress",
                            {"progressToken": token, "progress": i,
                             "total": steps, "message": "step %d" % i})
        return _text("done after %d steps" % steps)

    def tool_image(self, args, meta):
        audio = base64.b64encode(bytes(16)).decode("ascii")
        return {"content": [
            {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
            {"type": "audio", "data": audio, "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "fake://item/1",
             "name": "item-1", "mimeType": "text/plain"},
            {"type": "resource", "resource": {
                "uri": "fake://item/2", "mimeType": "text/plain",
                "text": "content of item 2"}},
        ]}

    def tool_fail(self, args, meta):
        return _text("something went wrong", isError=True)

    def tool_weather(self, args, meta):
        report = {"temperature": 21.5, "conditions": "sunny"}
        return _text(json.dumps(report), structuredContent=report)

    def tool_types(self, args, meta):
        return _text(json.dumps(args, sort_keys=True))

    def tool_big(self, args, meta):
        return _text("x" * args.get("size", 1000))

    def tool_log(self, args, meta):
        self.log("info", "hello from log tool", logger="fake")
        self.log("warning", {"detail": 1})
        return _text("logged")

    def tool_control(self, args, meta):
        return _text("red:\x1b[31mRED\x1b[0m bell:\x07 csi:\x9b end")

    def tool_env(self, args, meta):
        return _text(json.dumps({"env": dict(os.environ), "cwd": os.getcwd()},
                                sort_keys=True))

    # -- resources and prompts ------------------------------------------

    def resources_list(self, request_id, params):
        return _paginate(_resources(), "resources", params.get("cursor"))

    def resource_templates_list(self, request_id, params):
        return {"resourceTemplates": [{
            "uriTemplate": "fake://item/{id}", "name": "item",
            "description": "An item by id", "mimeType": "text/plain"}]}

    def resources_read(self, request_id, params):
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise _RpcError(INVALID_PARAMS, "Missing resource uri")
        prefix = "fake://item/"
        if uri.startswith(prefix) and len(uri) > len(prefix):
            return {"contents": [{"uri": uri, "mimeType": "text/plain",
                                  "text": "content of item %s"
                                          % uri[len(prefix):]}]}
        if uri == "fake://blob":
            blob = base64.b64encode(bytes(range(16))).decode("ascii")
            return {"contents": [{"uri": uri,
                                  "mimeType": "application/octet-stream",
                                  "blob": blob}]}
        raise _RpcError(RESOURCE_NOT_FOUND, "Resource not found: %s" % uri)

    def prompts_list(self, request_id, params):
        return {"prompts": _prompts()}

    def prompts_get(self, request_id, params):
        name = params.get("name")
        if name != "greet":
            raise _RpcError(INVALID_PARAMS, "Unknown prompt: %s" % (name,))
        arguments = params.get("arguments")
        if not isinstance(arguments, dict):
            arguments = {}
        if not arguments.get("name"):
            raise _RpcError(INVALID_PARAMS,
                            "Missing required argument: name")
        text = "Say hello to %s" % arguments["name"]
        if arguments.get("style"):
            text += " in a %s way" % arguments["style"]
        return {"description": "A greeting", "messages": [
            {"role": "user", "content": {"type": "text", "text": text}}]}

    HANDLERS = {
        "initialize": initialize,
        "ping": ping,
        "logging/setLevel": set_level,
        "tools/list": tools_list,
        "tools/call": tools_call,
        "resources/list": resources_list,
        "resources/templates/list": resource_templates_list,
        "resources/read": resources_read,
        "prompts/list": prompts_list,
        "prompts/get": prompts_get,
    }

    # -- misbehaviours that need more than a line ------------------------

    def ask_client(self):
        """Send five requests to the client and describe its answers."""
        asks = [
            ("s1", "ping", {}),
            ("s2", "roots/list", {}),
            ("s3", "sampling/createMessage", {
                "messages": [{"role": "user",
                              "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10}),
            ("s4", "elicitation/create", {
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {
                    "name": {"type": "string"}}}}),
            ("s5", "x/unknown", {}),
        ]
        for ask_id, method, params in asks:
            self.send({"jsonrpc": "2.0", "id": ask_id, "method": method,
                       "params": params})
        answers = {}
        while len(answers) < len(asks):
            message = self.read_stdin_message()
            if message is None:
                self.at_eof()
            if "method" in message:
                self.pending.append(message)  # handled after this call
            elif message.get("id") in {a[0] for a in asks}:
                answers[message["id"]] = message
        lines = []
        for ask_id, method, _ in asks:
            answer = answers[ask_id]
            if "error" in answer:
                error = answer["error"]
                code = error.get("code") if isinstance(error, dict) else error
                lines.append("%s: error %s" % (method, code))
            else:
                lines.append("%s: result %s" % (
                    method, _encode(answer.get("result")).decode("ascii")))
        return "\n".join(lines)

    def flood_stderr(self):
        """Write about --size bytes of stderr noise, then a flood-end line."""
        size = self.size if self.size is not None else DEFAULT_SIZES[
            "flood-stderr"]
        for n in range(1, max(1, (size + 99) // 100) + 1):
            _write_stderr(("noise %06d " % n).encode("ascii").ljust(99, b".")
                          + b"\n")
        _write_stderr(b"flood-end\n")

    def write_before_read(self):
        """Write about --size bytes of ~1 KiB log notifications to stdout."""
        size = self.size if self.size is not None else DEFAULT_SIZES[
            "write-before-read"]
        written, n = 0, 0
        while written < size:
            n += 1
            filler = ("filler %06d " % n).ljust(1000, ".")
            params = {"level": "debug", "data": filler}
            method = "notifications/message"
            line = _encode({"jsonrpc": "2.0", "method": method,
                            "params": params})
            self.write_line(line)
            written += len(line) + 1

    def start_grandchild(self):
        """Start a sleeping grandchild in our process group; note its pid."""
        with open(os.devnull, "r+b") as devnull:
            child = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(300)"],
                stdin=devnull, stdout=devnull, stderr=devnull)
        self.grandchild = child  # never waited for: it must outlive us
        if self.pidfile:
            with open(self.pidfile, "w") as f:
                f.write("%d\n" % child.pid)


# ---------------------------------------------------------------------------
# Helpers outside the server
# ---------------------------------------------------------------------------

def _encode(message):
    """Compact JSON bytes, ASCII-only, without the newline."""
    return json.dumps(message, separators=(",", ":")).encode("ascii")


def _append(path, data):
    """Append bytes to a file and flush, so a reader sees them at once."""
    with open(path, "ab") as f:
        f.write(data)
        f.flush()


def _write_stderr(data):
    try:
        sys.stderr.buffer.write(data)
        sys.stderr.buffer.flush()
    except BrokenPipeError:
        _quit_quietly()


def _quit_quietly():
    """The reader has gone: exit without a traceback or a flush error."""
    os._exit(0)


def _sleep_forever():
    while True:
        time.sleep(3600)


def _install_sigterm(record):
    """On SIGTERM, note it in the record file and exit 143 (128 + 15)."""
    def on_sigterm(signum, frame):
        if record:
            _append(record, b'{"signal":"SIGTERM"}\n')
        os._exit(143)  # skip flushing a stdout that may be closed
    signal.signal(signal.SIGTERM, on_sigterm)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def _build_parser():
    parser = argparse.ArgumentParser(
        description="A stdio MCP server that misbehaves on request.")
    parser.add_argument("--mode", action="append", default=[],
                        metavar="MODE",
                        help="misbehaviour to switch on; repeatable or "
                             "comma-separated: " + ", ".join(MODES))
    parser.add_argument("--record", metavar="FILE",
                        help="append every stdin line to FILE")
    parser.add_argument("--pidfile", metavar="FILE",
                        help="where grandchild mode writes the grandchild pid")
    parser.add_argument("--size", type=int, metavar="N",
                        help="bytes for flood-stderr and write-before-read")
    parser.add_argument("--delay", type=float, default=1.0, metavar="SECONDS",
                        help="sleep before answering in late mode")
    return parser


def _parse(argv):
    parser = _build_parser()
    options = parser.parse_args(argv)
    modes = [m.strip() for arg in options.mode for m in arg.split(",")]
    options.modes = [m for m in modes if m]
    for mode in options.modes:
        if mode not in MODES:
            parser.error("unknown mode %r (choose from %s)"
                         % (mode, ", ".join(MODES)))
    return options


def main(argv=None):
    """Run the server until stdin ends; return the exit status."""
    options = _parse(argv)
    server = _Server(options)
    if "ignore-sigterm" in server.modes:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        _install_sigterm(options.record)
    if "exit-early" in server.modes:
        _write_stderr(b"cannot start: missing API key\n")
        return 1
    if "grandchild" in server.modes:
        server.start_grandchild()
    if "huge-stderr-line" in server.modes:
        _write_stderr(b"huge " + b"e" * (300000 - 5))
    if "banner" in server.modes:
        server.write_line(b"Starting fake server v1.0")
        server.write_line(b"\x1b[31mcolored banner\x1b[0m")
        server.write_line(b"{not json")
    if "write-before-read" in server.modes:
        server.write_before_read()
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
