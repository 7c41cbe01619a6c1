#!/usr/bin/env python3
"""An MCP server that misbehaves on request, for testing mcp_invoke.

The server speaks JSON-RPC 2.0 over stdin/stdout, one message per line, or,
with --http, over Streamable HTTP (see HTTP below) with the same tools, eras
and modes.  Requests are handled strictly one after another, in arrival
order.  Each ``--mode`` switches on one misbehaviour and leaves everything
else normal.  Standard library only; runs on CPython 3.6 and later.

Usage::

    python3 fake_server.py [--mode MODE]... [--era ERA] [--supported V1,V2]
                           [--record FILE] [--pidfile FILE] [--size N]
                           [--delay SECONDS] [--http PORT]

    --mode MODE      switch on a misbehaviour; repeatable, or comma-separated
    --era ERA        legacy (default), modern or dual; see Eras below
    --supported LIST the protocol versions spoken. Legacy era: initialize
                     answers with the offered version if listed, else the
                     last one (default: 2024-11-05 to 2025-11-25). Modern and
                     dual eras: claimed in server/discover and in -32022
                     errors (default 2026-07-28; dual 2026-07-28,2025-11-25)
    --record FILE    append every line read from stdin to FILE, and the line
                     {"signal":"SIGTERM"} (or SIGINT) when that arrives
    --pidfile FILE   where the grandchild mode writes its grandchild's pid
    --size N         bytes for flood-stderr (default 1 MiB) and
                     write-before-read (default 2 MiB)
    --delay SECONDS  how long the late and slow-start modes sleep (default 1.0)
    --answer JSON    the bad-frame mode's answer to tools/call
    --http PORT      serve Streamable HTTP on 127.0.0.1:PORT (0: a free
                     port) instead of stdio; --record then records every
                     POST body as a line

Eras:

    legacy  the handshake-era protocol (2024-11-05 to 2025-11-25): initialize,
            ping, logging/setLevel; server/discover is an unknown method
    modern  2026-07-28 only, stateless: no initialize (-32601), no ping or
            logging/setLevel (-32601).  Every request needs _meta
            io.modelcontextprotocol/protocolVersion (else -32602; a version
            not in --supported gets -32022 with data {supported, requested})
            and io.modelcontextprotocol/clientCapabilities (else -32602).
            Results carry resultType and _meta io.modelcontextprotocol/
            serverInfo; list results and resources/read carry ttlMs and
            cacheScope.  notifications/message only for a request whose _meta
            has io.modelcontextprotocol/logLevel, at or above that level.
            resources/read of an unknown uri is -32602.  Input from the
            client is asked for with input_required results (MRTR).
    dual    initialize selects legacy semantics for requests without modern
            _meta; a request with _meta io.modelcontextprotocol/
            protocolVersion, and every server/discover, is served as modern

Tools: echo, add, web_search, slow, image, fail, weather, types, big, log,
control, env, weather_bad (structuredContent that
breaks its outputSchema) and ask_name, ask_url, ask_sample, ask_roots,
ask_all, ask_forever, which need input from the client: in the legacy era as
requests q1, q2, ... sent before the answer, in the modern era as an
input_required result, then a retry with inputResponses and requestState
(ask_forever never completes there).  Their text has one line per input, in
this order, whatever the era:

    name: ACTION CONTENT      form elicitation; CONTENT is sorted compact
                              JSON, or - when absent
    login: ACTION             URL elicitation
    sample: TEXT              sampling/createMessage
    roots: URI URI ...        roots/list (- when there are none)
    KEY: error CODE           the client answered with an error
    KEY: not supported by client   capability not declared, so not asked

Resources: fake://item/1 .. fake://item/5 (listed 2 per page), fake://blob,
and, unlisted, fake://secret ("secret for NAME", asks the name).  Prompts:
greet; secret_greeting ("Say hello to NAME", asks the name; NAME is nobody
unless the form is accepted).  Completions: prompt greet (style, name; formal
style gives Dr. names) and template fake://item/{id} (id), by prefix.

HTTP (--http):

    Once listening, the server prints one line, http://127.0.0.1:N/mcp, and
    serves until stdin ends (keep stdin open) or a signal arrives.  Only
    /mcp exists.  Every era checks, in this order: an Origin other than
    http://127.0.0.1:N or http://localhost:N (403), a POST whose Accept
    lacks application/json or text/event-stream (406), or whose
    Content-Type is not application/json (415), a body that is not one
    JSON object (400, -32700 or -32600).  Errors about the HTTP request
    itself carry a JSON-RPC error without an id.  A request is answered
    with application/json, unless the server sends something before the
    answer (progress, logs, its own requests): then with an SSE stream,
    one "event: message" per message, that ends after the answer.

    legacy  (2025-03-26 to 2025-11-25) initialize opens a session: its
            answer carries Mcp-Session-Id (random hex) if it is a result.
            Every later request needs that header (400 without, 404 for an
            unknown or deleted one, error -32600) and MCP-Protocol-Version
            equal to the negotiated version (400; it may be absent when that
            is 2024-11-05 or 2025-03-26).  Notifications and the client's
            responses get 202; a response to one of the server's requests
            (the ask tools, server-requests) lets the waiting call go on.
            JSON-RPC errors come with 200.  SSE events have ids s<stream>-
            <n>; GET with Last-Event-ID resumes that stream (400 if unknown),
            and GET without it opens the session's one standalone stream
            (409 for a second; 406 without Accept text/event-stream), which
            DELETE closes.  DELETE ends the session (200).  A request that
            is neither initialize nor in a session is refused with 400 and
            -32600, not a modern error, as a legacy-only server would.
    modern  (2026-07-28) no sessions: Mcp-Session-Id and Last-Event-ID are
            ignored, GET and DELETE get 405, a POSTed response 400.  A
            request needs MCP-Protocol-Version equal to its _meta
            io.modelcontextprotocol/protocolVersion, Mcp-Method equal to its
            method and, for tools/call, prompts/get and resources/read,
            Mcp-Name equal to params.name or params.uri (a =?base64?...?=
            value is decoded first); otherwise 400 with HeaderMismatch
            -32020 (for initialize, naming --supported).  -32601 comes with
            404, -32020 to -32022 with 400, other errors with 200.  SSE
            events have no ids.
    dual    initialize opens a legacy session, served as above; a request
            without Mcp-Session-Id is served as modern.

Modes:

    hang-init          never answer initialize
    hang-call          never answer tools/call
    ignore-sigterm     ignore SIGTERM and stay alive after stdin EOF
    no-exit-on-eof     stay alive after stdin EOF (SIGTERM still ends it)
    grandchild         start a sleeping grandchild, write its pid to --pidfile
    flood-stderr       write --size bytes to stderr before each answer
    banner             print three non-JSON lines to stdout at startup, and
                       --size more
    invalid-utf8       answer tools/call with a raw 0xff byte in the text
    bytewise           write every message one byte at a time
    crash-call         on tools/call, print an error to stderr and exit 3
    close-stdout       on tools/call, close stdout and stay alive until stdin ends
    write-before-read  write --size bytes of log notifications before reading
    server-requests    on tools/call, first send five requests to the client
    wrong-version      answer initialize with protocolVersion 1999-01-01
    error-init         answer initialize with a JSON-RPC error
    exit-early         print an error to stderr and exit 1 before reading
    die-holding-pipes  like exit-early, but first fork a child that keeps
                       stdin and stdout open and sleeps
    paginate           list tools 2 per page
    cursor-cycle       list tools with a nextCursor that never ends
    endless-pages      list tools with a new nextCursor every time, each page
                       after --delay seconds
    late               sleep --delay seconds before answering tools/call
    stray              send an unknown-id response and a notification first
    ping-flood         on tools/call, first send --size pings (1 KB ids, default
                       1000) without reading the answers
    reverse            hold tools/call answers until three wait, then send
                       them last first (needs a client that pipelines)
    bad-frame          answer tools/call with the --answer JSON object, its
                       id set (default {}: neither result nor error)
    huge-stderr-line   write one 300000-byte stderr line with no newline
    silent-discover    (legacy era) never answer server/discover, nor any
                       other unknown method that arrives before initialize
    slow-start         sleep --delay seconds before reading anything
    lenient-discover   (legacy era) answer server/discover with {} as if it
                       were any method, like servers that accept everything
    sample-burst       answer tools/call by asking for 20 samples at once and
                       never completing it: 20 sampling/createMessage requests
                       in one write (legacy era), or one input_required round
                       of 20 inputRequests, every round (modern era)
    elicit-burst       the same with 15 form elicitations whose schema has a
                       backtracking pattern, ^(a+)+$, that its own 41-character
                       default breaks
    sample-forever     ask_forever asks for a sample instead of a name
    refuse-version     answer initialize offering a version not in --supported
                       with error -32022 (data {supported, requested}), as a
                       dual-era server does, instead of offering its latest
    answer-then-ask    (legacy era) answer tools/call, and in the same write
                       ask for a sample, when nothing waits for an answer
    bad-ids            on tools/call, first send pings whose ids are null,
                       1.5, true and {"a":1}; in the legacy era then a ping
                       with id "ok", whose answer it waits for
    modern-asks        on tools/call, first send requests as a legacy server
                       would (ping twice, roots/list, elicitation/create,
                       sampling/createMessage), waiting for no answer
    telepathy          ask for the name in elicitation mode "telepathy"
    forgetful          declare no capabilities ({}), yet serve everything
    toolless           declare no capabilities, and answer tools/list and
                       tools/call with -32601
    formats            the name form also asks for email (format email) and
                       birthday (format date), both optional
    punycode-url       ask_url's URL is https://xn--80ak6aa92e.com/login?next=
                       https://bank.example.com/
    remote-ref         echo's text argument is listed as {"$ref":
                       "https://example.com/text.json"}, a schema elsewhere
    deep-schema        echo also takes "tree", a recursive schema ({"next":
                       tree}), so a deep enough value exhausts a checker's stack
    discover-asks      (modern era) on server/discover, first send a ping (id
                       "e1") and a form elicitation (id "e2"), then sleep
                       --delay seconds before answering
    early-ask          at startup, send --size form elicitations (default 1; ids
                       "a0", "a1", ...) and go on without waiting for answers
    late-discover      (modern era) hold the answer to server/discover until
                       --delay seconds after the next request is answered
    ping-first         at startup, send a ping (id "p0"); in the legacy era
                       wait for its answer before reading anything else
    odd-discover       answer server/discover with resultType "task"
    odd-page           (modern era) the last page of a paginated tools/list
                       has resultType "task"

HTTP modes (with --http only):

    sse                answer every request with an SSE stream
    sse-retry          (legacy era) answer tools/call with an SSE stream that
                       sends only a priming event (an id, retry: 100, empty
                       data) and closes; the rest, answer included, waits
                       for a GET with that id as Last-Event-ID
    no-get             answer GET with 405, as servers without a standalone
                       stream do

Stdio only (refused with --http, exit status 2): banner, bytewise,
close-stdout, write-before-read, reverse, late-discover, early-ask,
ping-first, answer-then-ask, die-holding-pipes.

Exit status: 0 on stdin EOF, 143 on SIGTERM, 130 on SIGINT, 3 in crash-call, 1 in exit-early,
2 on a bad command line.
"""

import argparse
import base64
import binascii
import collections
import http.server
import json
import os
import queue
import re
import select
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

# The handshake-era versions; anything else is answered with the latest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"

# Modes that only mean something over HTTP (--http).
HTTP_MODES = ("sse", "sse-retry", "no-get")

# Modes that write to stdout outside an answer or hold answers across
# requests: stdio only.
STDIO_MODES = ("banner", "bytewise", "close-stdout", "write-before-read",
               "reverse", "late-discover", "early-ask", "ping-first",
               "answer-then-ask", "die-holding-pipes")

MODES = (
    "hang-init", "hang-call", "ignore-sigterm", "no-exit-on-eof", "grandchild",
    "flood-stderr", "banner", "invalid-utf8", "bytewise", "crash-call",
    "close-stdout", "write-before-read", "server-requests", "wrong-version",
    "error-init", "exit-early", "paginate", "cursor-cycle", "late", "stray",
    "bad-frame", "huge-stderr-line", "silent-discover", "slow-start",
    "lenient-discover", "reverse", "endless-pages", "ping-flood", "die-holding-pipes",
    "sample-burst", "elicit-burst", "sample-forever", "refuse-version", "answer-then-ask",
    "bad-ids", "modern-asks", "telepathy", "forgetful", "toolless", "formats",
    "punycode-url", "remote-ref", "ping-first", "odd-discover", "odd-page",
    "deep-schema", "discover-asks", "early-ask", "late-discover",
) + HTTP_MODES

# The retry field (milliseconds) of sse-retry's priming event.
RETRY_MS = 100

ERAS = ("legacy", "modern", "dual")

# Versions claimed by a modern server (--supported overrides them).
MODERN_VERSIONS = ("2026-07-28",)
DUAL_VERSIONS = ("2026-07-28", "2025-11-25")

# Per-request _meta keys of 2026-07-28 (basic/index, "_meta").
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

SERVER_INFO = {"name": "fake-server", "version": "1.0.0"}
INSTRUCTIONS = "Fake server for mcp_invoke tests."

# 2026-07-28 results that are CacheableResult: they need ttlMs and cacheScope.
CACHEABLE = ("tools/list", "prompts/list", "resources/list",
             "resources/templates/list", "resources/read")
TTL_MS = 60000

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

# JSON-RPC error codes (JSON-RPC 2.0 section 5.1; -32002 from MCP resources
# before 2026-07-28, which uses -32602; -32022 from basic/versioning).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022

# What the tools ask the client for, by input key, in the order of their text.
ASK_KEYS = {
    "ask_name": ("name",), "ask_url": ("login",), "ask_sample": ("sample",),
    "ask_roots": ("roots",), "ask_all": ("name", "login", "sample", "roots"),
    "ask_forever": ("name",),
}

# What the burst modes ask for, all at once: (how many, method, params).
BURSTS = {
    "sample-burst": (20, "sampling/createMessage", {
        "messages": [{"role": "user", "content": {"type": "text",
                                                  "text": "What is 2+2?"}}],
        "maxTokens": 10}),
    "elicit-burst": (15, "elicitation/create", {
        "mode": "form", "message": "Which word?",
        "requestedSchema": {"type": "object", "properties": {
            "word": {"type": "string", "pattern": "^(a+)+$",
                     "default": "a" * 40 + "b"}}}}),
}

# Argument completions: (ref type, prompt name or template, argument).
COMPLETIONS = {
    ("ref/prompt", "greet", "style"): ("casual", "formal", "friendly"),
    ("ref/prompt", "greet", "name"): ("Ada", "Alan", "Grace"),
    ("ref/resource", "fake://item/{id}", "id"): ("1", "2", "3", "4", "5",
                                                 "10", "11"),
}
FORMAL_NAMES = ("Dr. Ada", "Dr. Alan", "Dr. Grace")

# Returned by a handler that answers by itself, or not at all.
_NO_REPLY = object()


# What the request being handled brings: its era, the client capabilities
# that apply to it, the lowest log level to send (None: no logs), its params.
_Current = collections.namedtuple("_Current",
                                  "modern capabilities log_level params")


class _RpcError(Exception):
    """A JSON-RPC error to send back instead of a result."""

    def __init__(self, code, message, data=None):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.data = data


class _InputRequired(Exception):
    """Answer the request with this input_required result (MRTR)."""

    def __init__(self, result):
        Exception.__init__(self, "input required")
        self.result = result


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


WEATHER_OUT = {
    "type": "object",
    "properties": {"temperature": {"type": "number"},
                   "conditions": {"type": "string"}},
    "required": ["temperature", "conditions"],
}


def _tools():
    """Every tool, in the order tools/list returns them."""
    string, integer = {"type": "string"}, {"type": "integer"}
    types = {
        "count": integer, "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": string},
        "opts": {"type": "object"}, "zip": string, "nothing": {"type": "null"},
        "either": {"type": ["integer", "string"]},
    }
    tools = [
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
              ["city"], outputSchema=WEATHER_OUT),
        _tool("types", "Echo the arguments back as sorted JSON.", types),
        _tool("big", "Return a text of the given size.",
              {"size": {"type": "integer", "default": 1000}}),
        _tool("log", "Send two log messages.", {}),
        _tool("control", "Return text with terminal control characters.", {}),
        _tool("env", "Return the server's environment and working directory.", {}),
    ]
    return tools + _ask_tools()


def _ask_tools():
    """weather_bad, and the tools that need input from the client."""
    tools = [_tool("weather_bad", "Report the weather, breaking the "
                   "outputSchema.", {}, outputSchema=WEATHER_OUT)]
    asks = [("ask_name", "Ask the user's name (form elicitation)."),
            ("ask_url", "Send the user to a sign-in page (URL elicitation)."),
            ("ask_sample", "Ask the client's model a question (sampling)."),
            ("ask_roots", "Ask for the client's roots."),
            ("ask_all", "Ask for name, sign-in, sample and roots at once."),
            ("ask_forever", "Ask the user's name again and again.")]
    return tools + [_tool(name, text, {}) for name, text in asks]


def _resources():
    """The listed resources, fake://item/1 to fake://item/5."""
    return [{"uri": "fake://item/%d" % n, "name": "item-%d" % n,
             "mimeType": "text/plain", "description": "Item number %d" % n}
            for n in range(1, ITEM_COUNT + 1)]


def _prompts():
    """The prompts: greet, and secret_greeting (which asks the user's name)."""
    prompts = [{
        "name": "greet",
        "description": "Greet someone.",
        "arguments": [
            {"name": "name", "description": "Who to greet", "required": True},
            {"name": "style", "description": "formal or casual",
             "required": False},
        ],
    }]
    prompts.append({"name": "secret_greeting",
                    "description": "Greet the user, asking their name."})
    return prompts


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
# Input from the client: what to ask, and how to describe the answers
# ---------------------------------------------------------------------------

def _input_request(key, legacy, modes=frozenset()):
    """The (method, params) that asks the client for one input key."""
    if key == "name":
        properties = {
            "name": {"type": "string", "description": "Your name"},
            "age": {"type": "integer", "default": 30},
            "color": {"type": "string", "enum": ["red", "green"],
                      "default": "green"}}
        if "formats" in modes:
            properties.update(email={"type": "string", "format": "email"},
                              birthday={"type": "string", "format": "date"})
        return "elicitation/create", {
            "mode": "telepathy" if "telepathy" in modes else "form",
            "message": "Who are you?",
            "requestedSchema": {"type": "object", "properties": properties,
                                "required": ["name"]}}
    if key == "login":
        url = ("https://xn--80ak6aa92e.com/login?next=https://bank.example.com/"
               if "punycode-url" in modes else "https://example.com/login")
        params = {"mode": "url", "message": "Sign in", "url": url}
        if legacy:
            params["elicitationId"] = "e1"  # 2025-11-25 only; gone in 2026
        return "elicitation/create", params
    if key == "sample":
        return "sampling/createMessage", {
            "messages": [{"role": "user", "content": {
                "type": "text", "text": "What is 2+2?"}}],
            "maxTokens": 10}
    return "roots/list", {}


def _client_supports(capabilities, key):
    """Whether the declared client capabilities allow asking for key."""
    if key in ("name", "login"):
        elicitation = capabilities.get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        if key == "login":
            return "url" in elicitation
        return not elicitation or "form" in elicitation  # {} means form only
    wanted = "sampling" if key == "sample" else "roots"
    return isinstance(capabilities.get(wanted), dict)


def _error_code(answer):
    """The code of an answer shaped like a JSON-RPC error, else None."""
    if isinstance(answer, dict) and "code" in answer and "message" in answer:
        return answer["code"]
    return None


def _answer_line(key, answers):
    """One line of an ask tool's text, for one input key."""
    if key not in answers:
        return "%s: not supported by client" % key
    answer = answers[key]
    code = _error_code(answer)
    if code is not None:
        return "%s: error %s" % (key, code)
    if not isinstance(answer, dict):
        return "%s: invalid response" % key
    if key == "name":
        content = answer.get("content")
        shown = "-" if content is None else json.dumps(
            content, sort_keys=True, separators=(",", ":"))
        return "name: %s %s" % (answer.get("action"), shown)
    if key == "login":
        return "login: %s" % (answer.get("action"),)
    if key == "sample":
        return "sample: %s" % _sample_text(answer.get("content"))
    roots = answer.get("roots")
    uris = [str(r.get("uri")) for r in roots if isinstance(r, dict)] \
        if isinstance(roots, list) else []
    return "roots: %s" % (" ".join(uris) or "-")


def _sample_text(content):
    """The text of a sampling result's content: one block or a list."""
    blocks = content if isinstance(content, list) else [content]
    texts = [b.get("text") for b in blocks
             if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return " ".join(texts) or "-"


def _accepted_name(answers):
    """The name from an accepted name form, else 'nobody'."""
    answer = answers.get("name")
    if isinstance(answer, dict) and answer.get("action") == "accept":
        content = answer.get("content")
        if isinstance(content, dict) and isinstance(content.get("name"), str):
            return content["name"]
    return "nobody"


def _encode_state(state):
    """requestState: base64 of compact JSON (opaque to the client)."""
    data = json.dumps(state, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode("utf-8")).decode("ascii")


def _decode_state(text, request):
    """The state dict, or None if text is not a state we made for request."""
    if not isinstance(text, str):
        return None
    try:
        state = json.loads(base64.urlsafe_b64decode(
            text.encode("ascii")).decode("utf-8"))
    except (ValueError, TypeError, UnicodeError):
        return None  # binascii.Error is a ValueError
    if (not isinstance(state, dict) or state.get("request") != request or
            not isinstance(state.get("round"), int) or
            not isinstance(state.get("answers"), dict)):
        return None
    return state


def _completion_values(ref, argument, context):
    """The candidate values for one completion/complete request."""
    kind = ref.get("type")
    if kind == "ref/prompt":
        target, known = ref.get("name"), ("greet", "secret_greeting")
    elif kind == "ref/resource":
        target, known = ref.get("uri"), ("fake://item/{id}",)
    else:
        raise _RpcError(INVALID_PARAMS, "Unknown ref type: %r" % (kind,))
    if target not in known:
        raise _RpcError(INVALID_PARAMS, "Unknown %s: %r" % (
            "prompt" if kind == "ref/prompt" else "resource template", target))
    values = COMPLETIONS.get((kind, target, argument))
    if values is None:
        raise _RpcError(INVALID_PARAMS, "Unknown argument: %r" % (argument,))
    arguments = context.get("arguments") if isinstance(context, dict) else None
    if (argument == "name" and isinstance(arguments, dict) and
            arguments.get("style") == "formal"):
        values = FORMAL_NAMES
    return values


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
        self.answer = options.answer
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer
        self.era = options.era
        self.supported = list(options.supported)
        self.log_level = "debug"
        self.pending = collections.deque()  # messages read while waiting
        self.initialized = False
        self.held = []  # reverse mode's answers not yet sent
        self.held_discover = None  # late-discover mode's (id, result)
        self.pages_sent = 0  # endless-pages mode
        self.client_capabilities = {}  # from initialize, for the legacy era
        self.asked = 0  # requests sent to the client so far: ids q1, q2, ...
        self.current = _Current(False, {}, "debug", {})

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

    def reply_error(self, request_id, code, message, data=None):
        error = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send_response_line(
            _encode({"jsonrpc": "2.0", "id": request_id, "error": error}))

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def log(self, level, data, logger=None):
        """Send notifications/message if the level passes the request's."""
        floor = self.current.log_level
        if floor is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(floor):
            return
        params = {"level": level}
        if logger is not None:
            params["logger"] = logger
        params["data"] = data
        self.notify("notifications/message", params)

    # -- reading --------------------------------------------------------

    def read_message(self):
        """The client's next JSON object, from stdin; None at EOF.

        The HTTP server overrides this (and write_line): the rest of the
        server, handle_request and ask included, is shared by both transports.
        """
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
        return self.read_message()

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
            held = self.held_discover
            self.handle_request(message)
            if held is not None:  # late-discover: --delay after the next answer
                time.sleep(self.delay)
                self.reply(*held)
                self.held_discover = None

    def handle_request(self, message):
        method = message["method"]
        request_id = message["id"]
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if "flood-stderr" in self.modes:
            self.flood_stderr()
        modern = self.is_modern(method, params)
        try:
            if modern:
                handler = self.enter_modern(method, params)
            else:
                handler = self.enter_legacy(method, params)
            if handler is None:
                return  # silent-discover
            result = handler(self, request_id, params)
        except _RpcError as exc:
            self.reply_error(request_id, exc.code, exc.message, exc.data)
            return
        except _InputRequired as exc:
            result = exc.result
        if "late-discover" in self.modes and method == "server/discover":
            self.held_discover = (request_id, _modern_result(method, result))
            return
        if result is not _NO_REPLY:
            if modern:
                result = _modern_result(method, result)
            if "reverse" in self.modes and method == "tools/call":
                self.hold(request_id, result)
            else:
                self.reply(request_id, result)

    def hold(self, request_id, result):
        """reverse mode: keep tools/call answers until three wait, then send them last first."""
        self.held.append((request_id, result))
        if len(self.held) == 3:
            for held_id, held_result in reversed(self.held):
                self.reply(held_id, held_result)
            self.held = []

    def is_modern(self, method, params):
        """Whether to serve this request as 2026-07-28 (stateless)."""
        if self.era != "dual":
            return self.era == "modern"
        if method == "initialize":
            return False
        meta = params.get("_meta")
        return method == "server/discover" or (isinstance(meta, dict) and
                                               VERSION_KEY in meta)

    def enter_legacy(self, method, params):
        """The handler for a handshake-era request, or None to stay silent."""
        handler = self.HANDLERS.get(method)
        if handler is None:
            if "silent-discover" in self.modes and (
                    method == "server/discover" or not self.initialized):
                return None
            if "lenient-discover" in self.modes and method == "server/discover":
                return lambda server, request_id, params: {}
            raise _RpcError(METHOD_NOT_FOUND, "Method not found: %s" % method)
        self.current = _Current(False, self.client_capabilities,
                                self.log_level, params)
        return handler

    def enter_modern(self, method, params):
        """Check a 2026-07-28 request's _meta; return its handler."""
        handler = self.MODERN_HANDLERS.get(method)
        if handler is None:
            hint = ""
            if method == "initialize":
                hint = " (this server speaks only %s)" % ", ".join(
                    self.supported)
            raise _RpcError(METHOD_NOT_FOUND,
                            "Method not found: %s%s" % (method, hint))
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        version = meta.get(VERSION_KEY)
        if not isinstance(version, str):
            raise _RpcError(INVALID_PARAMS, "missing _meta " + VERSION_KEY)
        # The version first: a newer client may shape the rest differently.
        if version not in self.supported:
            raise _RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                            {"supported": self.supported,
                             "requested": version})
        capabilities = meta.get(CAPABILITIES_KEY)
        if not isinstance(capabilities, dict):
            raise _RpcError(INVALID_PARAMS, "missing _meta " + CAPABILITIES_KEY)
        level = meta.get(LOG_LEVEL_KEY)
        if level is not None and level not in LOG_LEVELS:
            raise _RpcError(INVALID_PARAMS, "Invalid log level: %r" % (level,))
        self.current = _Current(True, capabilities, level, params)
        return handler

    def initialize(self, request_id, params):
        if "hang-init" in self.modes:
            return _NO_REPLY
        if "error-init" in self.modes:
            raise _RpcError(INTERNAL_ERROR, "init failed on purpose")
        version = params.get("protocolVersion")
        known = self.supported if self.era == "legacy" else PROTOCOL_VERSIONS
        if "refuse-version" in self.modes and version not in known:
            raise _RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                            {"supported": list(known), "requested": version})
        if version not in known:
            version = known[-1]  # the latest it speaks
        if "wrong-version" in self.modes:
            version = "1999-01-01"
        capabilities = params.get("capabilities")
        self.client_capabilities = (capabilities
                                    if isinstance(capabilities, dict) else {})
        self.initialized = True
        server_capabilities = {"tools": {"listChanged": False},
                               "resources": {}, "prompts": {}, "logging": {},
                               "completions": {}}
        if self.modes & {"forgetful", "toolless"}:
            server_capabilities = {}
        return {
            "protocolVersion": version,
            "capabilities": server_capabilities,
            "serverInfo": dict(SERVER_INFO),
            "instructions": INSTRUCTIONS,
        }

    def discover(self, request_id, params):
        if "discover-asks" in self.modes:
            self.send({"jsonrpc": "2.0", "id": "e1", "method": "ping"})
            method, ask = _input_request("name", True)
            self.send({"jsonrpc": "2.0", "id": "e2", "method": method, "params": ask})
            time.sleep(self.delay)
        capabilities = {"tools": {}, "resources": {}, "prompts": {},
                        "logging": {}, "completions": {}}
        if self.modes & {"forgetful", "toolless"}:
            capabilities = {}
        if "odd-discover" in self.modes:
            return {"resultType": "task", "supportedVersions": self.supported,
                    "capabilities": capabilities}
        return {"supportedVersions": self.supported,
                "capabilities": capabilities, "instructions": INSTRUCTIONS,
                "ttlMs": TTL_MS, "cacheScope": "public"}

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
        if "toolless" in self.modes:
            raise _RpcError(METHOD_NOT_FOUND, "Method not found: tools/list")
        tools = _tools()
        if "remote-ref" in self.modes:
            tools[0]["inputSchema"]["properties"]["text"] = {
                "$ref": "https://example.com/text.json"}
        if "deep-schema" in self.modes:
            schema = tools[0]["inputSchema"]
            schema["properties"]["tree"] = {"$ref": "#/$defs/node"}
            schema["$defs"] = {"node": {"type": "object", "properties": {
                "next": {"$ref": "#/$defs/node"}}}}
        if "cursor-cycle" in self.modes:
            return {"tools": tools[:PAGE_SIZE], "nextCursor": "again"}
        if "endless-pages" in self.modes:
            time.sleep(self.delay)
            self.pages_sent += 1
            return {"tools": tools[:PAGE_SIZE], "nextCursor": "page%d" % self.pages_sent}
        if "paginate" in self.modes:
            page = _paginate(tools, "tools", params.get("cursor"))
            if "odd-page" in self.modes and "nextCursor" not in page:
                page["resultType"] = "task"
            return page
        return {"tools": tools}

    def tools_call(self, request_id, params):
        """Run a tool, unless a mode intervenes first."""
        if "toolless" in self.modes:
            raise _RpcError(METHOD_NOT_FOUND, "Method not found: tools/call")
        if "hang-call" in self.modes:
            return _NO_REPLY
        if "bad-ids" in self.modes:
            self.send_bad_ids()
        if "modern-asks" in self.modes:
            for n, method in enumerate(("ping", "ping", "roots/list", "elicitation/create",
                                        "sampling/createMessage"), 1):
                self.send({"jsonrpc": "2.0", "id": "m%d" % n, "method": method,
                           "params": BURSTS["sample-burst"][2]
                           if method.startswith("sampling") else {}})
        if "late" in self.modes:
            time.sleep(self.delay)
        if "crash-call" in self.modes:
            _write_stderr(b"fatal: boom while calling tool\n")
            sys.exit(3)
        if "close-stdout" in self.modes:
            self.stdout.flush()
            os.close(1)
            while self.stdin.readline():
                pass
            sys.exit(0)
        if "bad-frame" in self.modes:
            answer = json.loads(self.answer)
            answer.update(jsonrpc="2.0", id=request_id)
            self.send_response_line(_encode(answer))
            return _NO_REPLY
        if "invalid-utf8" in self.modes:
            line = _encode({"jsonrpc": "2.0", "id": request_id,
                            "result": _text("bad:X end")})
            line = line.replace(b"bad:X end", b"bad:\xff end")
            self.send_response_line(line)
            return _NO_REPLY
        if "ping-flood" in self.modes:
            for i in range(self.size or 1000):
                self.send_response_line(_encode({"jsonrpc": "2.0", "method": "ping",
                                                 "id": "%d-%s" % (i, "x" * 1000)}))
        if "server-requests" in self.modes:
            return _text(self.ask_client())
        for mode in sorted(BURSTS):
            if mode in self.modes:
                return self.burst(mode)
        if "answer-then-ask" in self.modes:
            count, method, ask = BURSTS["sample-burst"]
            self.write_line(_encode({"jsonrpc": "2.0", "id": request_id,
                                     "result": self.run_tool(params)}) + b"\n"
                            + _encode({"jsonrpc": "2.0", "id": "late-question",
                                       "method": method, "params": ask}))
            return _NO_REPLY
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
        if name in ASK_KEYS:
            return self.ask_tool(name)
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

    def tool_weather_bad(self, args, meta):
        report = {"temperature": "warm"}  # wrong type, conditions missing
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

    def ask_tool(self, name):
        """Gather the tool's inputs from the client; one line per input."""
        keys = ASK_KEYS[name]
        if name == "ask_forever" and "sample-forever" in self.modes:
            keys = ("sample",)
        answers = self.collect("tools/call " + name, keys,
                               forever=name == "ask_forever")
        return _text("\n".join(_answer_line(key, answers) for key in keys))

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
        if uri == "fake://secret":
            name = _accepted_name(self.collect("resources/read " + uri,
                                               ("name",)))
            result = {"contents": [{"uri": uri, "mimeType": "text/plain",
                                    "text": "secret for %s" % name}]}
            if self.current.modern:  # per user: not for shared caches
                result.update(ttlMs=0, cacheScope="private")
            return result
        # 2026-07-28 moved "resource not found" to Invalid params.
        code = INVALID_PARAMS if self.current.modern else RESOURCE_NOT_FOUND
        raise _RpcError(code, "Resource not found: %s" % uri)

    def prompts_list(self, request_id, params):
        return {"prompts": _prompts()}

    def prompts_get(self, request_id, params):
        name = params.get("name")
        if name == "secret_greeting":
            who = _accepted_name(self.collect("prompts/get " + name,
                                              ("name",)))
            return {"description": "A secret greeting", "messages": [
                {"role": "user", "content": {
                    "type": "text", "text": "Say hello to %s" % who}}]}
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

    def complete(self, request_id, params):
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise _RpcError(INVALID_PARAMS, "ref and argument must be objects")
        value = argument.get("value")
        if not isinstance(value, str):
            raise _RpcError(INVALID_PARAMS, "argument.value must be a string")
        values = _completion_values(ref, argument.get("name"),
                                    params.get("context"))
        matches = [v for v in values if v.startswith(value)]
        return {"completion": {"values": matches, "total": len(matches),
                               "hasMore": False}}

    # Handshake-era methods; server/discover is deliberately unknown here.
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
        "completion/complete": complete,
    }

    # 2026-07-28 removed initialize, ping and logging/setLevel, and added discover.
    MODERN_HANDLERS = dict((m, h) for m, h in HANDLERS.items()
                           if m not in ("initialize", "ping", "logging/setLevel"))
    MODERN_HANDLERS["server/discover"] = discover

    # -- input from the client: server requests or MRTR ------------------

    def collect(self, request, keys, forever=False):
        """The client's answers for the keys it can give, by key.

        Keys the client lacks the capability for are left out.  In the
        modern era this raises _InputRequired until the retry holds them all.
        """
        supported = [k for k in keys
                     if _client_supports(self.current.capabilities, k)]
        if self.current.modern:
            return self.collect_modern(request, supported, forever)
        asks = []
        for key in supported:
            self.asked += 1
            method, params = _input_request(key, True, self.modes)
            asks.append(("q%d" % self.asked, method, params))
        responses = self.ask(asks)
        answers = {}
        for key, (ask_id, _, _) in zip(supported, asks):
            response = responses[ask_id]
            answers[key] = (response["error"] if "error" in response
                            else response.get("result"))
        return answers

    def collect_modern(self, request, supported, forever):
        """Answers from inputResponses and requestState, or _InputRequired."""
        params = self.current.params
        responses = params.get("inputResponses")
        state = params.get("requestState")
        answers, round_ = {}, 0
        if responses is not None or state is not None:
            decoded = _decode_state(state, request)
            if decoded is None:
                raise _RpcError(INVALID_PARAMS, "bad requestState")
            if not isinstance(responses, (dict, type(None))):
                raise _RpcError(INVALID_PARAMS,
                                "inputResponses must be an object")
            answers, round_ = decoded["answers"], decoded["round"]
            answers.update((k, v) for k, v in (responses or {}).items()
                           if k in supported)
        missing = [k for k in supported if k not in answers]
        if forever:
            missing, answers = supported, {}
        if missing or forever:
            raise _InputRequired(_input_required(request, missing, answers,
                                                 round_ + 1, self.modes))
        return answers

    def ask(self, asks):
        """Send (id, method, params) requests; return the responses by id."""
        # Requests that arrive meanwhile wait in self.pending, in order.
        for ask_id, method, params in asks:
            self.send({"jsonrpc": "2.0", "id": ask_id, "method": method,
                       "params": params})
        ids = set(ask_id for ask_id, _, _ in asks)
        answers = {}
        while len(answers) < len(asks):
            message = self.read_message()
            if message is None:
                self.at_eof()
            if "method" in message:
                self.pending.append(message)  # handled after this call
            elif message.get("id") in ids:
                answers[message["id"]] = message
        return answers

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
        answers = self.ask(asks)
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

    def send_bad_ids(self):
        """Pings with ids no client can answer; then, legacy, one it can."""
        for bad in (None, 1.5, True, {"a": 1}):
            self.send({"jsonrpc": "2.0", "id": bad, "method": "ping"})
        if not self.current.modern:
            self.ask([("ok", "ping", {})])

    def burst(self, mode):
        """Ask the client for many things at once; the call is never answered."""
        count, method, params = BURSTS[mode]
        if self.current.modern:  # one round of them, and again on every retry
            requests = dict(("b%d" % n, {"method": method, "params": params})
                            for n in range(1, count + 1))
            return {"resultType": "input_required", "inputRequests": requests,
                    "requestState": _encode_state({"request": mode, "round": 1,
                                                   "answers": {}})}
        lines = []
        for _ in range(count):
            self.asked += 1
            lines.append(_encode({"jsonrpc": "2.0", "id": "q%d" % self.asked,
                                  "method": method, "params": params}))
        self.write_line(b"\n".join(lines))  # in one write; answers are dropped
        return _NO_REPLY

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

def _input_required(request, keys, answers, round_, modes=frozenset()):
    """An InputRequiredResult asking for keys (basic/patterns/mrtr)."""
    result = {"resultType": "input_required"}
    if keys:  # none when the client can give nothing: state alone, retry
        result["inputRequests"] = {}
        for key in keys:
            method, params = _input_request(key, False, modes)
            result["inputRequests"][key] = {"method": method, "params": params}
    result["requestState"] = _encode_state(
        {"request": request, "round": round_, "answers": answers})
    return result


def _modern_result(method, result):
    """A result as 2026-07-28 shapes it: resultType, serverInfo, caching."""
    shaped = {"resultType": "complete"}
    shaped.update(result)
    meta = dict(shaped.get("_meta") or {})
    meta[SERVER_INFO_KEY] = dict(SERVER_INFO)
    shaped["_meta"] = meta
    if method in CACHEABLE and shaped["resultType"] == "complete":
        shaped.setdefault("ttlMs", TTL_MS)
        shaped.setdefault("cacheScope", "public")
    return shaped


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


def _install_signals(record, signums):
    """On each signal, note it in the record file and exit 128 + its number."""
    def on_signal(signum, frame):
        if record:
            _append(record, b'{"signal":"%s"}\n' % signal.Signals(signum).name.encode())
        os._exit(128 + signum)  # skip flushing a stdout that may be closed
    for signum in signums:
        signal.signal(signum, on_signal)


# ---------------------------------------------------------------------------
# Streamable HTTP: the same server behind http.server
# ---------------------------------------------------------------------------

# 2026-07-28 errors that travel with an HTTP status other than 200
# (transports/streamable-http, "Protocol Version Header", "Server Validation").
MODERN_STATUS = {HEADER_MISMATCH: 400, MISSING_CAPABILITY: 400,
                 UNSUPPORTED_VERSION: 400, METHOD_NOT_FOUND: 404}

# The body field that Mcp-Name mirrors, by method.
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name",
                 "resources/read": "uri"}

# Versions older than 2025-06-18 had no MCP-Protocol-Version header.
HEADERLESS_VERSIONS = ("2024-11-05", "2025-03-26")

# Event ids of resumable streams: s<stream>-<event>, both counted from 1.
EVENT_ID = re.compile(r"^s([0-9]+)-([0-9]+)$")

# How often a waiting stream checks whether its client has gone.
PEER_POLL = 0.5


class _Stream(object):
    """One SSE stream of a session, kept so Last-Event-ID can resume it."""

    def __init__(self, number, wfile, resumable):
        self.number = number
        self.wfile = wfile  # None while no connection carries it
        self.resumable = resumable
        self.events = []  # encoded events; None for the priming one
        self.done = False  # its answer has been sent

    def add(self, data, retry=None):
        """Record one event and send it if connected; return its bytes."""
        self.events.append(data)
        lines = []
        if self.resumable:
            lines.append(b"id: s%d-%d" % (self.number, len(self.events)))
        if retry is not None:
            lines.append(b"retry: %d" % retry)
        if data is None:
            lines.append(b"data: ")
        else:
            lines += [b"event: message", b"data: " + data]
        self.write(b"\n".join(lines) + b"\n\n")

    def write(self, data):
        if self.wfile is None:
            return
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.wfile = None  # the client left; keep the events for it

    def replay(self, after):
        """Send the events after number `after` again (priming ones skipped)."""
        for number, data in enumerate(self.events[after:], after + 1):
            if data is not None:
                self.write(b"id: s%d-%d\nevent: message\ndata: %s\n\n"
                           % (self.number, number, data))


class _HttpServer(_Server):
    """The server of one HTTP session, or of every sessionless request.

    handle_request is the stdio server's; only the wire differs: what it
    writes goes to the current POST's _Exchange, and what it reads (the
    client's answers to its requests) arrives by other POSTs.
    """

    def __init__(self, options, session_id=None):
        _Server.__init__(self, options)
        self.session_id = session_id
        self.version = None  # negotiated by initialize
        self.lock = threading.Lock()  # one request at a time, as on stdio
        self.replies = queue.Queue()  # the client's responses, from POSTs
        self.cond = threading.Condition()  # guards streams and ended
        self.streams = []
        self.get_stream = None  # the open standalone GET stream
        self.ended = False  # DELETE ended the session
        self.exchange = None

    def write_line(self, line):
        for part in line.split(b"\n"):
            self.exchange.emit(part)

    def read_message(self):
        return self.replies.get()

    def new_stream(self, wfile):
        """A stream numbered within the session (resumable if there is one)."""
        with self.cond:
            stream = _Stream(len(self.streams) + 1, wfile,
                             self.session_id is not None)
            self.streams.append(stream)
            return stream

    def stream_for(self, event_id):
        """The stream an event id names, or None."""
        match = EVENT_ID.match(event_id or "")
        if not match:
            return None
        number = int(match.group(1))
        with self.cond:
            if 1 <= number <= len(self.streams):
                return self.streams[number - 1]
        return None

    def end(self):
        with self.cond:
            self.ended = True
            self.cond.notify_all()


def _parse_line(line):
    """A line the server wrote, as a dict, or None if it is not JSON."""
    try:
        message = json.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is one too
        return None
    return message if isinstance(message, dict) else None


class _Exchange(object):
    """One POSTed request's answer: JSON, or SSE once there is more to say.

    Plain answers go out as application/json.  Anything the server sends
    before the answer (progress, logs, its own requests) turns the answer
    into an SSE stream; --mode sse makes every answer one.
    """

    def __init__(self, handler, server, request_id, modern, sse):
        self.handler = handler
        self.server = server
        self.request_id = request_id
        self.modern = modern  # 2026-07-28 rules: errors may change the status
        self.sse = sse
        self.stream = None
        self.answered = False
        self.on_result = None  # initialize: called with the result, returns headers

    def is_answer(self, message):
        if message is None:  # a line that is not JSON: invalid-utf8, bad-frame
            return True
        return "method" not in message and message.get("id") == self.request_id

    def emit(self, line):
        message = _parse_line(line)
        answer = self.is_answer(message)
        headers = []
        if answer:
            self.answered = True
            if self.on_result and message and "result" in message:
                headers = self.on_result(message["result"])
        if self.stream is None:
            if answer and not self.sse:
                status = 200
                error = (message or {}).get("error")
                if self.modern and isinstance(error, dict):
                    status = MODERN_STATUS.get(error.get("code"), 200)
                self.handler.send_body(status, line, headers)
                return
            self.open(headers)
        with self.server.cond:
            self.stream.add(line)
            if answer:
                self.stream.done = True
                self.server.cond.notify_all()

    def open(self, headers=(), retry=None):
        """Start the SSE answer; with retry, prime it and drop the connection."""
        self.handler.start_stream(headers)
        self.stream = self.server.new_stream(self.handler.wfile)
        if retry is not None:  # 2025-11-25 transports, "Sending Messages" 6
            with self.server.cond:
                self.stream.add(None, retry)
                self.stream.wfile = None
            self.handler.hang_up()


def _media_types(value):
    """The media types an Accept or Content-Type header lists, lowercased."""
    return set(part.split(";")[0].strip().lower()
               for part in (value or "").split(","))


def _header_text(value):
    """A header value, Base64 sentinel decoded; None if undecodable."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2].encode("ascii"),
                                    validate=True).decode("utf-8")
        except (ValueError, UnicodeError):
            return None
    return value


def _header_problem(headers, message):
    """What is wrong with a 2026-07-28 request's mirrored headers, or None."""
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    checks = [("MCP-Protocol-Version", meta.get(VERSION_KEY)),
              ("Mcp-Method", message.get("method"))]
    field = NAMED_METHODS.get(message.get("method"))
    if field:
        checks.append(("Mcp-Name", params.get(field)))
    for name, wanted in checks:
        value = headers.get(name)
        if value is None:
            return "missing %s header" % name
        if name == "Mcp-Name":
            value = _header_text(value)
        if value != wanted:
            return "%s header value %r does not match body value %r" % (
                name, value, wanted)
    return None


def _jsonrpc_error(code, message, request_id=None, data=None):
    """An error response; without request_id it has no id (transport errors)."""
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    response = {"jsonrpc": "2.0"}
    if request_id is not None:
        response["id"] = request_id
    response["error"] = error
    return _encode(response)


class _Handler(http.server.BaseHTTPRequestHandler):
    """The MCP endpoint, /mcp: POST, GET and DELETE, era by era."""

    protocol_version = "HTTP/1.1"  # keep-alive for JSON; SSE streams close

    def log_message(self, format, *args):
        pass  # stderr belongs to the modes that write there

    # -- answering ------------------------------------------------------

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        if body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def reject(self, status, code, message, request_id=None, data=None):
        self.send_body(status, _jsonrpc_error(code, message, request_id, data))

    def start_stream(self, headers=()):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Accel-Buffering", "no")  # 2026-07-28 "Receiving Messages"
        self.send_header("Connection", "close")  # the stream ends with the connection
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True

    def hang_up(self):
        """Close our side now; the client sees the stream end."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def peer_gone(self):
        """Whether the client has closed its side of the connection."""
        try:
            if not select.select([self.connection], [], [], 0)[0]:
                return False
            return not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True

    def wait(self, server, until):
        """Keep the connection until `until()`, the session ends, or the client leaves."""
        with server.cond:
            while not until() and not server.ended:
                server.cond.wait(PEER_POLL)
                if self.peer_gone():
                    return

    # -- checks ---------------------------------------------------------

    def read_body(self, required):
        """The request body (b"" if none), or None after answering 411."""
        length = self.headers.get("Content-Length")
        if length is None and not required:
            return b""
        try:
            return self.rfile.read(int(length))
        except (TypeError, ValueError):
            self.close_connection = True
            self.reject(411, INVALID_REQUEST, "Length Required")
            return None

    def admitted(self, required_body=False):
        """Read the body, check path and Origin; False once answered."""
        self.body = self.read_body(required_body)
        if self.body is None:
            return False
        if self.path.split("?")[0] != "/mcp":
            self.reject(404, INVALID_REQUEST, "Not Found: the endpoint is /mcp")
            return False
        origin = self.headers.get("Origin")
        port = self.server.server_address[1]
        if origin is not None and origin not in (
                "http://127.0.0.1:%d" % port, "http://localhost:%d" % port):
            self.reject(403, INVALID_REQUEST, "Forbidden: Origin %s" % origin)
            return False
        return True

    def session(self):
        """The legacy session the request names; None once answered 400/404."""
        session_id = self.headers.get("Mcp-Session-Id")
        if session_id is None:
            self.reject(400, INVALID_REQUEST, "Bad Request: Missing session ID")
            return None
        server = self.server.sessions.get(session_id)
        if server is None:
            self.reject(404, INVALID_REQUEST, "Session not found")
            return None
        version = self.headers.get("MCP-Protocol-Version")
        if version is None and server.version in HEADERLESS_VERSIONS:
            return server  # 2025-11-25 "Protocol Version Header": no header then
        if version != server.version:
            self.reject(400, INVALID_REQUEST,
                        "Bad Request: MCP-Protocol-Version %s, but the session "
                        "speaks %s" % (version, server.version))
            return None
        return server

    # -- POST: one JSON-RPC message -------------------------------------

    def do_POST(self):
        if not self.admitted(required_body=True):
            return
        if not {"application/json", "text/event-stream"} <= _media_types(
                self.headers.get("Accept")):
            return self.reject(406, INVALID_REQUEST, "Not Acceptable: Accept "
                               "must list application/json and text/event-stream")
        if _media_types(self.headers.get("Content-Type")) != {"application/json"}:
            return self.reject(415, INVALID_REQUEST, "Unsupported Media Type: "
                               "Content-Type must be application/json")
        if self.server.options.record:
            _append(self.server.options.record, self.body.rstrip(b"\n") + b"\n")
        try:
            message = json.loads(self.body.decode("utf-8"))
        except ValueError:
            return self.reject(400, PARSE_ERROR, "Parse error")
        if not isinstance(message, dict):
            return self.reject(400, INVALID_REQUEST,
                               "Invalid Request: one JSON-RPC message per POST")
        era = self.server.options.era
        if era != "modern" and message.get("method") == "initialize":
            return self.initialize(message)
        if era == "modern" or (era == "dual" and
                               "Mcp-Session-Id" not in self.headers):
            return self.post_modern(message)
        self.post_legacy(message)

    def initialize(self, message):
        """Start a session; it exists once initialize has a result."""
        session_id = binascii.hexlify(os.urandom(16)).decode("ascii")
        server = _HttpServer(self.server.options, session_id)
        sessions = self.server.sessions

        def on_result(result):
            server.version = result.get("protocolVersion")
            sessions[session_id] = server
            return [("Mcp-Session-Id", session_id)]
        if "id" not in message:
            return self.reject(400, INVALID_REQUEST, "initialize needs an id")
        self.dispatch(server, message, False, on_result)

    def post_legacy(self, message):
        """2025-03-26 to 2025-11-25: everything but initialize in a session."""
        server = self.session()
        if server is None:
            return
        if "method" not in message:
            server.replies.put(message)  # an answer to one of our requests
        if "method" not in message or "id" not in message:
            return self.send_body(202, b"")
        self.dispatch(server, message, False)

    def post_modern(self, message):
        """2026-07-28: no session; the headers must mirror the body."""
        if "method" not in message:
            return self.reject(400, INVALID_REQUEST, "Bad Request: a client "
                               "sends no responses in 2026-07-28")
        if "id" not in message:
            return self.send_body(202, b"")
        problem = _header_problem(self.headers, message)
        if problem:
            if message["method"] == "initialize":  # basic/versioning: name them
                problem += " (this server speaks only %s)" % ", ".join(
                    self.server.options.supported)
            return self.reject(400, HEADER_MISMATCH, "Header mismatch: "
                               + problem, message["id"])
        self.dispatch(self.server.modern, message, True)

    def dispatch(self, server, message, modern, on_result=None):
        """Run the shared handle_request with this POST as its wire."""
        retry = (not modern and "sse-retry" in server.modes and
                 message["method"] == "tools/call")
        exchange = _Exchange(self, server, message["id"], modern,
                             retry or "sse" in server.modes)
        exchange.on_result = on_result
        with server.lock:
            server.exchange = exchange
            try:
                if retry:
                    exchange.open(retry=RETRY_MS)
                server.handle_request(message)
            except SystemExit as exc:  # crash-call ends the process, as on stdio
                os._exit(exc.code if isinstance(exc.code, int) else 1)
            finally:
                server.exchange = None
        if not exchange.answered:  # hang-call and friends: hold the line
            self.close_connection = True
            self.wait(server, lambda: False)

    # -- GET: the standalone stream, or a resumed one --------------------

    def do_GET(self):
        if not self.admitted():
            return
        if self.server.options.era == "modern" or "no-get" in self.server.modes:
            return self.send_body(405, b"", [("Allow", "POST, DELETE")])
        if "text/event-stream" not in _media_types(self.headers.get("Accept")):
            return self.reject(406, INVALID_REQUEST, "Not Acceptable: Accept "
                               "must list text/event-stream")
        server = self.session()
        if server is None:
            return
        last = self.headers.get("Last-Event-ID")
        if last is not None:
            return self.resume(server, last)
        with server.cond:
            if server.get_stream is not None:
                return self.reject(409, INVALID_REQUEST,
                                   "Conflict: a GET stream is already open")
            self.start_stream()
            server.get_stream = server.new_stream(self.wfile)
        try:
            self.wait(server, lambda: False)
        finally:
            with server.cond:
                server.get_stream = None

    def resume(self, server, last):
        """Replay a stream after Last-Event-ID, then carry it to its end."""
        stream = server.stream_for(last)
        if stream is None:
            return self.reject(400, INVALID_REQUEST,
                               "Bad Request: unknown Last-Event-ID %s" % last)
        self.start_stream()
        with server.cond:
            stream.wfile = self.wfile
            stream.replay(int(EVENT_ID.match(last).group(2)))
        self.wait(server, lambda: stream.done)

    # -- DELETE: end the session -----------------------------------------

    def do_DELETE(self):
        if not self.admitted():
            return
        if self.server.options.era == "modern":
            return self.send_body(405, b"", [("Allow", "POST")])
        server = self.session()
        if server is None:
            return
        self.server.sessions.pop(server.session_id, None)
        server.end()
        self.send_body(200, b"")


class _Listener(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """The HTTP server: legacy sessions by id, one sessionless modern server.

    Python 3.6 has no http.server.ThreadingHTTPServer; this is the same.
    """

    daemon_threads = True

    def __init__(self, options):
        http.server.HTTPServer.__init__(self, ("127.0.0.1", options.http),
                                        _Handler)
        self.options = options
        self.modes = frozenset(options.modes)
        self.sessions = {}
        self.modern = _HttpServer(options)

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # not a client leaving
            http.server.HTTPServer.handle_error(self, request, client_address)


def _serve_http(options):
    """Serve until stdin ends; print the endpoint's URL once listening."""
    listener = _Listener(options)
    thread = threading.Thread(target=listener.serve_forever)
    thread.daemon = True
    thread.start()
    sys.stdout.write("http://127.0.0.1:%d/mcp\n" % listener.server_address[1])
    sys.stdout.flush()
    while os.read(0, 65536):
        pass
    if set(options.modes) & {"ignore-sigterm", "no-exit-on-eof"}:
        _sleep_forever()
    return 0


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def _build_parser():
    parser = argparse.ArgumentParser(
        description="An MCP server (stdio, or HTTP with --http) that "
                    "misbehaves on request.")
    parser.add_argument("--mode", action="append", default=[],
                        metavar="MODE",
                        help="misbehaviour to switch on; repeatable or "
                             "comma-separated: " + ", ".join(MODES))
    parser.add_argument("--era", choices=ERAS, default="legacy",
                        help="protocol era: legacy (handshake, default), "
                             "modern (2026-07-28, stateless) or dual (both)")
    parser.add_argument("--supported", metavar="V1,V2",
                        help="versions spoken: legacy initialize answers the "
                             "offered one if listed, else the last (default %s); "
                             "modern eras claim them (default %s; dual: %s)"
                        % (",".join(PROTOCOL_VERSIONS), ",".join(MODERN_VERSIONS),
                           ",".join(DUAL_VERSIONS)))
    parser.add_argument("--record", metavar="FILE",
                        help="append every stdin line to FILE")
    parser.add_argument("--pidfile", metavar="FILE",
                        help="where grandchild mode writes the grandchild pid")
    parser.add_argument("--size", type=int, metavar="N",
                        help="bytes for flood-stderr and write-before-read")
    parser.add_argument("--delay", type=float, default=1.0, metavar="SECONDS",
                        help="sleep in the late and slow-start modes")
    parser.add_argument("--answer", default="{}", metavar="JSON",
                        help="the bad-frame mode's answer to tools/call")
    parser.add_argument("--http", type=int, metavar="PORT",
                        help="serve Streamable HTTP on 127.0.0.1:PORT (0: any "
                             "free port) instead of stdio; prints the URL")
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
        if options.http is None and mode in HTTP_MODES:
            parser.error("mode %r needs --http" % mode)
        if options.http is not None and mode in STDIO_MODES:
            parser.error("mode %r is for stdio only" % mode)
    if options.supported is None:
        options.supported = {"legacy": PROTOCOL_VERSIONS, "modern": MODERN_VERSIONS,
                             "dual": DUAL_VERSIONS}[options.era]
    else:
        options.supported = [v.strip() for v in options.supported.split(",")
                             if v.strip()]
        if not options.supported:
            parser.error("--supported needs at least one version")
    return options


def main(argv=None):
    """Run the server until stdin ends; return the exit status."""
    options = _parse(argv)
    server = _Server(options)
    if "ignore-sigterm" in server.modes:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _install_signals(options.record, [signal.SIGINT])
    else:
        _install_signals(options.record, [signal.SIGTERM, signal.SIGINT])
    if "slow-start" in server.modes:
        time.sleep(options.delay)  # like a uvx install before the server runs
    if "exit-early" in server.modes:
        _write_stderr(b"cannot start: missing API key\n")
        return 1
    if "die-holding-pipes" in server.modes:
        if os.fork() == 0:  # a worker that keeps our stdin and stdout open
            time.sleep(300)
            os._exit(0)
        _write_stderr(b"cannot start: bad config\n")
        return 1
    if "grandchild" in server.modes:
        server.start_grandchild()
    if "huge-stderr-line" in server.modes:
        _write_stderr(b"huge " + b"e" * (300000 - 5))
    if options.http is not None:
        return _serve_http(options)
    if "banner" in server.modes:
        server.write_line(b"Starting fake server v1.0")
        server.write_line(b"\x1b[31mcolored banner\x1b[0m")
        server.write_line(b"{not json")
        for i in range(server.size or 0):
            server.write_line(b"noise %d" % i)
    if "early-ask" in server.modes:
        method, ask = _input_request("name", True)
        for n in range(server.size or 1):
            server.send({"jsonrpc": "2.0", "id": "a%d" % n, "method": method,
                         "params": ask})
    if "ping-first" in server.modes:
        if server.era == "legacy":
            server.ask([("p0", "ping", {})])
        else:
            server.send({"jsonrpc": "2.0", "id": "p0", "method": "ping"})
    if "write-before-read" in server.modes:
        server.write_before_read()
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
