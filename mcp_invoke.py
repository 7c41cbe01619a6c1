#!/usr/bin/env python3
# mcp_invoke: call any MCP server from a shell or from Python. MIT License.
"""Call any MCP (Model Context Protocol) server, over stdio or Streamable HTTP, with
nothing but python3.

One file, standard library only, CPython 3.6 or newer, POSIX (Linux, macOS, BSD).
Copy it anywhere and run it, or import it from a vendored copy.

Command line::

    python3 mcp_invoke.py [OPTIONS] COMMAND [ARGS...] -- SERVER_CMD [SERVER_ARGS...]

    python3 mcp_invoke.py tools -- uvx mcp-server-time
    python3 mcp_invoke.py call get_current_time timezone=UTC -- uvx mcp-server-time
    python3 mcp_invoke.py call web_search '{"query": "x"}' -- python3 fake_server.py
    python3 mcp_invoke.py tools --url https://mcp.example.com/mcp --bearer-env TOKEN
    python3 mcp_invoke.py auth login --url https://mcp.example.com/mcp   # OAuth

Commands: tools, call NAME [ARGS...], schema TOOL, resources, templates, read URI,
prompts, prompt NAME [key=value...], complete, info, ping, batch, pin FILE, check,
watch URI..., servers, session start|list|stop, shell, completion, replay FILE,
task list|get|wait|cancel, skills [get NAME|URI], auth.  ``--help`` lists the
options; ``--pin FILE`` compares the server with a pin first, ``--events``
makes stdout JSON Lines.
Without ``--``, a server may come from a config file (``--config FILE --server
NAME``, or a lone server in ./.mcp.json), or through a keep-alive session
(``session start NAME -- SERVER_CMD``, then ``--session NAME`` on any command).

Both protocol eras are spoken: servers of the handshake era (2024-11-05 to
2025-11-25) and of the stateless 2026-07-28 revision. The client probes with
``server/discover`` and falls back to ``initialize``; ``--protocol-version``
pins one. Requests from the server (roots, elicitation, sampling) are answered
by one policy layer in both forms: as JSON-RPC requests, or as
``input_required`` results that the client fulfils and retries.

Library::

    import mcp_invoke
    with mcp_invoke.Client(["uvx", "mcp-server-time"], timeout=30) as c:
        print(c.server_info, c.era, c.protocol_version)
        for tool in c.list_tools():
            print(tool["name"])
        result = c.call_tool("get_current_time", {"timezone": "UTC"})
    with mcp_invoke.Client(url="https://mcp.example.com/mcp",
                           headers={"Authorization": "Bearer " + token}) as c:
        print(c.list_tools())
    with mcp_invoke.Client(session="browser") as c:   # session start browser -- ...
        print(c.call_tool("browser_snapshot"))

Results are the JSON objects of the MCP specification, as plain dicts. Every
failure is an ``MCPError``; its class says what went wrong and ``exit_code`` is
the status the command line exits with:

    0   ok                        5   connection lost (server exited, closed
    1   the tool returned isError      its output; HTTP refused, reset, 5xx, TLS)
    2   usage or bad input        6   authentication refused (HTTP 401, 403,
                                      any OAuth step)
    3   the server answered a     7   refused by the trust policy (CLI: --pin,
        JSON-RPC error                --allow-tools, --deny-tools, --read-only;
                                      a skill that fails verification)
    4   protocol violation        124 timed out
                                  126 server command not executable
                                  127 server command not found
                                  130 interrupted (Ctrl-C)

The server gets only an allowlist of environment variables (PATH, HOME, USER,
LOGNAME, SHELL, TERM, LANG, LC_*, TMPDIR, TZ) unless asked for more, runs in its
own process group, and is always stopped and reaped: stdin closed, then
SIGTERM, then SIGKILL to the whole group.

The file, top to bottom (each part opens with a banner), in two parts:

  Part I: the library (it stands alone; nothing in it names anything of Part II)
    Constants        protocol versions, defaults, limits, each with its reason
    Exceptions       MCPError and its leaves, each carrying its exit code
    Shared helpers   the small functions every part uses; files and directories
    Wire helpers     JSON in and out, the framer that splits stdout into messages,
                     and for HTTP the server-sent events parser and capped bodies
    JSON Schema      the checker (draft 2020-12 and older dialects)
    Skills           a published skill's entry checked, its files verified, its
                     front matter read as the subset of YAML it is written in
    Transports       _Transport, the interface the Client uses; _StdioTransport,
                     the server process and one selectors loop
    Transports       _HttpTransport: Streamable HTTP on http.client and worker
                     threads, and the 2024-11-05 HTTP+SSE transport
    Transports       OAuth 2.1: discovery, the client's identity, grants, tokens
    Transports       JWT signing: ES256 and RS256 client assertions from a PEM key
    Transports       _SessionTransport, a keep-alive session's Unix socket
    Client           the protocol: eras as values; _Engine, requests in rounds on
                     the wire and every wait (tasks among them); Client on it:
                     the era settled, requests, batch, answers to the server,
                     subscriptions (watch, list changes)

  Part II: the command line (Client through its public methods and engine)
    Output           stdout, stderr diagnostics, progress, --events, hidden text
    Config files     JSONC, mcpServers / servers, ${VAR}
    Arguments        key=value typing, signatures, content blocks
    Answering        elicitation and sampling on the command line
    Tasks            tools that run long: their status lines, the task store, task
    Replay           a stdio server answering from a --trace file
    Sessions         a server kept alive behind a Unix socket, for many runs
    Shell            commands typed against one open server
    Agents           search, skill, the launcher: the front door for coding agents
    Skills a server publishes   skills, skills get: listed, fetched verified
    Commands         one function per command, and the parser
    Trust            the tool policy, pins, and what a batch checks each line against
    Many servers     tools --all, server__tool
    Remembering      the era cache and the tool-list cache
    Running          input, the client's options, the server, one command
    main             signals and exit codes
"""

import collections
import errno
import gc
import itertools
import json
import os
import re
import signal
import sys
import time
import warnings
# Modules only some commands need are imported in the function that uses
# them, each marked "# lazy:": loading them all cost about a third of a cold
# start. Everything above and argparse load anyway; subprocess and selectors
# with a server command, http.client with a URL.

if __name__ == "__main__":
    # A run of the command, not an import: what the module body and the
    # parser make lives until the process exits, so collecting it while it is
    # made is wasted work (see the end of the file, where collection resumes).
    gc.disable()
if __name__ == "__main__" and "gettext" not in sys.modules:
    # argparse has gettext translate its messages, and gettext compiles its
    # regular expressions as it loads: a tenth of a cold start's instructions.
    # CPython ships no translation of them, so a run loads argparse with a
    # stand-in that returns each message as it is; an import, the real one.
    sys.modules["gettext"] = type(sys)("gettext")
    sys.modules["gettext"].gettext = lambda message: message
    sys.modules["gettext"].ngettext = lambda one, many, n: one if n == 1 else many
    try:
        import argparse
    finally:
        del sys.modules["gettext"]
else:
    import argparse

__version__ = "0.1.0"

__all__ = [
    "Client",
    "MCPError",
    "UsageError",
    "ServerError",
    "ProtocolError",
    "ConnectionLost",
    "AuthError",
    "RequestTimeout",
    "LaunchError",
    "CommandNotFound",
    "SkillRefused",
    "fetch_skill",
    # The protocol versions spoken, and the defaults and limits the Client's
    # arguments and documentation name: every constant without an underscore.
    "LATEST_PROTOCOL_VERSION",
    "LATEST_LEGACY_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "MODERN_PROTOCOL_VERSIONS",
    "LEGACY_PROTOCOL_VERSIONS",
    "LOG_LEVELS",
    "DEFAULT_TIMEOUT",
    "DEFAULT_MAX_BYTES",
    "STDERR_TAIL_BYTES",
    "SHUTDOWN_GRACE",
    "MAX_IN_FLIGHT",
    "MAX_PAGES",
    "SKILL_MAX_FILES",
    "SKILL_MAX_BYTES",
    "PROBE_TIMEOUT",
    "MAX_INPUT_ROUNDS",
    "MAX_TIME_FACTOR",
    "MIN_POLL_INTERVAL",
    "ENV_ALLOWLIST",
    "main",
    "__version__",
]


# ---------------------------------------------------------------------------
# Part I: the library
# ---------------------------------------------------------------------------
#
# What ``import mcp_invoke`` gives: Client and its exceptions, and everything
# they stand on. Nothing here names anything of Part II; it never prints,
# never exits, and reads no option of the command line.


# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

# Windows (CPython 3.8+ on Windows 10+): where a concern differs, one
# ``if _WINDOWS:`` holds both halves, chosen once, as subprocess.py does.
_WINDOWS = os.name == "nt"
# The longest a wait goes without letting Ctrl-C's handler run: a POSIX signal
# interrupts any wait; on Windows neither a lock's wait nor select() is, so
# waits that may be long are cut into steps this long there.
_WAIT_STEP = 0.1 if _WINDOWS else 3600.0
# Revisions with per-request metadata and no handshake (2026-07-28 basic/versioning).
MODERN_PROTOCOL_VERSIONS = ("2026-07-28",)
# Handshake-era revisions whose answer to `initialize` we accept (2025-11-25
# basic/lifecycle, "Version Negotiation").
LEGACY_PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_PROTOCOL_VERSIONS = MODERN_PROTOCOL_VERSIONS + LEGACY_PROTOCOL_VERSIONS
LATEST_PROTOCOL_VERSION = MODERN_PROTOCOL_VERSIONS[0]
LATEST_LEGACY_VERSION = LEGACY_PROTOCOL_VERSIONS[0]
# Errors only a modern server sends; one in answer to the probe means modern:
# HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion.
_MODERN_ERRORS = (-32020, -32021, -32022)
_HEADER_MISMATCH = -32020
# Errors to initialize that no handshake-era server gives: the server is modern.
_NO_HANDSHAKE = (-32601,) + _MODERN_ERRORS
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
# Protocol versions are dates (basic/versioning); later ones are modern.
# Regular expressions here stay strings: re compiles each on first use and
# caches it, so importing the module (and --version) compiles none of them.
_VERSION_FORMAT = r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z"
_UNSUPPORTED_VERSION = -32022
_METHOD_NOT_FOUND = -32601
_INVALID_PARAMS = -32602  # among others, a task the server does not know (tasks/get)
# Requests that may answer input_required (2026-07-28 basic/patterns/mrtr).
_MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
# The resultType values of the core protocol; any other is invalid (2026-07-28
# basic/index, "ResultType"), until an extension we declare adds one.
_RESULT_TYPES = ("complete", "input_required")
# The server capability a request needs, as a path into the capabilities
# (basic/lifecycle, "Capability Negotiation": only capabilities both sides
# declared are used); each era adds its own (see _Era.needs).
_CAPABILITY_OF = {
    "tools/list": ("tools",), "tools/call": ("tools",), "resources/list": ("resources",),
    "resources/templates/list": ("resources",), "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts",), "prompts/get": ("prompts",),
    "completion/complete": ("completions",), "logging/setLevel": ("logging",),
    "skills/list": ("extensions", "io.modelcontextprotocol/skills"),
    "skills/get": ("extensions", "io.modelcontextprotocol/skills"),
    "resources/directory/read": ("extensions", "io.modelcontextprotocol/skills",
                                 "directoryRead"),
}
# Tasks (2025-11-25 basic/utilities/tasks; the 2026-07-28 extension, spec
# extensions/tasks.md): the extension's id, one key however many dots it holds.
_TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
_RELATED_TASK = "io.modelcontextprotocol/related-task"
_TASK_STATES = ("working", "input_required", "completed", "failed", "cancelled")
_TASK_ENDS = ("completed", "failed", "cancelled")
# Skills a server publishes (spec extensions/skills.md): the extension's id, and
# the limits every host must accept (its "Limits"), which this one keeps to.
_SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_MAX_FILES = 512
SKILL_MAX_BYTES = 16 * 1024 * 1024
_SKILL_FILE = "SKILL.md"
# Polling a task never comes faster than this, whatever interval the server asks for.
MIN_POLL_INTERVAL = 0.05
# Elicitation modes this client declares and answers (client/elicitation).
_ELICITATION_MODES = ("form", "url")
_ELICIT_ACTIONS = ("accept", "decline", "cancel")
# The list requests, each with the key of its items (server/utilities/pagination).
_LISTS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
          "resources/templates/list": "resourceTemplates", "skills/list": "skills"}
# The list each list_changed notification is about, and the flag that asks a
# 2026-07-28 server for it (basic/patterns/subscriptions, "Notification Filter").
_LIST_CHANGES = {"notifications/tools/list_changed": ("tools", "toolsListChanged"),
                 "notifications/prompts/list_changed": ("prompts", "promptsListChanged"),
                 "notifications/resources/list_changed": ("resources", "resourcesListChanged")}
_SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
# Logging levels, least severe first (server/utilities/logging).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# Per request; long enough for a search backend or a first `uvx` install.
DEFAULT_TIMEOUT = 60.0
# One message from the server; bounds the memory a runaway server can take.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
# How much of the server's stderr is kept for error messages.
STDERR_TAIL_BYTES = 64 * 1024
# Each shutdown step (stdin closed, then SIGTERM) gets this long before the next.
SHUTDOWN_GRACE = 2.0
# Requests kept in flight at once by Client.batch.
MAX_IN_FLIGHT = 64
# A list longer than this many pages is treated as a server bug.
MAX_PAGES = 1000
# How long server/discover may go unanswered before initialize is tried too;
# legacy servers answer unknown methods at once, or never.
PROBE_TIMEOUT = 3.0
# A server asking for input more often than this on one request is looping.
MAX_INPUT_ROUNDS = 10
# Without max_time, progress can stretch a request to this many timeouts at most.
MAX_TIME_FACTOR = 10

# After the server's output ends, how long to wait for its last stderr and exit status.
_LINGER = 0.5
# Seconds a watch's resources/unsubscribe may take as it ends: a courtesy only.
_UNSUBSCRIBE_WAIT = 2.0
# Longest wait without looking at the server process (it may die while a child
# it started holds the pipes open); on Windows also a step of Ctrl-C's.
_QUIET_CHECK = min(1.0, _WAIT_STEP)
# One os.read; large enough for big results, small enough not to waste memory.
_READ_SIZE = 64 * 1024
# Frames given to one os.writev: POSIX allows at least 16, Linux and the BSDs 1024.
_IOV_MAX = (os.sysconf("SC_IOV_MAX") if "SC_IOV_MAX" in getattr(os, "sysconf_names", ())
            else 16)
# Warnings of one kind (non-JSON lines, invalid ids, ...) reported before the rest are not.
_NOISE_WARNINGS = 10
_ENOUGH = {"noise": "server wrote more non-JSON lines to stdout; no longer reporting them"}
# Server requests held while the probe has not settled the era; more are dropped.
_DEFERRED_MAX = 64
# Servers whose era is remembered; those longest unchanged are forgotten first.
_ERAS_KEPT = 1000
# Lines of a pin mismatch's diff shown for one item.
_DIFF_LINES = 200
# Lines of server stderr quoted in an error message.
_TAIL_LINES = 3
# JSON nested deeper than this is printed compact even on a terminal: indenting
# it would make the output grow with the square of the depth.
_PRETTY_DEPTH = 32

# Variables a server gets by default; secrets in the client's environment stay there.
ENV_ALLOWLIST = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR", "TZ",
    # Windows names, passed where present.
    "SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERNAME",
    "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA",
    "WINDIR",
)

# Nesting followed when a schema is only described (types, signatures), not checked.
_MAX_SCHEMA_DEPTH = 10
# Schema parts read to find what a tool's arguments take (types, signatures).
_MAX_PARTS = 5000
# Longest a schema check may take; servers write the schemas, patterns included.
_CHECK_SECONDS = 2.0
# Evaluated items a check keeps for unevaluated* (some tens of MB): $refs can make
# a small schema and a large value ask for gigabytes within the time above.
_MAX_TRACKED = 2000000
# A value quoted in a schema message is cut to this many characters.
_SHOW_CHARS = 60
# Most of a WWW-Authenticate header kept: OAuth reads its parameters.
_CHALLENGE_CHARS = 65536
# A server's error message is cut to this many characters in ours.
_MESSAGE_CHARS = 1000
# Longest diagnostic line on stderr, whatever a server put into it.
_LINE_CHARS = 4000
# Longest --timeout or --max-time: a year (the clocks below it take no more).
_MAX_SECONDS = 365 * 24 * 3600
# Most bytes read from stdin or a file given on the command line.
_INPUT_LIMIT = DEFAULT_MAX_BYTES
# Enum members listed in a message; a long list of time zones helps nobody.
_SHOW_ENUM = 10
# JSON Schema dialects a $schema may name (basic, "JSON Schema Usage"), as the URI
# without its scheme and final "#", and the year or draft number that orders them.
_DIALECTS = (
    ("json-schema.org/draft/2020-12/schema", 2020),
    ("json-schema.org/draft/2019-09/schema", 2019),
    ("json-schema.org/draft-07/schema", 7),
    ("json-schema.org/draft-06/schema", 6),
    ("json-schema.org/draft-04/schema", 4),
)
# Config `type` values meaning the server is reached over HTTP (Streamable HTTP or SSE).
_HTTP_TYPES = ("http", "sse", "streamable-http", "streamableHttp")
# VS Code's predefined ${name} variables: they name editor state, not environment variables.
_VSCODE_VARIABLES = frozenset((
    "userHome", "workspaceFolder", "workspaceFolderBasename", "file", "fileWorkspaceFolder",
    "relativeFile", "relativeFileDirname", "fileBasename", "fileBasenameNoExtension",
    "fileExtname", "fileDirname", "fileDirnameBasename", "cwd", "lineNumber", "columnNumber",
    "selectedText", "execPath", "defaultBuildTask", "pathSeparator",
))

_CLIENT_INFO = {"name": "mcp_invoke", "version": __version__}
_EXIT_TOOL_ERROR = 1
_EXIT_INTERRUPTED = 130


# ---------------------------------------------------------------------------
# Exceptions
# ---------------------------------------------------------------------------

class MCPError(Exception):
    """Base of every error mcp_invoke raises.

    Attributes: ``method`` (the request it concerns, or None), ``stderr_tail``
    (the last of the server's stderr, possibly empty), ``result`` (what the
    server gave of the result before the failure, as a list's pages so far,
    or None) and the class attribute ``exit_code``, the command line's exit
    status for this failure.
    """

    exit_code = 1
    result = None

    def __init__(self, message, method=None, stderr_tail=""):
        Exception.__init__(self, message)
        self.message = message
        self.method = method
        self.stderr_tail = stderr_tail

    def __str__(self):
        text = self.message
        if self.method and self.method not in text:
            text += " (during %s)" % self.method
        quoted = _tail_lines(self.stderr_tail)
        if quoted:
            text += "; server stderr: " + quoted
        return text


class UsageError(MCPError):
    """Bad input from the caller: arguments, options, JSON."""

    exit_code = 2


class ServerError(MCPError):
    """The server answered a request with a JSON-RPC error.

    Attributes: ``code``, ``data`` and ``message`` of the error object.
    """

    exit_code = 3

    def __init__(self, message, method=None, code=None, data=None):
        MCPError.__init__(self, message, method)
        self.code = code
        self.data = data

    def __str__(self):
        text = self.message
        if self.code is not None:
            text = "server error %s: %s" % (self.code, self.message)
        if self.method:
            text += " (%s)" % self.method
        if self.data is not None:  # often the useful part: which field, and why
            text += "; data: " + _cut(json.dumps(self.data, ensure_ascii=False, default=repr))
        return text


class ProtocolError(MCPError):
    """The server broke the protocol: bad frames, versions, oversized messages.

    Attributes: ``result``, the result the server sent, when the violation
    is in one (the command line still shows it), else None; ``status``, the
    HTTP status of an answer that broke it, else None.
    """

    exit_code = 4
    status = None

    def __init__(self, message, method=None, stderr_tail="", result=None):
        MCPError.__init__(self, message, method, stderr_tail)
        self.result = result


class _BadErrorObject(ProtocolError):
    """An error answer that is not a JSON-RPC error object: exit 4, yet to the probe an error."""


class _Unanswerable(ProtocolError):
    """A server request the client refuses: a JSON-RPC error ``code`` in answer
    to a legacy request, this ProtocolError for a modern input request."""

    code = _INVALID_PARAMS


class ConnectionLost(MCPError):
    """The server went away: it exited, closed its output or stopped reading;
    over HTTP, the connection failed or the server answered 5xx.

    Attributes: ``returncode``, the server's exit status if it had exited
    (negative: killed by that signal), else None; ``status``, the HTTP
    status that ended it, else None.
    """

    exit_code = 5

    def __init__(self, message, method=None, stderr_tail="", returncode=None, status=None):
        MCPError.__init__(self, message, method, stderr_tail)
        self.returncode = returncode
        self.status = status


class _SessionGone(ConnectionLost):
    """The server answered 404 to a request of our session: it ended the session
    (``session``, the id the request went with)."""

    session = None


class AuthError(MCPError):
    """The server refused to authenticate or authorize us (HTTP 401 or 403).

    Attributes: ``status`` and ``www_authenticate`` (the header's value, or "").
    Every failed OAuth step raises it too, naming the step.
    """

    exit_code = 6
    generation = None  # the OAuth token a refused request carried (_OAuth.generation)

    def __init__(self, message, method=None, status=None, www_authenticate=""):
        MCPError.__init__(self, message, method)
        self.status = status
        self.www_authenticate = www_authenticate


class RequestTimeout(MCPError):
    """A request got no answer before its deadline. Attribute ``timeout``:
    seconds; ``task_id``: the task a call stopped waiting for, which goes on
    (None for any other request)."""

    exit_code = 124
    task_id = None

    def __init__(self, message, method=None, stderr_tail="", timeout=None):
        MCPError.__init__(self, message, method, stderr_tail)
        self.timeout = timeout


class SkillRefused(MCPError):
    """A skill the server publishes, or one of its files, failed verification
    against its entry (size, digest, front matter, a file not listed), or was
    refused before any read (over the limits, a URI outside the skill, no
    file list). Attributes ``skill`` (its SKILL.md URI) and ``uri`` (the file,
    or None for the entry as a whole)."""

    exit_code = 7

    def __init__(self, message, skill=None, uri=None):
        MCPError.__init__(self, message)
        self.skill, self.uri = skill, uri


class LaunchError(MCPError):
    """The server command could not be started (not executable, bad format)."""

    exit_code = 126


class CommandNotFound(LaunchError):
    """The server command does not exist."""

    exit_code = 127


# ---------------------------------------------------------------------------
# Shared helpers: small functions every part uses, files, directories
# ---------------------------------------------------------------------------

# -- values and messages ------------------------------------------------------

def _cut(text, limit=_MESSAGE_CHARS):
    """Text from a server, cut to ``limit`` characters for a message of ours."""
    return text if len(text) <= limit else text[:limit] + "..."


def _arg(value):
    """A caller's value as a usage error shows it."""
    return _cut(repr(value), _SHOW_CHARS)


def _tail_lines(tail, lines=_TAIL_LINES, limit=400):
    """The last few non-blank lines of a stderr tail, joined on one line."""
    kept = [line.strip() for line in tail.splitlines() if line.strip()][-lines:]
    text = " | ".join(kept)
    return text if len(text) <= limit else "..." + text[-limit:]


def _dict(value):
    return value if isinstance(value, dict) else {}


def _cwd():
    """The current directory; UsageError if it has been deleted under us."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        raise UsageError("the current directory no longer exists (it was deleted); "
                         "cd to one that does")


def _list(value):
    return value if isinstance(value, list) else []


def _show(value):
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= _SHOW_CHARS else text[:_SHOW_CHARS - 3] + "..."


# -- escaping: one function for each place text goes --------------------------
#
# What a server sends may hold what rewrites a screen, forges a line or hides
# a message. Each place our output goes has one escaper:
#
#   _flat(text)            a server's text inside a message line of ours: line
#                          breaks become \n (the line is escaped as a whole
#                          where it is written)
#   _terminal_line(text)   a diagnostic line on stderr: one line, cut short,
#                          escaped by _terminal_text
#   _terminal_text(text)   text for a terminal (stdout, stderr): control
#                          characters as \x.. escapes, hidden ones as <U+XXXX>
#   _json_text(text)       JSON text written out (--json, --events, a pin):
#                          what JSON leaves raw that a terminal or a JavaScript
#                          reader trips on, as \u escapes
#   _header_value(value)   an HTTP header's value (Transports: Streamable HTTP)
#   _ascii_target(parts)   an HTTP request target, percent-encoded (the same)
#
# No file name is made from what a server sends: saved content is named by
# its hash, a session by a name checked against _SESSION_NAME.

def _flat(text):
    """A server's text within a line of ours: a line break in it shows as \\n, so it
    cannot forge a line of its own (the rest is neutralised where it is written)."""
    text = text if isinstance(text, str) else json.dumps(text)
    return text.replace("\r", "\\r").replace("\n", "\\n")


# Hidden text: characters that change what a person sees without showing
# themselves, used to smuggle instructions past a reader: every
# Default_Ignorable_Code_Point of Unicode's DerivedCoreProperties (tag
# characters U+E0000-E007F, which spell ASCII; bidirectional marks,
# embeddings, overrides and isolates; zero-width characters; the soft hyphen,
# Hangul fillers, Mongolian and Khmer invisibles, musical format characters;
# variation selectors, each of which can carry a nibble), and the
# interlinear annotation marks U+FFF9-FFFB. Shown as <U+XXXX> for a person
# but where _SHOWN_AS_IS leaves them; --json keeps them.
_HIDDEN_RANGES = ((0x00ad, 0x00ad), (0x034f, 0x034f), (0x061c, 0x061c), (0x115f, 0x1160),
                  (0x17b4, 0x17b5), (0x180b, 0x180f), (0x200b, 0x200f), (0x202a, 0x202e),
                  (0x2060, 0x206f), (0x3164, 0x3164), (0xfe00, 0xfe0f), (0xfeff, 0xfeff),
                  (0xffa0, 0xffa0), (0xfff0, 0xfffb), (0x1bca0, 0x1bca3),
                  (0x1d173, 0x1d17a), (0xe0000, 0xe0fff))
_HIDDEN_CLASS = u"".join(u"%s-%s" % (chr(low), chr(high)) for low, high in _HIDDEN_RANGES)
_HIDDEN = u"[%s]" % _HIDDEN_CLASS
# Terminal control characters a server could use to rewrite the user's screen:
# C0 but tab and newline, DEL, C1; the line and paragraph separators, which
# str.splitlines() and JavaScript take for line breaks (a forged line to
# them); lone surrogates (from JSON escapes), which no encoding can write;
# and the hidden characters.
_CONTROL = u"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff%s]" % _HIDDEN_CLASS
# What is left alone (CLI.md "Hidden text"): an emoji tag sequence, that is a
# subdivision flag (U+1F3F4, tag letters, U+E007F) of the three that Unicode
# recommends (England, Scotland, Wales: any other spelling would carry a
# message), a zero-width joiner between two emoji (with their modifiers
# and presentation selector), and one presentation selector (U+FE0E text,
# U+FE0F emoji) after an emoji or in a keycap: a second one would carry a message.
_EMOJI = (u"[\u00a9\u00ae\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"
          u"\U0001f000-\U0001faff]")
_SHOWN_AS_IS = (
    u"\U0001f3f4\U000e0067\U000e0062(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063"
    u"\U000e0074|\U000e0077\U000e006c\U000e0073)\U000e007f"
    u"|%s[\ufe0f\U0001f3fb-\U0001f3ff]*\u200d(?=%s)" % (_EMOJI, _EMOJI)
    + u"|%s[\ufe0e\ufe0f](?![\ufe00-\ufe0f])|[0-9#*]\ufe0f\u20e3" % _EMOJI)
# In --json output, JSON escapes C0 itself; these it would leave raw.
_JSON_UNSAFE = u"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
# The same two sets within ASCII, as bytes: output is checked on its encoded
# bytes, which is several times faster than a regular expression on the text.
_CONTROL_ASCII = bytes(range(0x00, 0x09)) + bytes(range(0x0b, 0x20)) + b"\x7f"
_JSON_UNSAFE_ASCII = b"\x7f"


def _terminal_text(text):
    """Text safe for a terminal: control characters shown as escapes, hidden
    ones as <U+XXXX>."""
    if not _holds(text, _CONTROL, _CONTROL_ASCII):  # most text: no copy
        return text
    text = text.replace("\r\n", "\n")
    if re.search(_HIDDEN, text):
        return _visible(text)
    return re.sub(_CONTROL, _escape_control, text)


def _holds(text, pattern, ascii_unsafe):
    """Whether ``text`` holds a character of ``pattern``, a character class:
    ASCII text is looked at as bytes, against ``ascii_unsafe``, the same class
    within ASCII (compiling _CONTROL costs more than a whole `tools` run)."""
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate is not ASCII
    if len(data) == len(text):
        return len(data.translate(None, ascii_unsafe)) != len(data)
    return re.search(pattern, text) is not None


def _escape_control(match):
    code = ord(match.group())
    return "\\x%02x" % code if code < 0x100 else "\\u%04x" % code


def _visible(text):
    """``text`` with hidden characters as <U+XXXX>, but for the sequences left alone."""
    parts, start = [], 0
    for kept in re.finditer(_SHOWN_AS_IS, text):
        parts.append(_visible_part(text[start:kept.start()]))
        parts.append(kept.group())
        start = kept.end()
    parts.append(_visible_part(text[start:]))
    return "".join(parts)


def _visible_part(text):
    return text.translate(_visible_table())


def _visible_table(table={}):
    """What _visible_part makes of each character it changes, built on first
    use (str.translate: a result with millions of them takes a second, not ten)."""
    if not table:
        for code in itertools.chain(range(0x00, 0x09), range(0x0b, 0x20), range(0x7f, 0xa0),
                                    (0x2028, 0x2029), range(0xd800, 0xe000)):
            table[code] = "\\x%02x" % code if code < 0x100 else "\\u%04x" % code
        for low, high in _HIDDEN_RANGES:
            for code in range(low, high + 1):
                table[code] = "<U+%04X>" % code
    return table


def _json_text(text, unsafe=_JSON_UNSAFE):
    """JSON text with the characters a terminal or a JavaScript reader trips on
    (``unsafe``, a character class) as \\u escapes, surrogate pairs for those
    past U+FFFF."""
    return re.sub(unsafe, _json_escape, text)


def _json_escape(match):
    data = match.group().encode("utf-16-be", "surrogatepass")
    return "".join("\\u%02x%02x" % (data[i], data[i + 1]) for i in range(0, len(data), 2))


def _terminal_line(text):
    # Cut before neutralising: escapes make a line longer, never a cut one whole again.
    return _terminal_text(_cut(" | ".join(part for part in text.splitlines() if part.strip()),
                            _LINE_CHARS))


# -- time ---------------------------------------------------------------------

class _Deadline(object):
    """When something must be done by (monotonic), and why, said when it passes:
    the one clock. It is computed once where a wait begins (an OAuth renewal or
    one of its steps, a connect, a session's greeting) and handed to every
    socket, timer and loop that waits within it, like subprocess's endtime.
    A request's own deadlines are its _Call's; a wait hands the transport's
    receive the soonest of them as one (at_time)."""

    __slots__ = ("at", "why")

    def __init__(self, seconds, why=None):  # why: None where passing it says nothing
        self.at = time.monotonic() + min(seconds, _MAX_SECONDS)
        self.why = why

    @classmethod
    def at_time(cls, at, why=None):
        """The deadline at monotonic time ``at`` (a request's, from its _Call)."""
        deadline = cls.__new__(cls)
        deadline.at, deadline.why = at, why
        return deadline

    def left(self):
        left = self.at - time.monotonic()
        return left if left > 0 else 0.0

    def passed(self):
        return time.monotonic() >= self.at

    def within(self, seconds, why):
        """This deadline, or an earlier one ``seconds`` from now."""
        sooner = _Deadline(seconds, why)
        return sooner if sooner.at < self.at else self


class _Overtime(Exception):
    """A bounded computation ran out of time."""


def _raise_overtime(signum, frame):
    raise _Overtime()


def _same_secret(text, other):
    """Whether two texts are equal, in time that does not tell where they differ."""
    import hmac  # lazy: only where a secret is compared
    return hmac.compare_digest(text.encode("utf-8", "replace"), other.encode("utf-8", "replace"))


# _within(seconds, function): function() under a wall-clock limit, raising
# _Overtime past it. For what nothing else can interrupt, and only that: a
# schema check (a server's pattern running in the regex engine, a $ref
# fan-out), and a handler answering the server (on_elicit, on_sample: a
# person typing, a command sampling), which runs within the time limit of
# the requests it serves (Client._fulfil). A schema check inside a handler
# is so bounded by the request's limit too. A signal does it, which even the
# regex engine notices (it checks for them as it goes); off the main thread
# (no signals there) the function runs unbounded. POSIX: SIGALRM from an
# interval timer; nested, the inner limit is cut to what the outer one has
# left, and the outer one is set again on the way out (at once, if it has
# passed meanwhile). Windows, which has neither: a timer of the system's
# thread pool calls the C runtime's raise(SIGTERM) itself, without the
# interpreter (whose lock the regex engine holds), and nothing else sends
# SIGTERM there; nested, each limit has its own timer. That call is only
# sound where the callback's and raise's conventions agree: 64-bit Windows;
# on 32-bit the function runs unbounded.
if _WINDOWS:
    def _within(seconds, function):
        try:
            previous = signal.signal(signal.SIGTERM, _raise_overtime)
        except (ValueError, AttributeError):
            return function()
        timer = None
        try:
            timer = _AlarmTimer(min(seconds, _MAX_SECONDS))
            return function()
        finally:
            if timer is not None:
                try:
                    timer.cancel()  # and a raise under way is waited for
                    _pending_signals()
                except _Overtime:
                    pass  # it came as the function returned: too late to count
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)

    def _pending_signals():
        """A call: where the interpreter runs the handlers of signals that came."""

    class _AlarmTimer(object):
        """raise(SIGTERM) in ``seconds``, from the system's thread pool."""

        def __init__(self, seconds):
            import ctypes  # lazy: Windows only
            from ctypes import wintypes
            self.handle = None
            if ctypes.sizeof(ctypes.c_void_p) != 8:
                return  # see above: unbounded
            kernel = self._kernel = ctypes.WinDLL("kernel32", use_last_error=True)
            kernel.CreateTimerQueueTimer.argtypes = (
                ctypes.POINTER(wintypes.HANDLE), wintypes.HANDLE, ctypes.c_void_p,
                ctypes.c_void_p, wintypes.DWORD, wintypes.DWORD, wintypes.ULONG)
            kernel.DeleteTimerQueueTimer.argtypes = (wintypes.HANDLE, wintypes.HANDLE,
                                                     wintypes.HANDLE)
            callback = ctypes.cast(getattr(ctypes.CDLL("ucrtbase"), "raise"), ctypes.c_void_p)
            handle = wintypes.HANDLE()
            if not kernel.CreateTimerQueueTimer(
                    ctypes.byref(handle), None, callback, signal.SIGTERM,
                    max(1, min(int(seconds * 1000), 0xFFFFFFFE)), 0, 0x8):  # WT_EXECUTEONLYONCE
                raise ctypes.WinError(ctypes.get_last_error())
            self.handle = handle

        def cancel(self):
            handle, self.handle = self.handle, None
            if handle is not None:
                self._kernel.DeleteTimerQueueTimer(None, handle, -1)  # INVALID_HANDLE_VALUE
else:
    def _within(seconds, function):
        try:
            previous = signal.signal(signal.SIGALRM, _raise_overtime)
        except (ValueError, AttributeError):
            return function()
        started = time.monotonic()
        seconds = min(seconds, _MAX_SECONDS)  # the timer takes no more (an infinite max_time)
        outer = signal.setitimer(signal.ITIMER_REAL, seconds)[0]
        if 0 < outer < seconds:
            signal.setitimer(signal.ITIMER_REAL, outer)
        try:
            return function()
        finally:
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6) if outer else 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


class _Unsplit(object):
    """Functions a stop signal must not split: a write to the server and the
    note of what it took. Ctrl-C between the two would leave what went out
    queued to go again: a tool called twice.

    A function is marked with ``@_Unsplit.marked`` and ends with::

        finally:
            if _Unsplit.later:
                _Unsplit.release()

    A signal handler that knows of it (the command line's) hands its exception
    and the frame the signal interrupted to ``deliver``, which raises it now,
    or, when a marked function is running in that thread (the main one: Python
    runs handlers there only), as that function ends. Under any other handler
    a KeyboardInterrupt still lands inside, so a marked function's transport
    marks itself unsure as it begins and sure as it ends: one found unsure was
    cut short, cannot know what went out, and writes nothing more (see
    _StdioTransport._flush), however many interrupts came. Nothing is done
    per call but that test of ``later``: the handler finds the function by
    walking the interrupted frames."""

    __slots__ = ()
    codes = set()  # the marked functions' code objects
    later = []  # (the exception deferred, the frame it waits for), at most one

    @staticmethod
    def marked(function):
        _Unsplit.codes.add(function.__code__)
        return function

    @staticmethod
    def deliver(exception, frame):
        """From a signal handler: raise ``exception`` now, or as the marked
        function running in ``frame`` or a caller of it ends (the outermost:
        one may call another). A second one while one waits is dropped: the
        first stops the run already."""
        frame = _running(frame, _Unsplit.codes)
        if frame is None:
            raise exception
        if not _Unsplit.later:
            _Unsplit.later.append((exception, frame))

    @staticmethod
    def release():
        """At the end of a marked function: raise what waits for it, over any
        other exception (a stop wins)."""
        exception, frame = _Unsplit.later[0]
        if frame is sys._getframe(1):
            del _Unsplit.later[:]
            raise exception


def _running(frame, codes):
    """The outermost frame, ``frame`` or a caller of it, that runs one of
    ``codes`` (code objects), or None: what a signal interrupted."""
    found = None
    while frame is not None:
        if frame.f_code in codes:
            found = frame
        frame = frame.f_back
    return found


# -- files and directories ----------------------------------------------------

def _sha256():
    """The SHA-256 constructor, without hashlib up to Python 3.11, whose own
    _sha256 module spares a cold start hashlib's OpenSSL (3 ms of a run that
    names a cache file by a hash); from 3.12 that module is _sha2, not in
    every version's standard library, so hashlib."""
    try:
        from _sha256 import sha256
    except ImportError:
        from hashlib import sha256
    return sha256


def _xdg(environ, name, default):
    """An XDG base directory: the variable if it holds an absolute path (the XDG
    Base Directory spec has relative ones ignored), else ``default``."""
    value = environ.get(name)
    return value if value and os.path.isabs(value) else default


def _is_link(info):
    """Whether ``info`` (an lstat result) is a link: a symlink, or on Windows
    any reparse point (a junction too)."""
    return (info.st_mode & 0o170000 == 0o120000
            or getattr(info, "st_file_attributes", 0) & 0x400)  # FILE_ATTRIBUTE_REPARSE_POINT


def _refused_link(path):
    return OSError(errno.ELOOP, "%s is a symlink, which is not followed" % path, path)


# Where this program keeps its files, and how it opens them without following
# a link (CLI.md "Windows"). POSIX: the XDG places; O_NOFOLLOW and a
# directory's descriptor (dir_fd) make each step about the file looked at, and
# ownership is stat's. Windows: %LOCALAPPDATA%\mcp_invoke; there is neither
# O_NOFOLLOW nor dir_fd, so a link or junction is refused by a look before
# opening; a profile's AppData is its user's alone by its ACL, and stat has
# no owner there, so ownership is not judged.
if _WINDOWS:
    def _home(environ):
        return environ.get("USERPROFILE") or os.path.expanduser("~")

    def _state_home(environ):
        """%LOCALAPPDATA%\\mcp_invoke: tokens, sessions, records, the history."""
        local = environ.get("LOCALAPPDATA")
        return os.path.join(local if local and os.path.isabs(local) else
                            os.path.join(_home(environ), "AppData", "Local"), "mcp_invoke")

    def _cache_home(environ):
        return os.path.join(_state_home(environ), "cache")

    def _config_home(environ):
        """%APPDATA%: where other clients keep their settings."""
        roaming = environ.get("APPDATA")
        return (roaming if roaming and os.path.isabs(roaming) else
                os.path.join(_home(environ), "AppData", "Roaming"))

    def _owned(info):
        return True

    def _others_may(info, bits):
        return 0  # stat's bits are not the ACL that says who may

    def _open_file(path, flags, mode=0o777, follow=True):
        """os.open, binary and not inherited, and (unless ``follow``) refused
        (ELOOP) where ``path`` is a link. No FIFO can be met here."""
        if not follow:
            try:
                if _is_link(os.lstat(path)):
                    raise _refused_link(path)
            except FileNotFoundError:
                pass
        return os.open(path, flags | os.O_BINARY | os.O_NOINHERIT, mode)

    def _open_folder(directory):
        """A handle on ``directory`` for the *_at calls (its path, here),
        refused (ELOOP) when it is a link."""
        if _is_link(os.lstat(directory)):
            raise _refused_link(directory)
        return directory

    def _close_folder(folder):
        pass

    def _lstat_at(name, folder):
        return os.lstat(os.path.join(folder, name))

    def _create_at(name, mode, folder):
        return os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL
                       | os.O_BINARY | os.O_NOINHERIT, mode)

    def _set_mode(fd, mode):
        pass  # permissions are the directory's ACL

    def _replace_at(name, new_name, folder):
        os.replace(os.path.join(folder, name), os.path.join(folder, new_name))

    def _unlink_at(name, folder):
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass

    def _folder_at(name, folder, create=False):
        """The directory ``name`` in ``folder`` (made first, with ``create``),
        refused (ELOOP) where it is a link or junction."""
        path = os.path.join(folder, name)
        if create:
            try:
                os.mkdir(path)
            except FileExistsError:
                pass
        if _is_link(os.lstat(path)):
            raise _refused_link(path)
        if not os.path.isdir(path):
            raise OSError(errno.ENOTDIR, "not a directory", path)
        return path

    def _remove_tree_at(name, folder):
        """Remove ``name`` in ``folder`` and what it holds, never through a link."""
        import shutil  # lazy: only a directory swapped in whole needs it
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if _is_link(info) or not os.path.isdir(path):
            os.unlink(path) if not os.path.isdir(path) else os.rmdir(path)
        else:
            shutil.rmtree(path)

    def _try_lock(fd):
        """Take the lock of ``fd``'s file, or raise OSError if another holds it;
        it ends when ``fd`` closes."""
        import msvcrt  # lazy: Windows only
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
else:
    def _home(environ):
        return environ.get("HOME") or os.path.expanduser("~")

    def _state_home(environ):
        """$XDG_STATE_HOME/mcp_invoke (default ~/.local/state/mcp_invoke): tokens,
        sessions' logs, records, the shell's history."""
        return os.path.join(_xdg(environ, "XDG_STATE_HOME",
                                 os.path.join(_home(environ), ".local", "state")), "mcp_invoke")

    def _cache_home(environ):
        """$XDG_CACHE_HOME/mcp_invoke (default ~/.cache/mcp_invoke)."""
        return os.path.join(_xdg(environ, "XDG_CACHE_HOME",
                                 os.path.join(_home(environ), ".cache")), "mcp_invoke")

    def _config_home(environ):
        return _xdg(environ, "XDG_CONFIG_HOME", os.path.join(_home(environ), ".config"))

    def _owned(info):
        return info.st_uid == os.getuid()

    def _others_may(info, bits):
        """The permission ``bits`` (of group and others) that ``info`` grants."""
        return info.st_mode & bits

    def _open_file(path, flags, mode=0o777, follow=True):
        """os.open that never waits on a FIFO (opened non-blocking: one nobody
        writes reads as empty, one nobody reads fails, ENXIO; then blocking
        again) and, unless ``follow``, never opens a symlink (ELOOP)."""
        fd = os.open(path, flags | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW), mode)
        os.set_blocking(fd, True)
        return fd

    def _open_folder(directory):
        try:
            return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(directory):
                raise _refused_link(directory)
            raise

    _close_folder, _set_mode = os.close, os.fchmod

    def _lstat_at(name, folder):
        return os.stat(name, dir_fd=folder, follow_symlinks=False)

    def _create_at(name, mode, folder):
        return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode,
                       dir_fd=folder)

    def _replace_at(name, new_name, folder):
        os.replace(name, new_name, src_dir_fd=folder, dst_dir_fd=folder)

    def _unlink_at(name, folder):
        try:
            os.unlink(name, dir_fd=folder)
        except OSError:
            pass

    def _folder_at(name, folder, create=False):
        """The directory ``name`` in ``folder`` (made first, with ``create``),
        opened without following a link; one that is a link (ELOOP) or another
        user's (EPERM) is refused: what is planted there is not written into."""
        if create:
            try:
                os.mkdir(name, 0o777, dir_fd=folder)
            except FileExistsError:
                pass
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(_lstat_at(name, folder)):
                raise _refused_link(name)
            raise
        if not _owned(os.fstat(fd)):
            os.close(fd)
            raise OSError(errno.EPERM, "%s is not this user's" % name, name)
        return fd

    def _remove_tree_at(name, folder):
        """Remove ``name`` in ``folder`` and what it holds, never through a link."""
        try:
            info = _lstat_at(name, folder)
        except FileNotFoundError:
            return
        if info.st_mode & 0o170000 != 0o040000:
            os.unlink(name, dir_fd=folder)
            return
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
        try:
            for child in os.listdir(inner):
                _remove_tree_at(child, inner)
        finally:
            os.close(inner)
        os.rmdir(name, dir_fd=folder)

    def _try_lock(fd):
        import fcntl  # lazy: POSIX only
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _private_dir(path, narrow=True):
    """``path``, a directory made (with its parents) that only its user may
    enter; an existing one is narrowed to that too, unless ``narrow`` is False
    (a directory the user named), and refused (OSError) when it is a link
    or another user's: this program's own are never reached through a link.
    Raises OSError."""
    try:
        os.makedirs(path, 0o700)
    except FileExistsError:
        if not narrow:
            return path
        info = os.lstat(path)
        if _is_link(info):
            raise _refused_link(path)
        if not _owned(info):
            raise OSError(errno.EPERM, "%s is not this user's" % path, path)
        if info.st_mode & 0o170000 == 0o040000 and _others_may(info, 0o077):
            os.chmod(path, 0o700)
    return path


def _write_whole(path, data, private=True, narrow=True, durable=True, mode=None):
    """Write ``data`` (text or bytes) to ``path`` so that a reader never sees
    half of it: into a new file beside it, then renamed over it.

    Never through a link: ``path`` and the directory holding it are taken as
    they are, and one that is a symlink is refused (a planted link would carry
    what is written anywhere the user may write); what is not a regular file
    is never renamed over. Ancestors are followed: callers resolve a directory
    the user named (os.path.realpath) and join their own names below it.

    ``private``: the file only its user may read, in a directory made by
    _private_dir (``narrow`` passed on); otherwise the umask decides for a
    new file, a replaced one keeps its permissions, and the directory must
    exist. ``mode``: the new file's permissions, whatever it replaces.
    ``durable``: on disk before the rename (a token or a pin; a cache may be
    lost). Raises OSError (ELOOP for a link); nothing is left behind.
    """
    directory, name = os.path.split(path)
    if private:
        _private_dir(directory or ".", narrow)
    folder = _open_folder(directory or ".")
    temporary = "%s.%d.tmp" % (name, os.getpid())
    try:
        try:
            info = _lstat_at(name, folder)
        except FileNotFoundError:
            info = None
        if info is not None and _is_link(info):
            raise _refused_link(path)
        if info is not None and info.st_mode & 0o170000 != 0o100000:
            raise OSError(errno.EINVAL, "not a regular file", path)
        if mode is None and info is not None:  # the new file keeps the old one's
            mode = info.st_mode & (0o600 if private else 0o777)
        _unlink_at(temporary, folder)  # left by a run that died
        fd = _create_at(temporary, 0o600 if private else 0o666, folder)
        try:
            if mode is not None:
                _set_mode(fd, mode)
            view = memoryview(data if isinstance(data, bytes) else data.encode("utf-8"))
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        _replace_at(temporary, name, folder)
    except BaseException:
        _unlink_at(temporary, folder)
        raise
    finally:
        _close_folder(folder)


class _NewDirectory(object):
    """A directory built beside its place and swapped in only when whole
    (skills get --out): a failure leaves an earlier copy as it was, and
    nothing new but the empty directories above it.

    ``base`` is a directory the user named (its own links followed: pass it
    through os.path.realpath); ``parts`` are plain names below it, the last
    the directory built. Below ``base`` nothing is reached through a link or
    written into another user's directory (see _folder_at). Files are made
    0666 less the umask: never executable. Raises OSError.
    """

    def __init__(self, base, parts):
        self._folders = [_open_folder(base)]
        try:
            for name in parts[:-1]:
                self._folders.append(_folder_at(name, self._folders[-1], create=True))
            self.name = parts[-1]
            self._new = ".%s.%d.new" % (self.name, os.getpid())
            _remove_tree_at(self._new, self._folders[-1])  # left by a run that died
            self._root = _folder_at(self._new, self._folders[-1], create=True)
            self._chain = []  # (name, folder) of the directories the last file is in
        except BaseException:
            self._close()
            raise

    def write(self, parts, data):
        """The file at ``parts`` (plain names) inside, holding ``data`` (bytes)."""
        # The directories of the last file written stay open for the next,
        # which is most often beside it: a few descriptors, whatever the depth.
        chain, same = self._chain, 0
        while same < min(len(chain), len(parts) - 1) and chain[same][0] == parts[same]:
            same += 1
        while len(chain) > same:
            _close_folder(chain.pop()[1])
        for name in parts[len(chain):-1]:
            chain.append((name, _folder_at(name, chain[-1][1] if chain else self._root,
                                           create=True)))
        fd = _create_at(parts[-1], 0o666, chain[-1][1] if chain else self._root)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def commit(self):
        """Swap it in: the old copy moved aside, the new one renamed in, the old
        removed. Whatever stops it (an error, Ctrl-C) before the new copy is
        in place puts the old one back; abandon() then removes the new one.
        Once it is in place, an old copy that cannot be removed (another
        user's files in it) is OSError naming it, left beside it."""
        parent, old = self._folders[-1], ".%s.%d.old" % (self.name, os.getpid())
        while self._chain:
            _close_folder(self._chain.pop()[1])
        _close_folder(self._root)
        self._root = None
        _remove_tree_at(old, parent)
        moved = placed = False
        try:
            try:
                _replace_at(self.name, old, parent)  # a link there is moved, not followed
                moved = True
            except FileNotFoundError:
                pass
            _replace_at(self._new, self.name, parent)
            placed = True
        finally:
            if moved and not placed:
                try:  # the old copy back where it was
                    _replace_at(old, self.name, parent)
                except OSError:
                    pass
        try:
            _remove_tree_at(old, parent)
        except OSError as e:
            raise OSError(e.errno, "the new copy is in place, but the old one could not be "
                          "removed (%s): it is left as %s" % (e.strerror, old))
        finally:
            self._close()

    def abandon(self):
        """Remove what was built, if it is not in place; the old copy stays as it was."""
        try:
            while self._chain:
                _close_folder(self._chain.pop()[1])
            if self._root is not None:
                _close_folder(self._root)
                self._root = None
            if self._folders:
                _remove_tree_at(self._new, self._folders[-1])
        except OSError:
            pass
        finally:
            self._close()

    def _close(self):
        while getattr(self, "_chain", None):
            _close_folder(self._chain.pop()[1])
        while self._folders:
            _close_folder(self._folders.pop())


def _named(path):
    """A path the user named, its directories resolved and its last part left
    as it is: the user's own links above it are followed, one at its end never
    (see _write_whole)."""
    directory, name = os.path.split(path)
    return os.path.join(os.path.realpath(directory or "."), name)


def _read_file(path, what, encoding="utf-8", wait=DEFAULT_TIMEOUT):
    """A file's text, within the limit; UsageError "cannot read <what>: why" otherwise.

    ``wait``: seconds a pipe (a FIFO, ``<(...)``) may take to give its text,
    where opening one that nobody writes would otherwise wait forever.
    """
    try:
        data = _read_waiting(path, DEFAULT_TIMEOUT if wait is None else wait)
        return _within_limit(data, what).decode(encoding)
    except (IOError, OSError, UnicodeError) as e:
        raise UsageError("cannot read %s: %s" % (what, getattr(e, "strerror", None) or e))


def _read_kept(path, warn=None, owned=True):
    """The bytes of a file this program keeps for itself (a cache, a record of
    its own), or None where there is none or it cannot be read. One that is not
    a regular file (a FIFO put there, a device) is never waited on, and, where
    ``owned``, one another user could have written (see _yours) is not
    trusted: skipped, with ``warn`` told why."""
    try:
        fd = _open_file(path, os.O_RDONLY, follow=False)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        why = ("is not a regular file" if info.st_mode & 0o170000 != 0o100000 else
               None if not owned or _yours(info) and _yours(os.stat(os.path.dirname(path)
                                                                     or "."))
               else "or its directory is not this user's alone to write")
        if why is not None:
            if warn is not None:
                warn("%s %s, so it is skipped (remove it)" % (path, why))
            return None
        with open(fd, "rb", closefd=False) as f:
            return _read_up_to(f, _INPUT_LIMIT)
    except (IOError, OSError):
        return None
    finally:
        os.close(fd)


def _read_up_to(stream, limit):
    """At most ``limit`` bytes of a binary ``stream``, to its end, a megabyte at
    a time: one read of the whole limit allocates all of it first (64 MiB, a
    tenth of a second on Windows, whatever the file holds)."""
    parts, size = [], 0
    while size < limit:
        part = stream.read(min(1 << 20, limit - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def _yours(info):
    """Whether what ``info`` (a stat result) describes could have been written
    by this user alone: owned by it, and not writable by group or others."""
    return _owned(info) and not _others_may(info, 0o022)


# Reading a file the user named, where it may be a pipe whose writer is slow
# or silent: POSIX waits in select() on the FIFO; Windows, whose select()
# takes sockets only, reads in a thread that is given up at the deadline.
if _WINDOWS:
    def _read_waiting(path, wait):
        import threading  # lazy: only for files read this way
        parts = []

        def read():
            try:
                with open(path, "rb") as f:
                    parts.append(_read_up_to(f, _INPUT_LIMIT + 1))
            except (IOError, OSError) as e:
                parts.append(e)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(wait)
        if not parts:
            raise OSError(errno.ETIMEDOUT, "nothing came from it within %gs" % wait)
        if isinstance(parts[0], Exception):
            raise parts[0]
        return parts[0]
else:
    def _read_waiting(path, wait):
        import select  # lazy: only for files read this way
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            deadline = _Deadline(wait, "nothing came from it within %gs" % wait)
            parts, size = [], 0
            while size <= _INPUT_LIMIT:
                if not select.select([fd], [], [], deadline.left())[0]:
                    raise OSError(errno.ETIMEDOUT, deadline.why)
                try:
                    part = os.read(fd, _READ_SIZE)
                except BlockingIOError:
                    continue
                if not part:
                    break
                parts.append(part)
                size += len(part)
            return b"".join(parts)
        finally:
            os.close(fd)


def _within_limit(data, what):
    if len(data) > _INPUT_LIMIT:
        raise UsageError("%s is larger than %d bytes" % (what, _INPUT_LIMIT))
    return data


# ---------------------------------------------------------------------------
# Wire helpers: framing, JSON, server-sent events
# ---------------------------------------------------------------------------

# Built once: json.dumps with any option builds a new encoder on every call.
# NaN and Infinity are not JSON (RFC 8259); Python would write them anyway.
# No circular check (a dict per container per message): a cycle reaches the
# recursion limit instead, which _encode reports like one.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)


def _one_shot(encoder):
    """``encoder.encode`` for a compact encoder (no indent), with the C encoder
    inside it built once: JSONEncoder.encode builds one anew for every value,
    a tenth of what a call costs. It checks for no cycle (a cycle reaches the
    recursion limit instead)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C module
        return encoder.encode
    strings = (json.encoder.encode_basestring_ascii if encoder.ensure_ascii
               else json.encoder.encode_basestring)
    c_encode = make(None, encoder.default, strings, None, encoder.key_separator,
                    encoder.item_separator, encoder.sort_keys, encoder.skipkeys,
                    encoder.allow_nan)
    return lambda value: "".join(c_encode(value, 0))


_WIRE_ENCODE = _one_shot(_ENCODER)


def _encode(message):
    """One JSON-RPC message as a stdio frame (basic/transports, "stdio").

    ASCII-only JSON never holds a raw newline, so the frame is exactly one line.
    Raises UsageError for what JSON cannot carry (NaN, Infinity, bytes, sets)
    and for values nested too deeply (or circular).
    """
    try:
        return _WIRE_ENCODE(message).encode("ascii") + b"\n"
    except (TypeError, ValueError) as e:  # bytes, a set; NaN
        raise UsageError("cannot send %s: %s" % (message.get("method", "a reply"), e))
    except RecursionError:
        raise UsageError("cannot send %s: its params are nested too deeply, or circular"
                         % message.get("method", "a reply"))


class _NotJSON(ValueError):
    """Looks like JSON but cannot be read as such: NaN and Infinity (Python's json
    reads them, JSON has none, RFC 8259), numbers out of range, deep nesting."""


def _no_constant(name):
    raise _NotJSON("%s is not valid JSON" % name)


_INFINITY = float("inf")
_INT_DIGITS = 4300  # the default of Python's own limit (sys.set_int_max_str_digits)


def _bounded_int(text):
    if len(text.lstrip("-")) > _INT_DIGITS:
        raise _NotJSON("an integer of %d digits is past the limit of %d digits"
                       % (len(text.lstrip("-")), _INT_DIGITS))
    return int(text)


def _finite_float(text):
    value = float(text)
    if value in (_INFINITY, -_INFINITY):  # 1e400: JSON syntax, but no float holds it
        raise _NotJSON("the number %s is out of range" % text[:40])
    return value


# Built once, like the encoder: json.loads with an option builds a decoder per call.
_DECODER = json.JSONDecoder(
    parse_constant=_no_constant, parse_float=_finite_float,
    # Python's own limit arrived in 3.11 (and in 3.7.14, 3.8.14, 3.9.14, 3.10.7);
    # without it, a few MB of digits take minutes to convert. This can go with 3.6.
    parse_int=None if hasattr(sys, "set_int_max_str_digits") else _bounded_int)
_JSON_SPACE = " \t\n\r"  # RFC 8259 whitespace


def _json_loads(text):
    """json.loads that refuses NaN and Infinity, as JSON does (RFC 8259).

    Raises JSONDecodeError for what is not JSON; _NotJSON for what looks like
    JSON but cannot be read: NaN, Infinity, numbers out of range, nesting
    past the recursion limit.
    """
    try:
        # raw_decode first: a frame rarely has whitespace around it, and decode()
        # would scan for it twice with a regex on every message.
        try:
            value, end = _DECODER.raw_decode(text)
        except json.JSONDecodeError:
            return _DECODER.decode(text)  # leading whitespace, or the full error
        if end != len(text) and text[end:].strip(_JSON_SPACE):
            return _DECODER.decode(text)  # raises "Extra data"
        return value
    except RecursionError:
        raise _NotJSON("nested too deeply to parse")
    except (json.JSONDecodeError, _NotJSON):
        raise
    except ValueError as e:  # an integer past Python's digit limit (3.11+): said as ours
        digits = re.search(r"has ([0-9]+) digits", str(e))
        raise _NotJSON("an integer of %s digits is past the limit of %d digits"
                       % (digits.group(1) if digits else "too many", _INT_DIGITS))


def _parse_frame(holder):
    """Decode and parse the one line in ``holder`` (a list), emptying it.

    Returns (message, invalid_utf8, text): message None and the line's text
    when it is not JSON. The raw line is released before parsing, so a
    large message costs its raw bytes or its text alongside the parsed
    result, never all three.
    """
    raw = holder.pop()
    try:
        text = raw.decode("utf-8")
        bad = False
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        bad = True
    del raw
    try:
        return _json_loads(text), bad, None
    except _NotJSON as e:
        if text.lstrip()[:1] in ("{", "["):  # a message, not a banner reading "NaN"
            raise ProtocolError("server sent a message that is not JSON: %s" % e)
        return None, bad, text
    except ValueError:
        return None, bad, text


class _Noise(str):
    """A line on the server's stdout that is not a JSON-RPC message."""


class _BadUTF8(_Noise):
    """Comes just before a message whose line held invalid UTF-8 (now U+FFFD)."""


class _Stray(_Noise):
    """A message the transport set aside, with the warning (kind "stray") to give."""


class _Said(_Noise):
    """What the transport itself has to say (a session's server started again),
    with the warning (kind "session") to give."""


class _Batch(_Noise):
    """Comes just before the members of a JSON-RPC batch array (allowed by the
    2025-03-26 revision), with the array as sent in ``array``, for the trace."""

    def __new__(cls, array):
        marker = _Noise.__new__(cls, "")
        marker.array = array
        return marker


class _Framer(object):
    """Splits a byte stream on b"\\n" into parsed JSON-RPC messages.

    ``feed`` returns the messages completed by a chunk, in order; a line that
    is not a JSON object is among them as _Noise, its text, and a _BadUTF8
    marks a message whose invalid UTF-8 was replaced, so traces and warnings
    keep the wire's order. A line longer than ``max_bytes``
    raises ProtocolError as soon as its byte ``max_bytes + 1`` arrives.
    A line split over chunks grows in one bytearray (realloc, no join) and is
    decoded from it; a line whole in one chunk is decoded from the chunk.
    """

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self._buf = bytearray()

    def feed(self, data):
        messages = []
        start = 0
        try:
            while True:
                end = data.find(b"\n", start)
                if end < 0:
                    break
                if self._buf:
                    self._extend(data, start, end)
                    size, line = len(self._buf), [self._buf]
                    self._buf = bytearray()
                else:
                    size = end - start
                    self._check(size)
                    line = [data[start:end]]
                self._emit(line, size, messages)
                start = end + 1
            if start < len(data):
                self._extend(data, start, len(data))
        except ProtocolError as e:
            e.messages = messages  # what came before the bad line is still the server's word
            raise
        return messages

    def finish(self):
        """The messages of a last line that the stream ended without its
        newline: a line all the same (nothing the server said is lost)."""
        if not self._buf:
            return []
        line, self._buf, messages = self._buf, bytearray(), []
        self._emit([line], len(line), messages)
        return messages

    def _check(self, size):
        if size > self.max_bytes:
            self._buf = bytearray()
            raise ProtocolError("server sent a message over %d bytes "
                                "(raise --max-bytes to allow it)" % self.max_bytes)

    def _extend(self, data, start, end):
        self._check(len(self._buf) + end - start)
        self._buf += memoryview(data)[start:end]

    def _emit(self, line, size, messages):
        if size < 4 and not line[0].strip():
            return
        message, bad, text = _parse_frame(line)
        if isinstance(message, dict):
            if bad:
                messages.append(_BadUTF8())
            messages.append(message)
        elif isinstance(message, list) and message:  # a batch: its members, in turn
            if bad:
                messages.append(_BadUTF8())
            messages.append(_Batch(message))
            messages.extend(m if isinstance(m, dict) else _Noise(json.dumps(m))
                            for m in message)
        else:
            messages.append(_Noise((json.dumps(message) if text is None else text).rstrip("\r")))


# Server-sent events (WHATWG HTML, "Server-sent events"), the body of a
# Streamable HTTP answer of type text/event-stream (basic/transports,
# "Streamable HTTP"). The parser works on bytes: CR and LF never occur inside
# a UTF-8 sequence, so lines can be cut before decoding, and each is decoded
# whole, which gives the same text as decoding the stream incrementally.
_SSE_LINE_END = b"\r\n|\r|\n"
# ``retry`` is ASCII digits only; more digits than int() converts (3.11+) are
# no useful time either, and are ignored like any other bad value.
_SSE_RETRY = u"[0-9]{1,%d}\\Z" % _INT_DIGITS

# ``id``: the last event ID after this event ("dispatch the event"), None if empty.
_SSEEvent = collections.namedtuple("_SSEEvent", "name data id")


class _SSEParser(object):
    """Splits a text/event-stream into events, as WHATWG "Event stream
    interpretation" reads it.

    ``feed`` returns the events a chunk completes, in order. ``retry`` is the
    last valid reconnection time (ms) and ``last_id`` the last event ID (None
    while empty), both updated as the stream tells them; ``bad_utf8`` turns
    True once invalid UTF-8 has been replaced with U+FFFD. An event whose
    lines (without their line ends; a comment only while it is read) pass
    ``max_bytes`` raises ProtocolError when its byte ``max_bytes + 1``
    arrives, with ``events``: the ones completed before it. The stream as a
    whole has no cap; the pending event is dropped when it ends, as WHATWG says.
    """

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.retry = None
        self.last_id = None
        self.bad_utf8 = False
        self._line = bytearray()  # the line being read
        self._size = 0  # bytes of the current event's lines, line ends and comments not counted
        self._after_cr = False  # a chunk ended in CR: a LF first in the next ends no line
        self._first = True  # the next line is the stream's first, which may start with a BOM
        self._name, self._data, self._id = "", [], ""

    def feed(self, data):
        if not data:
            return []
        events = []
        start = 1 if self._after_cr and data.startswith(b"\n") else 0
        try:
            if b"\r" in data:  # any of the three line ends
                for end in re.compile(_SSE_LINE_END).finditer(data, start):
                    self._extend(data, start, end.start())
                    self._take_line(events)
                    start = end.end()
            else:  # LF alone, as nearly every server writes: a hundred times faster
                end = data.find(b"\n", start)
                while end >= 0:
                    self._extend(data, start, end)
                    self._take_line(events)
                    start = end + 1
                    end = data.find(b"\n", start)
            self._extend(data, start, len(data))
        except ProtocolError as e:
            e.events = events  # what came before the big event is still the server's word
            raise
        self._after_cr = data.endswith(b"\r")
        return events

    def restart(self):
        """A new connection resumes the stream (WHATWG, "reestablish the
        connection"): what was half read is dropped; the last event ID and
        the retry time stay."""
        self._line, self._size, self._after_cr, self._first = bytearray(), 0, False, True
        self._name, self._data, self._id = "", [], self.last_id or ""

    def _extend(self, data, start, end):
        if self._size + len(self._line) + end - start > self.max_bytes:
            self._line, self._size, self._data = bytearray(), 0, []
            raise ProtocolError("server sent an event over %d bytes "
                                "(raise --max-bytes to allow it)" % self.max_bytes)
        self._line += memoryview(data)[start:end]

    def _take_line(self, events):
        raw, self._line = self._line, bytearray()
        if self._first:  # one leading BOM is ignored ("Event stream interpretation")
            self._first = False
            if raw.startswith(b"\xef\xbb\xbf"):
                del raw[:3]
        if not raw:
            self._dispatch(events)
        elif not raw.startswith(b":"):
            # A comment keeps nothing, so it leaves the count once read: the
            # keep-alive ":" lines of a long-lived stream (2026-07-28 streamable-http,
            # "Receiving Messages") need no blank line between them, and never add up.
            self._size += len(raw)
            # Split while still bytes: a data line is decoded once, without its
            # field name, so a large message has no second copy beside it.
            colon = raw.find(b":")
            start = len(raw) if colon < 0 else colon + 1
            if raw[start:start + 1] == b" ":
                start += 1
            name = self._text(raw[:colon if colon >= 0 else len(raw)])
            value = self._text(memoryview(raw)[start:])
            del raw
            self._field(name, value)

    def _text(self, data):
        try:
            return str(data, "utf-8")
        except UnicodeDecodeError:
            self.bad_utf8 = True
            return str(data, "utf-8", "replace")

    def _field(self, name, value):
        # WHATWG "Processing the field"; any other name is ignored.
        if name == "event":
            self._name = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and u"\0" not in value:
            self._id = value
        elif name == "retry" and re.match(_SSE_RETRY, value):
            self.retry = int(value)

    def _dispatch(self, events):
        # WHATWG "dispatch the event": the last event ID is kept even when no
        # event follows. An empty data buffer means no data line at all; the
        # event that primes a stream for resumption has an id and one empty
        # data line (2025-11-25 basic/transports, "Sending Messages to the
        # Server"), so it comes out with data "", which is no JSON-RPC message.
        self.last_id = self._id or None
        if self._data:
            events.append(_SSEEvent(self._name or "message", "\n".join(self._data),
                                    self.last_id))
        self._name, self._data, self._size = "", [], 0


class _BodyReader(object):
    """Collects an HTTP body that is not an event stream, as it arrives.

    ``length`` is the Content-Length, or None. A length over ``max_bytes``
    raises ProtocolError at once; a body that passes ``max_bytes`` (or its
    length) raises ProtocolError when that extra byte arrives. ``finish``
    returns the body (a bytearray), or raises ConnectionLost if it is short.
    """

    def __init__(self, max_bytes, length=None):
        if length is not None and length > max_bytes:
            raise ProtocolError("server announced an answer of %d bytes, over %d bytes "
                                "(raise --max-bytes to allow it)" % (length, max_bytes))
        self.max_bytes = max_bytes
        self.length = length
        self._body = bytearray()

    def feed(self, data):
        size = len(self._body) + len(data)
        if size > self.max_bytes:
            self._body = bytearray()
            raise ProtocolError("server sent an answer over %d bytes "
                                "(raise --max-bytes to allow it)" % self.max_bytes)
        if self.length is not None and size > self.length:
            raise ProtocolError("server sent an answer longer than its Content-Length "
                                "of %d bytes" % self.length)
        self._body += data

    def finish(self):
        body, self._body = self._body, bytearray()  # no copy: it is decoded once, whole
        if self.length is not None and len(body) < self.length:
            raise ConnectionLost("the server's answer ended after %d of %d bytes"
                                 % (len(body), self.length))
        return body


# ---------------------------------------------------------------------------
# JSON Schema: draft 2020-12, and the older dialects a $schema may name
# ---------------------------------------------------------------------------

def _schema_problem(value, schema, root=None, where="argument", seconds=_CHECK_SECONDS,
                    formats=False):
    """The first way ``value`` breaks ``schema``, as one line naming the field, or None.

    Draft 2020-12, or the 2019-09, draft-07, -06 or -04 that the root's
    ``$schema`` names; any other dialect is the problem (basic, "JSON Schema
    Usage"). ``where`` names fields: "argument", "structuredContent", "answer".
    ``$ref`` resolves within ``root`` (default: ``schema``) and its ``$id``s;
    nothing is fetched, and a value that reaches another reference is refused.
    ``format`` is checked only with ``formats``; unknown keywords are ignored.
    The schema comes from the server: a check that takes longer than
    ``seconds`` (a backtracking pattern, $ref fan-out) is itself the problem.
    """
    check = _SchemaCheck(schema if root is None else root, where, formats)
    try:
        return _within(seconds, lambda: check.run(value, schema))
    except _Overtime:
        return _Unchecked("%s: could not be checked against the schema within %gs" % (
            check.name(""), seconds))
    except RecursionError:
        return _Unchecked("%s: could not be checked against a schema nested this deeply"
                          % check.name(""))


class _Unchecked(str):
    """A problem of the check's own: it could not finish within its bounds (time,
    stack, memory), so it says nothing of the value."""


class _Unfinished(Exception):
    """A check that cannot be finished: a $ref the document does not define, or
    more evaluated items to track than memory should hold. Its text is the problem."""


# Keywords through which a schema can lead back to itself or fan out.
_REFERRING = frozenset(("$ref", "anyOf", "oneOf", "allOf"))
# Where subschemas sit (2020-12 core §10, §11): alone, in a list, as an object's values.
_ONE_SCHEMA = ("not", "if", "then", "else", "items", "contains", "additionalProperties",
               "propertyNames", "unevaluatedItems", "unevaluatedProperties")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
# Nothing evaluated: what a failed or non-container check reports.
_NOTHING = frozenset()
# The keywords that read what other keywords evaluated (2020-12 core §11), and
# the references this checker does not follow: with one of these, what they
# would have evaluated is unknown, so unevaluated* refuse nothing.
_UNEVALUATED = frozenset(("unevaluatedItems", "unevaluatedProperties"))
_DYNAMIC = frozenset(("$dynamicRef", "$recursiveRef"))


class _Untracked(object):
    """What each part of a schema evaluated, when nothing will read it: kept nowhere."""

    def add(self, item):
        pass

    def update(self, items):
        pass

    def __iter__(self):
        return iter(())

    def __contains__(self, item):
        return False


_UNTRACKED = _Untracked()


class _SchemaCheck(object):
    """One validation: the document, its dialect and identifiers, the noun for fields."""

    def __init__(self, root, where, formats):
        self.root = root
        self.where = where
        self.formats = formats
        self.dialect = 2020
        self.base = ""  # the root's URI, from its $id
        self.ids = {"": root}  # absolute URI (no fragment) -> the resource it names
        self.anchors = {}  # (URI, $anchor) -> node
        self.bases = {}  # id(node with a $ref) -> the URI that $ref is relative to
        self.shapes = {}  # id(node) -> the node in 2020-12 terms (older dialects)
        self.regexes = {}  # pattern -> compiled, or None when Python cannot compile it
        self.targets = {}  # id(node with a $ref) -> what resolve() said of it
        self.seen = {}  # (value, schema, path) -> its result; "passes" while being checked
        self.annotated = False  # any unevaluated* keyword: what each part evaluated counts
        self.tracked = 0  # evaluated items kept so far, each part's counted
        self.dynamic = False  # any $dynamicRef or $recursiveRef, which are not followed
        # Every object whose id() keys a table above, kept alive as long as the
        # table: a dropped dict's id is soon another's (a reader lives across
        # many arguments, each read through a dict made for it).
        self.held = []

    def name(self, path):
        if path:  # quoted so that no quote or line break in it can blur where it ends
            return "%s %r" % (self.where, path)
        return "the arguments" if self.where == "argument" else self.where

    def run(self, value, schema):
        declared = _dict(self.root).get("$schema")
        self.dialect = _dialect(declared)
        if self.dialect is None:
            return "%s: the schema's dialect %s is not supported (only %s)" % (
                self.name(""), _cut(declared, _SHOW_CHARS),
                ", ".join(uri.split("/")[-2] for uri, _ in _DIALECTS))
        self.index()
        try:
            return self.check(value, schema, "")[0]
        except _Unfinished as unfinished:
            return unfinished.args[0]

    def shape(self, schema):
        """The schema in 2020-12 terms, made once per node."""
        if self.dialect == 2020 or not isinstance(schema, dict):
            return schema
        if id(schema) not in self.shapes:
            self.held.append(schema)
            self.shapes[id(schema)] = _upgrade(schema, self.dialect)
        return self.shapes[id(schema)]

    def index(self):
        """Note each $id and $anchor, and the base URI of each $ref (2020-12 core §8.2)."""
        stack, done = [(self.root, "")], set()
        while stack:
            raw, base = stack.pop()
            node = self.shape(raw)
            if not isinstance(node, dict) or id(node) in done:
                continue
            done.add(id(node))
            self.annotated = self.annotated or bool(_UNEVALUATED.intersection(node))
            self.dynamic = self.dynamic or bool(_DYNAMIC.intersection(node))
            uri = _locate(base, node["$id"])[0] if isinstance(node.get("$id"), str) else None
            if uri is not None:  # an $id no URI parser takes identifies nothing
                base = uri
                self.ids.setdefault(base, raw)
            for key in ("$anchor", "$dynamicAnchor"):  # both name a plain fragment
                if isinstance(node.get(key), str):
                    self.anchors.setdefault((base, node[key]), raw)
            if raw is self.root:
                self.base = base
            if "$ref" in node:
                self.held.append(node)
                self.bases[id(node)] = base
            stack.extend((sub, base) for sub in _subschemas(node))

    def resolve(self, schema):
        """The node a schema's $ref names and None, or None and why there is none."""
        if id(schema) not in self.targets:  # each $ref resolved once
            self.held.append(schema)
            self.targets[id(schema)] = self.lookup(schema)
        return self.targets[id(schema)]

    def lookup(self, schema):
        ref = schema["$ref"]
        if not isinstance(ref, str):
            return True, None  # not a reference at all: the server's fault, not the caller's
        uri, fragment = _locate(self.bases.get(id(schema), self.base), ref)
        if uri is None:
            return None, "the schema refers to %s, which is not a URI" % _cut(ref, _SHOW_CHARS)
        if uri not in self.ids:  # never fetched (basic, "$ref Resolution")
            return None, "the schema refers to %s, which is not fetched" % _cut(ref, _SHOW_CHARS)
        if fragment and not fragment.startswith("/"):
            node = self.anchors.get((uri, fragment))
        else:
            node = _pointer(self.ids[uri], "#" + fragment)
        if node is None:
            return None, "the schema refers to %s, which it does not define" % _cut(
                ref, _SHOW_CHARS)
        return node, None

    def check(self, value, schema, path):
        """The first problem or None, and the keys or indices of value evaluated (core §11)."""
        # Each value meets each schema once: $refs can make a small schema a
        # huge tree, or a cycle, which adds nothing when met again (so passes).
        schema = self.shape(schema)
        if not isinstance(schema, dict) or not _REFERRING.intersection(schema):
            return self.evaluate(value, schema, path)  # no way back to a node
        key = (id(value), id(schema), path)
        if key not in self.seen:
            self.held.append((value, schema))
            self.seen[key] = (None, _NOTHING)
            self.seen[key] = self.evaluate(value, schema, path)
        return self.seen[key]

    def evaluate(self, value, schema, path):
        if schema is False:
            return "%s: not allowed" % self.name(path), _NOTHING
        if not isinstance(schema, dict):
            return None, _NOTHING  # `true`, or not a schema at all: the server's fault
        seen = set() if self.annotated and not self.dynamic else _UNTRACKED
        problem = (self.ref_problem(value, schema, path, seen)
                   or self.value_problem(value, schema, path)
                   or self.array_problem(value, schema, path, seen)
                   or self.object_problem(value, schema, path, seen)
                   or self.combined_problem(value, schema, path, seen)
                   or self.conditional_problem(value, schema, path, seen)
                   or self.unevaluated_problem(value, schema, path, seen))
        if problem:
            return problem, _NOTHING
        self.tracked += len(seen) if seen is not _UNTRACKED else 0
        if self.tracked > _MAX_TRACKED:  # $refs can make each part re-evaluate all of it
            raise _Unfinished(_Unchecked("%s: could not be checked: the schema makes it "
                                         "track over %d evaluated items"
                                         % (self.name(path), _MAX_TRACKED)))
        return None, seen

    def ref_problem(self, value, schema, path, seen):
        if "$ref" not in schema:
            return None
        target, missing = self.resolve(schema)
        if missing:  # refused, not passed (basic, "$ref Resolution")
            raise _Unfinished("%s: %s" % (self.name(path), missing))
        problem, evaluated = self.check(value, target, path)
        seen.update(evaluated)
        return problem

    def value_problem(self, value, schema, path):
        """The keywords that look at the value alone (2020-12 validation §6)."""
        message = (_kind_problem(value, schema) or _number_problem(value, schema)
                   or self.string_problem(value, schema) or _length_problem(value, schema)
                   or _unique_problem(value, schema))
        return "%s: %s" % (self.name(path), message) if message else None

    def string_problem(self, value, schema):
        pattern = schema.get("pattern")
        if not isinstance(value, str):
            return None
        if isinstance(pattern, str) and self.search(pattern, value) is False:
            return "%s does not match the pattern %s" % (_show(value), _cut(pattern))
        return _format_problem(value, schema.get("format")) if self.formats else None

    def search(self, pattern, text):
        """Whether pattern matches anywhere in text; None if Python cannot compile it."""
        if pattern not in self.regexes:
            try:
                self.regexes[pattern] = _compile(pattern)
            except RecursionError:  # the stack left here was too short: not kept, not used
                return None
        regex = self.regexes[pattern]
        return None if regex is None else regex.search(text) is not None

    def array_problem(self, value, schema, path, seen):
        """prefixItems, items, then contains (2020-12 core §10.3.1)."""
        if not isinstance(value, list):
            return None
        prefix, rest = _list(schema.get("prefixItems")), schema.get("items")
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else rest
            if not isinstance(sub, (dict, bool)):
                break
            problem = self.check(item, sub, _at(path, i))[0]
            if problem:
                return problem
            seen.add(i)
        if "contains" not in schema:
            return None
        found = [i for i, item in enumerate(value)
                 if not self.check(item, schema["contains"], _at(path, i))[0]]
        seen.update(found)
        low, high = schema.get("minContains", 1), schema.get("maxContains")
        if _is_number(low) and len(found) < low:
            return "%s: expected at least %s matching the contains schema, got %d" % (
                self.name(path), _count(low, "item", "items"), len(found))
        if _is_number(high) and len(found) > high:
            return "%s: expected at most %s matching the contains schema, got %d" % (
                self.name(path), _count(high, "item", "items"), len(found))
        return None

    def object_problem(self, value, schema, path, seen):
        """The object keywords, names the schema does not take first (core §10.3.2)."""
        if not isinstance(value, dict):
            return None
        properties = _dict(schema.get("properties"))
        patterns = _dict(schema.get("patternProperties"))
        extra = schema.get("additionalProperties")
        for key in value:
            if (extra is None or key in properties
                    or any(self.search(p, key) is not False for p in patterns)):
                continue  # a pattern Python cannot compile may have matched
            if extra is False:
                return self.unexpected(path, key, list(properties), list(patterns))
            problem = self.check(value[key], extra, _join(path, key))[0]
            if problem:
                return problem
            seen.add(key)
        problem = self.required_problem(value, schema, path)
        if problem:
            return problem
        for key, sub in properties.items():
            if key in value:
                problem = self.check(value[key], sub, _join(path, key))[0]
                if problem:
                    return problem
                seen.add(key)
        for pattern, sub in patterns.items():
            for key in value:
                matched = self.search(pattern, key)
                problem = matched and self.check(value[key], sub, _join(path, key))[0]
                if problem:
                    return problem
                if matched is not False:
                    seen.add(key)
        return self.names_problem(value, schema, path)

    def required_problem(self, value, schema, path):
        """required, and dependentRequired (validation §6.5.3, §6.5.4); every
        missing name at once, so one run shows all there is to add."""
        missing = []
        for key in _list(schema.get("required")):
            if isinstance(key, str) and key not in value and key not in missing:
                missing.append(key)
        if len(missing) == 1:
            return "missing required %s" % self.name(_join(path, missing[0]))
        if missing:
            return "missing required %ss %s" % (self.where, ", ".join(
                repr(_join(path, key)) for key in missing))
        for key, needs in _dict(schema.get("dependentRequired")).items():
            for need in _list(needs) if key in value else ():
                if isinstance(need, str) and need not in value:
                    return "missing required %s (required with '%s')" % (
                        self.name(_join(path, need)), key)
        return None

    def names_problem(self, value, schema, path):
        names = schema.get("propertyNames")
        if names is None:
            return None
        for key in value:
            if self.check(key, names, _join(path, key))[0]:
                return "%s: the name %s is not allowed" % (self.name(path), _show(key))
        return None

    def unexpected(self, path, key, names, patterns):
        takes = "the tool takes" if self.where == "argument" else "the schema allows"
        names = names + ["names matching %s" % _cut(p, _SHOW_CHARS) for p in patterns]
        return "unexpected %s (%s: %s)" % (self.name(_join(path, key)), takes,
                                           ", ".join(names) or "nothing")

    def combined_problem(self, value, schema, path, seen):
        """allOf, anyOf, oneOf (core §10.2.1), keeping what the passing ones evaluated."""
        for sub in _list(schema.get("allOf")):
            problem, evaluated = self.check(value, sub, path)
            if problem:
                return problem
            seen.update(evaluated)
        for key in ("anyOf", "oneOf"):
            subs = _list(schema.get(key))
            if not subs:
                continue
            results = [self.check(value, sub, path) for sub in subs]
            passed = [evaluated for problem, evaluated in results if problem is None]
            if not passed:
                return self.best_problem(value, subs, [p for p, _ in results], path)
            if key == "oneOf" and len(passed) > 1:
                return "%s: matches more than one allowed schema" % self.name(path)
            for evaluated in passed:
                seen.update(evaluated)
        return None

    def best_problem(self, value, subs, problems, path):
        """Why no branch matched: the one branch of the right type, or the types allowed."""
        subs = [self.shape(s) for s in subs]
        kinds = [_declared_types(self.shape(self.resolve(s)[0]) if "$ref" in _dict(s) else s)
                 for s in subs]
        fits = [p for p, k in zip(problems, kinds)
                if k is None or any(_has_type(value, t) for t in k)]
        if len(fits) == 1:
            return fits[0]
        allowed = []
        for k in kinds:
            allowed.extend(t for t in k or () if t not in allowed)
        if not fits and allowed:
            return "%s: expected %s, got %s" % (self.name(path), " or ".join(allowed),
                                                _show(value))
        return "%s: does not match any allowed schema" % self.name(path)

    def conditional_problem(self, value, schema, path, seen):
        """not, if/then/else, dependentSchemas (core §10.2.1, §10.2.2)."""
        if "not" in schema and self.check(value, schema["not"], path)[0] is None:
            return "%s: matches a schema it must not match" % self.name(path)
        if "if" in schema:
            problem, evaluated = self.check(value, schema["if"], path)
            seen.update(evaluated)
            branch = "then" if problem is None else "else"
            problem, evaluated = self.check(value, schema.get(branch, True), path)
            if problem:
                return problem
            seen.update(evaluated)
        for key, sub in _dict(schema.get("dependentSchemas")).items():
            if isinstance(value, dict) and key in value:
                problem, evaluated = self.check(value, sub, path)
                if problem:
                    return problem
                seen.update(evaluated)
        return None

    def unevaluated_problem(self, value, schema, path, seen):
        """unevaluatedItems/Properties: what nothing that passed looked at (core §11)."""
        if self.dynamic:  # see _DYNAMIC
            return None
        if isinstance(value, list) and "unevaluatedItems" in schema:
            sub, keys = schema["unevaluatedItems"], range(len(value))
        elif isinstance(value, dict) and "unevaluatedProperties" in schema:
            sub, keys = schema["unevaluatedProperties"], list(value)
        else:
            return None
        for key in keys:
            if key in seen:
                continue
            if sub is False and isinstance(value, dict):
                names, patterns = self.declared(schema)
                if key in names:  # a branch that failed takes it
                    return "%s: no part of the schema that matched takes it" % self.name(
                        _join(path, key))
                return self.unexpected(path, key, names, patterns)
            problem = self.check(value[key], sub, _at(path, key))[0]
            if problem:
                return problem
        seen.update(keys)
        return None

    def declared(self, schema):
        """The property names and patterns a schema and its in-place subschemas declare."""
        names, patterns, queue, done = [], [], [schema], set()
        for node in queue:  # grows while read: breadth first, each node once
            node = self.shape(node)
            if not isinstance(node, dict) or id(node) in done:
                continue
            done.add(id(node))
            names.extend(n for n in _dict(node.get("properties")) if n not in names)
            patterns.extend(p for p in _dict(node.get("patternProperties")) if p not in patterns)
            for key in ("allOf", "anyOf", "oneOf"):
                queue.extend(_list(node.get(key)))
            queue.extend(node[key] for key in ("if", "then", "else") if key in node)
            queue.extend(_dict(node.get("dependentSchemas")).values())
            if "$ref" in node:
                queue.append(self.resolve(node)[0])
        return names, patterns


def _dialect(uri):
    """The dialect a $schema names, as its year or draft number; None if unsupported."""
    if not isinstance(uri, str):
        return 2020  # no $schema: 2020-12 (basic, "JSON Schema Usage")
    key = re.sub(r"\Ahttps?://", "", uri)
    key = key[:-1] if key.endswith("#") else key
    if key == "json-schema.org/schema":  # "the latest", which 2020-12 is here
        return 2020
    return dict(_DIALECTS).get(key)


# Keywords older dialects lack, with the dialect that brought each.
_SINCE = (("const", 6), ("contains", 6), ("propertyNames", 6), ("if", 7), ("then", 7),
          ("else", 7), ("$anchor", 2019), ("dependentRequired", 2019),
          ("dependentSchemas", 2019), ("minContains", 2019), ("maxContains", 2019),
          ("unevaluatedItems", 2019), ("unevaluatedProperties", 2019), ("prefixItems", 2020))


def _upgrade(schema, dialect):
    """A schema of an older dialect in 2020-12 terms, so one check serves them all."""
    if dialect <= 7 and "$ref" in schema:  # draft-07 §8.3: $ref overrides its siblings
        return dict((k, v) for k, v in schema.items() if k in ("$ref", "$defs", "definitions"))
    since = dict(_SINCE)
    shaped = dict((k, v) for k, v in schema.items() if since.get(k, 0) <= dialect)
    if dialect == 4:  # `id` then; exclusive bounds were flags on minimum/maximum
        shaped.pop("$id", None)
        if "id" in schema:
            shaped["$id"] = schema["id"]
        for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if shaped.pop(flag, None) is True and bound in shaped:
                shaped[flag] = shaped.pop(bound)
    ident = shaped.get("$id")
    if dialect <= 7 and isinstance(ident, str) and ident.startswith("#"):
        shaped["$anchor"] = shaped.pop("$id")[1:]  # draft-07 §8.2.3: a plain-name $id
    if isinstance(schema.get("items"), list):  # the array form, and what follows it
        shaped["prefixItems"] = schema["items"]
        shaped.pop("items")
        if "additionalItems" in schema:
            shaped["items"] = schema["additionalItems"]
    depends = schema.get("dependencies")
    if dialect <= 7 and isinstance(depends, dict):
        shaped["dependentRequired"] = dict((k, v) for k, v in depends.items()
                                           if isinstance(v, list))
        shaped["dependentSchemas"] = dict((k, v) for k, v in depends.items()
                                          if isinstance(v, (dict, bool)))
    return shaped


def _subschemas(schema):
    for key in _ONE_SCHEMA:
        if key in schema:
            yield schema[key]
    for key in _SCHEMA_LISTS:
        for sub in _list(schema.get(key)):
            yield sub
    for key in _SCHEMA_MAPS:
        for sub in _dict(schema.get(key)).values():
            yield sub


def _locate(base, ref):
    """``ref`` resolved against ``base`` (RFC 3986 §5): its URI and decoded
    fragment, or None and None if it is no URI."""
    from urllib.parse import unquote, urljoin  # lazy: only schemas with $ref or $id
    # urljoin leaves a fragment alone against a base it does not know (urn:).
    try:
        uri = base.partition("#")[0] + ref if ref.startswith("#") else urljoin(base, ref)
    except ValueError:  # http://[::1 and the like
        return None, None
    uri, _, fragment = uri.partition("#")
    return uri, unquote(fragment)


# An array index in a JSON pointer (RFC 6901 §4): ASCII digits, no leading zero.
_INDEX = r"(?:0|[1-9][0-9]{0,17})\Z"


def _pointer(root, ref):
    """The node a local $ref (``#/$defs/Name``, a JSON pointer) names, or None."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        return None
    node = root
    for part in ref.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and re.match(_INDEX, part) and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _join(path, key):
    return "%s.%s" % (path, key) if path else key


def _at(path, key):
    """The path of an array item (an index) or an object member (a name)."""
    return "%s[%d]" % (path, key) if isinstance(key, int) else _join(path, key)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _has_type(value, kind):
    """JSON Schema types: 1.0 is an integer, true is not a number; unknown names pass."""
    if kind in ("number", "integer"):
        return _is_number(value) and (kind == "number" or isinstance(value, int)
                                      or value.is_integer())
    kinds = {"null": type(None), "boolean": bool, "string": str, "array": list, "object": dict}
    return kind not in kinds or isinstance(value, kinds[kind])


def _declared_types(schema):
    """The names in a schema's ``type``, or None when it does not say."""
    kind = _dict(schema).get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list) and kind:
        return [k for k in kind if isinstance(k, str)]
    return [] if schema is False else None


def _same(a, b):
    """JSON equality: 1 equals 1.0, true is not 1, key order does not matter."""
    return _canonical(a) == _canonical(b)


def _canonical(value):
    """A hashable form of a JSON value, equal for equal values (validation §4.2.2)."""
    if isinstance(value, bool) or not _is_number(value):
        if isinstance(value, list):
            return ("array", tuple(_canonical(v) for v in value))
        if isinstance(value, dict):
            return ("object", frozenset((k, _canonical(v)) for k, v in value.items()))
        return (type(value).__name__, value)
    return ("number", value)  # 1 == 1.0 in Python, and they hash alike


def _kind_problem(value, schema):
    kinds = _declared_types(schema)
    if kinds and not any(_has_type(value, k) for k in kinds):
        return "expected %s, got %s" % (" or ".join(kinds), _show(value))
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_same(value, e) for e in enum):
        shown = ", ".join(_show(e) for e in enum[:_SHOW_ENUM])
        more = ", ... (%d in all)" % len(enum) if len(enum) > _SHOW_ENUM else ""
        return "%s is not one of %s%s" % (_show(value), shown, more)
    if "const" in schema and not _same(value, schema["const"]):
        return "expected %s, got %s" % (_show(schema["const"]), _show(value))
    return None


# Numeric bounds, draft 2020 style (exclusiveMinimum/Maximum are numbers, not flags).
_BOUNDS = (
    ("minimum", lambda v, b: v < b, "%s is below the minimum %s"),
    ("maximum", lambda v, b: v > b, "%s is above the maximum %s"),
    ("exclusiveMinimum", lambda v, b: v <= b, "%s is not above the exclusive minimum %s"),
    ("exclusiveMaximum", lambda v, b: v >= b, "%s is not below the exclusive maximum %s"),
)


def _number_problem(value, schema):
    if not _is_number(value):
        return None
    for key, breaks, text in _BOUNDS:
        bound = schema.get(key)
        if _is_number(bound) and breaks(value, bound):
            return text % (_show(value), _show(bound))
    factor = schema.get("multipleOf")
    if _is_number(factor) and factor > 0 and not _divides(factor, value):
        return "%s is not a multiple of %s" % (_show(value), _show(factor))
    return None


def _divides(factor, value):
    """Whether value is factor times an integer, exactly: 0.3 is a multiple of 0.1 here."""
    if isinstance(value, int) and isinstance(factor, int):
        return value % factor == 0
    from fractions import Fraction  # lazy: only for multipleOf with a fraction
    try:  # a float's repr is the decimal number it was written as
        quotient = (Fraction(repr(value) if isinstance(value, float) else value)
                    / Fraction(repr(factor) if isinstance(factor, float) else factor))
    except (ValueError, OverflowError):  # inf or nan: no multiple of anything to speak of
        return True
    return quotient.denominator == 1


def _compile(pattern):
    """The pattern compiled, or None: one Python cannot compile is the schema's fault."""
    try:
        with warnings.catch_warnings():  # "Possible nested set" and the like: not ours to say
            warnings.simplefilter("ignore")
            return re.compile(pattern)
    except (re.error, OverflowError):  # a{99999999999}; RecursionError: the caller's
        return None


def _length_problem(value, schema):
    """min/maxLength (in code points, as len() counts), min/maxItems, min/maxProperties."""
    if isinstance(value, str):
        low, high, units = schema.get("minLength"), schema.get("maxLength"), (
            "character", "characters")
    elif isinstance(value, list):
        low, high, units = schema.get("minItems"), schema.get("maxItems"), ("item", "items")
    elif isinstance(value, dict):
        low, high, units = schema.get("minProperties"), schema.get("maxProperties"), (
            "property", "properties")
    else:
        return None
    if _is_number(low) and len(value) < low:
        return "expected at least %s, got %d" % (_count(low, *units), len(value))
    if _is_number(high) and len(value) > high:
        return "expected at most %s, got %d" % (_count(high, *units), len(value))
    return None


def _count(number, one, many):
    return "%s %s" % (_show(number), one if number == 1 else many)


def _unique_problem(value, schema):
    if schema.get("uniqueItems") is not True or not isinstance(value, list):
        return None
    first = {}
    for i, item in enumerate(value):
        j = first.setdefault(_canonical(item), i)
        if j != i:
            return "items %d and %d are equal" % (j, i)
    return None


# The formats MCP elicitation offers (client/elicitation, "Requested Schema"):
# RFC 3339 §5.6 dates and date-times; an address whose local part is dotted
# words or quoted (RFC 5321 §4.1.2) and whose domain has a dot or is a literal;
# an absolute URI (RFC 3986 §4.3) of the characters §2 allows.
_DATE = r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
_TIME = r"[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:[Zz]|([-+])([0-9]{2}):([0-9]{2}))"
_LABEL = r"[^\W_](?:[\w-]*[^\W_])?"
_EMAIL = r'(?:[^\s@".]+(?:\.[^\s@".]+)*|"(?:[^"\\\r\n]|\\.)+")@(?:%s(?:\.%s)+|\[[^\[\]\s]+\])\Z' % (
    _LABEL, _LABEL)
_URI = r"[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*\Z"


def _format_problem(value, kind):
    """``format`` as an assertion (validation §7.2.2), for the formats above; others pass."""
    if kind == "email":
        valid = re.match(_EMAIL, value)
    elif kind == "uri":
        valid = re.match(_URI, value)
    elif kind in ("date", "date-time"):
        valid = _is_date_time(value, kind == "date")
    else:
        return None
    return None if valid else "%s is not a valid %s" % (_show(value), kind)


def _is_date_time(text, date_only):
    found = re.match(_DATE + (r"\Z" if date_only else _TIME + r"\Z"), text)
    if not found:
        return False
    year, month, day = (int(n) for n in found.groups()[:3])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= month <= 12 and 1 <= day <= days[month - 1]):
        return False
    if date_only:
        return True
    hour, minute, second, sign, zone_hour, zone_minute = found.groups()[3:]
    offset = 0 if sign is None else (int(zone_hour) * 60 + int(zone_minute)) * int(sign + "1")
    if int(hour) > 23 or int(minute) > 59 or int(second) > 60 or abs(offset) >= 24 * 60:
        return False
    if sign and int(zone_minute) > 59:
        return False
    # A leap second is 23:59:60 in UTC (RFC 3339 §5.7), wherever the offset puts it.
    return second != "60" or (int(hour) * 60 + int(minute) - offset) % (24 * 60) == 24 * 60 - 1


# ---------------------------------------------------------------------------
# Skills: a published skill's entry checked, its files verified, its front matter read
# ---------------------------------------------------------------------------
# The extension io.modelcontextprotocol/skills (spec extensions/skills.md), and
# the subset of YAML a SKILL.md's front matter is read in.

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _checked_skill(skill, allow_dynamic=False):
    """The files an entry lists, by URI: {uri: (size, digest)}; None for a
    "dynamic" one (refused unless ``allow_dynamic``). Everything refused
    before any read (skills.md "Resources", "Limits") raises SkillRefused:
    no file list, a malformed file, a file outside the skill's directory,
    one listed twice, SKILL.md missing from it, or over the limits."""
    if not isinstance(skill, dict) or not isinstance(skill.get("uri"), str):
        raise SkillRefused("a skill entry is an object with a uri, not %s" % _show(skill))
    uri = skill["uri"]
    front = skill.get("frontmatter")
    if not isinstance(front, dict) or not isinstance(front.get("name"), str) \
            or not isinstance(front.get("description"), str):
        raise SkillRefused("skill %s: its entry has no frontmatter with a name and a "
                           "description" % uri, uri)
    segments = _skill_path(uri)
    if segments[-1] != front["name"]:
        raise SkillRefused("skill %s: its URI does not end in its name %s (the extension "
                           "asks that it does)" % (uri, _show(front["name"])), uri)
    resources = skill.get("resources")
    if resources == "dynamic":
        if not allow_dynamic:
            raise SkillRefused("skill %s is dynamic: the server gives no file list to verify "
                               "it against (--allow-dynamic reads it unverified)" % uri, uri)
        return None
    if not isinstance(resources, list):
        raise SkillRefused("skill %s: its entry's resources is %s, neither a file list nor "
                           '"dynamic"' % (uri, "missing" if resources is None
                                          else _show(resources)), uri)
    if len(resources) > SKILL_MAX_FILES:
        raise SkillRefused("skill %s has %d files, more than the %d a skill may have"
                           % (uri, len(resources), SKILL_MAX_FILES), uri)
    files = collections.OrderedDict()
    for item in resources:
        files.update([_skill_resource(uri, item, files)])
    total = sum(size for size, _ in files.values())
    if total > SKILL_MAX_BYTES:
        raise SkillRefused("skill %s comes to %d bytes, more than the %d a skill may have"
                           % (uri, total, SKILL_MAX_BYTES), uri)
    if uri not in files:
        raise SkillRefused("skill %s: its file list does not name its SKILL.md" % uri, uri)
    return files


def _skill_resource(skill, item, files):
    """(uri, (size, digest)) of one entry of a file list, or SkillRefused."""
    item = item if isinstance(item, dict) else {}
    uri, size, digest = item.get("uri"), item.get("size"), item.get("digest")
    if not isinstance(uri, str) or isinstance(size, bool) or not isinstance(size, int) \
            or size < 0 or not isinstance(digest, str) or not _DIGEST.match(digest):
        raise SkillRefused("skill %s: a file of its list is not {uri, size, digest: "
                           "sha256:HEX}: %s" % (skill, _show(item)), skill)
    if uri != skill:
        _skill_relative(skill, uri)
    if uri in files:
        raise SkillRefused("skill %s lists %s twice" % (skill, uri), skill, uri)
    return uri, (size, digest)


def _skill_path(uri):
    """The segments of a skill's path (SCHEME://SKILL-PATH/SKILL.md), as
    written; SkillRefused for a URI not of that form or with a segment that
    is empty, "." or ".." (percent-encoded or not)."""
    scheme = _URI_SCHEME.match(uri)
    if scheme is None or not uri.endswith("/" + _SKILL_FILE):
        raise SkillRefused("%s is not a skill's URI (SCHEME://PATH/SKILL.md)" % _show(uri), uri)
    segments = uri[scheme.end():-len(_SKILL_FILE) - 1].split("/")
    for segment in segments:
        if _unquoted(segment) in ("", ".", ".."):
            raise SkillRefused("%s is not a skill's URI: its path has an empty, . or .. "
                               "segment" % _show(uri), uri)
    return [_unquoted(segment) for segment in segments]


def _skill_relative(skill, uri):
    """The segments of file ``uri`` below skill ``skill``'s directory, percent-
    decoded; SkillRefused for one outside it: another scheme or authority, a
    sibling that shares a prefix (refunds-old), or a ".", ".." or empty segment."""
    root = skill[:-len(_SKILL_FILE)]  # SCHEME://PATH/, ending in its slash
    if not isinstance(uri, str) or not uri.startswith(root) or len(uri) == len(root):
        raise SkillRefused("%s is not inside skill %s's directory, so it is not read"
                           % (_show(uri), skill), skill, uri if isinstance(uri, str) else None)
    segments = [_unquoted(segment) for segment in uri[len(root):].split("/")]
    if any(segment in ("", ".", "..") for segment in segments):
        raise SkillRefused("%s reaches outside skill %s's directory (an empty, . or .. "
                           "segment), so it is not read" % (_show(uri), skill), skill, uri)
    return segments


def _unquoted(segment):
    """A URI path segment percent-decoded (as UTF-8, invalid bytes kept as escapes)."""
    if "%" not in segment:
        return segment
    from urllib.parse import unquote  # lazy: only a skill's URIs need it
    return unquote(segment, errors="surrogateescape")


def _skill_bytes(result, uri, skill):
    """The bytes resources/read gave for ``uri``: UTF-8 of ``text``, or ``blob`` decoded."""
    contents = [c for c in _list(_dict(result).get("contents")) if isinstance(c, dict)]
    mine = [c for c in contents if c.get("uri") == uri] or [
        c for c in contents if len(contents) == 1 and c.get("uri") is None]
    if len(mine) != 1:
        raise SkillRefused("%s: resources/read gave %d contents for it, not one, so it is not "
                           "used" % (uri, len(mine)), skill, uri)
    content = mine[0]
    if isinstance(content.get("text"), str):
        try:
            return content["text"].encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 holds it
            raise SkillRefused("%s: resources/read gave text that is not Unicode (a lone "
                               "surrogate), so it is not used" % uri, skill, uri)
    import base64  # lazy: a blob only
    import binascii  # lazy: a blob only
    try:
        return base64.b64decode(content.get("blob"), validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise SkillRefused("%s: resources/read gave neither text nor base64 blob, so it is "
                           "not used" % uri, skill, uri)


def _verify_skill_bytes(data, uri, listed, skill):
    """The byte count, then the SHA-256, against the entry: SkillRefused for a mismatch."""
    size, digest = listed
    if len(data) != size:
        raise SkillRefused("%s is %d bytes, its entry says %d: not used (the skill may have "
                           "changed since its entry was read)" % (uri, len(data), size),
                           skill, uri)
    found = "sha256:" + _sha256()(data).hexdigest()
    if found != digest:
        raise SkillRefused("%s has SHA-256 %s, its entry says %s: not used (the skill may "
                           "have changed since its entry was read)" % (
                               uri, found[7:19], digest[7:19]), skill, uri)


def _verify_front_matter(data, skill):
    """SKILL.md's front matter, read as YAML, against the entry's, field by field."""
    uri = skill["uri"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillRefused("%s is not UTF-8 text, so its front matter cannot be read" % uri,
                           uri, uri)
    try:
        difference = _front_difference(_front_matter(text), skill["frontmatter"])
    except _YamlRefused as e:
        raise SkillRefused("%s line %d: %s: its front matter cannot be vouched for" % (
            uri, e.line, e.reason), uri, uri)
    if difference is not None:
        raise SkillRefused("%s: its front matter differs from its entry's: %s" % (
            uri, difference), uri, uri)


# -- The front matter: the subset of YAML it is read in ---------------------

_MAX_BYTES = 64 * 1024
_MAX_DEPTH = 64
_MAX_NODES = 10000
_MAX_KEY_CHARS = 1024
_SHOWN_CHARS = 60
_MAX_SEXAGESIMAL_PARTS = 64

_CLOSING = re.compile(r"^---$", re.MULTILINE)
_MARKER = re.compile(r"^(?:(?:---|\.\.\.)(?=[ \t\n]|\Z)|%)", re.MULTILINE)
_FORBIDDEN = re.compile(
    "[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
    "\U00010000-\U0010ffff]")
_NEWLINE = re.compile("\n")
_SPACES = re.compile(" *")
_WHITE = re.compile("[ \t]*")
_PLAIN_STOP = re.compile(r"[\t\n]| #|:(?=[ \t\n]|\Z)")
_FLOW_PLAIN_STOP = re.compile(r"[\t\n,\[\]{}?]| #|:(?=[ \t\n,\[\]{}]|\Z)")
_SINGLE_RUN = re.compile(r"[^'\n \t]+")
_DOUBLE_RUN = re.compile(r'[^"\\\n \t]+')
_HEX = re.compile(r"[0-9a-fA-F]*\Z")
_BLOCK_HEADER = re.compile(r"([|>])(?:([-+])([1-9])?|([1-9])([-+])?)?")

_MISALIGNED = "this line's indentation matches none of the lines above it"
_TAB = "a tab outside quotes and block scalars (PyYAML refuses it)"
_INDICATORS = {
    "&": "anchors (&) are not read",
    "*": "aliases (*) are not read",
    "!": "tags (!) are not read",
    "%": "'%' starts a directive, and directives are not read",
    "@": "'@' is reserved: it cannot start a plain scalar",
    "`": "'`' is reserved: it cannot start a plain scalar",
    "#": "a comment where a value should be",
}
_YAML_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n",
    "v": "\v", "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"',
    "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
    "P": "\u2029",
}
_ESCAPE_SIZES = {"x": 2, "u": 4, "U": 8}


class _YamlRefused(ValueError):
    """Front matter outside the subset this reader vouches for, or malformed."""

    def __init__(self, line, reason):
        ValueError.__init__(self, "SKILL.md line %d: %s" % (line, reason))
        self.line = line
        self.reason = reason


class _Plain(str):
    """A plain (unquoted) scalar: it may read as null, a bool, a number or a
    timestamp as well as its own string."""

    __slots__ = ()


class _Tail(str):
    """A block scalar that runs to the end of the front matter; ``cut`` is its
    text when the line break before the closing --- is left out of the YAML."""

    cut = None


class _Source(object):
    """The front matter's text (each line ending in LF), the SKILL.md line of
    its first line, and the count of nodes read so far."""

    def __init__(self, text, first_line):
        self.text = text
        self.first_line = first_line
        self.starts = [0]
        self.starts.extend(match.end() for match in _NEWLINE.finditer(text))
        self.nodes = 0

    def line_start(self, pos):
        from bisect import bisect_right  # lazy: only a skill's front matter
        return self.starts[bisect_right(self.starts, pos) - 1]

    def refused(self, pos, reason):
        from bisect import bisect_right  # lazy: only a skill's front matter
        line = bisect_right(self.starts, pos) - 1 + self.first_line
        return _YamlRefused(line, reason)


# -- Finding the front matter -------------------------------------------------

def _front_matter(text):
    """The front matter of SKILL.md's text: dicts, lists, and for scalars str,
    or _Plain for plain scalars (or _Tail for a block scalar ending it)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if text.split("\n", 1)[0] != "---":
        raise _YamlRefused(1, "no front matter: SKILL.md does not start with ---")
    closing = _CLOSING.search(text, 4)
    if closing is None:
        raise _YamlRefused(1, "the front matter is never closed: no line --- ends it")
    body = text[4:closing.start()]
    if (len(body) > _MAX_BYTES
            or len(body.encode("utf-8", "surrogatepass")) > _MAX_BYTES):
        raise _YamlRefused(1, "the front matter is over 64 KiB")
    src = _Source(body, 2)
    bad = _FORBIDDEN.search(body)
    if bad is not None:
        raise src.refused(bad.start(), _character_reason(bad.group()))
    marker = _MARKER.search(body)
    if marker is not None:
        if marker.group() == "%":
            raise src.refused(marker.start(), _INDICATORS["%"])
        raise src.refused(marker.start(), "a document marker (%s): several documents "
                          "are not read" % marker.group())
    return _document(src)


def _character_reason(char):
    """Why a character the pre-scan found is refused."""
    if char == "\r":
        return "a carriage return not followed by a line feed"
    if char == "\ufeff":
        return "a byte order mark inside the front matter"
    if char in "\x85\u2028\u2029":
        return ("the character U+%04X, a line break in YAML 1.1 and not in 1.2"
                % ord(char))
    return "the character U+%04X, which YAML does not allow" % ord(char)


def _document(src):
    """The front matter's one node, which must be a mapping."""
    start, indent = _next_line(src, 0)
    if indent < 0:
        raise src.refused(0, "the front matter is empty")
    first = start + indent
    pos, value = _block_node(src, first, -1, 0)
    start, indent = _next_line(src, pos)
    if indent >= 0:
        raise src.refused(start + indent, _MISALIGNED)
    if not isinstance(value, dict):
        raise src.refused(first, "the front matter is not a mapping of fields")
    return value


# -- Lines, spaces and comments ---------------------------------------------

def _next_line(src, pos):
    """From the start of a line, the start of the next line holding content
    (blank and comment lines passed) and its indentation; -1 at the end."""
    text = src.text
    while pos < len(text):
        end = _SPACES.match(text, pos).end()
        char = text[end:end + 1]
        if char == "\t":
            raise src.refused(end, _TAB)
        if char == "#":
            end = _line_end(text, end)
            char = "\n"
        if char != "\n":
            return pos, end - pos
        pos = end + 1
    return len(text), -1


def _end_of_line(src, pos):
    """Pass the spaces and comment that may close a line after a value ending
    at pos; the start of the next line."""
    text = src.text
    end = _SPACES.match(text, pos).end()
    if text.startswith("#", end):
        if end == pos and pos != src.line_start(pos):
            raise src.refused(end, "a comment must be set off from the value by a space")
        end = _line_end(text, end)
    if end >= len(text):
        return len(text)
    if text[end] == "\n":
        return end + 1
    if text[end] == "\t":
        raise src.refused(end, _TAB)
    raise src.refused(end, "unexpected text after the value")


def _line_end(text, pos):
    """The position of the line break that ends pos's line (or of the end)."""
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _enter(src, pos, depth):
    if depth > _MAX_DEPTH:
        raise src.refused(pos, "the front matter nests deeper than %d" % _MAX_DEPTH)
    _yaml_count(src, pos)


def _yaml_count(src, pos):
    src.nodes += 1
    if src.nodes > _MAX_NODES:
        raise src.refused(pos, "the front matter holds more than %d values" % _MAX_NODES)


def _is_entry(text, pos):
    """Whether a block sequence entry ('- ') starts at pos."""
    return text.startswith("-", pos) and text[pos + 1:pos + 2] in ("", " ", "\n", "\t")


# -- Block collections --------------------------------------------------------

def _block_node(src, pos, owner, depth):
    """The node at pos, first on its line or after '- ': a block sequence or
    mapping, or what _inline_node reads. owner is the parent's column."""
    if _is_entry(src.text, pos):
        return _block_sequence(src, pos, depth + 1)
    if _key(src, pos, owner) is not None:
        return _block_mapping(src, pos, depth + 1)
    return _inline_node(src, pos, owner, depth)


def _block_mapping(src, pos, depth):
    """A block mapping whose first key is at pos; its keys stand in pos's column."""
    _enter(src, pos, depth)
    column = pos - src.line_start(pos)
    mapping = {}
    while True:
        found = _key(src, pos, column)
        if found is None:
            raise src.refused(pos, "expected a line 'key: value'")
        key, after = found
        _check_key(src, pos, key, mapping)
        pos, value = _map_value(src, after, column, depth)
        mapping[key] = value
        start, indent = _next_line(src, pos)
        if indent < column:
            return start, mapping
        if indent > column:
            raise src.refused(start + indent, _MISALIGNED)
        pos = start + indent


def _check_key(src, pos, key, mapping):
    _yaml_count(src, pos)
    if len(key) > _MAX_KEY_CHARS:
        raise src.refused(pos, "a key longer than %d characters" % _MAX_KEY_CHARS)
    if isinstance(key, _Plain) and key == "<<":
        raise src.refused(pos, "merge keys (<<) are not read")
    if key in mapping:
        raise src.refused(pos, "the key %s appears twice in this mapping" % _shown(key))


def _map_value(src, pos, column, depth):
    """The value after the ':' at pos - 1 of a key in column: on the key's line,
    or on the lines below (a sequence there may stand in the key's column)."""
    text = src.text
    after = _SPACES.match(text, pos).end()
    if text.startswith("\t", after):
        raise src.refused(after, _TAB)
    if after < len(text) and text[after] not in "\n#":
        return _inline_node(src, after, column, depth)
    start, indent = _next_line(src, _end_of_line(src, pos))
    if indent > column or (indent == column and _is_entry(text, start + indent)):
        return _block_node(src, start + indent, column, depth)
    _yaml_count(src, pos)
    return start, _Plain("")


def _block_sequence(src, pos, depth):
    """A block sequence whose first '-' is at pos; its entries stand in pos's column."""
    _enter(src, pos, depth)
    text = src.text
    column = pos - src.line_start(pos)
    items = []
    while True:
        after = _SPACES.match(text, pos + 1).end()
        if text.startswith("\t", after):
            raise src.refused(after, _TAB)
        if after < len(text) and text[after] not in "\n#":
            pos, item = _block_node(src, after, column, depth)
        else:
            start, indent = _next_line(src, _end_of_line(src, pos + 1))
            if indent > column:
                pos, item = _block_node(src, start + indent, column, depth)
            else:
                _yaml_count(src, pos)
                pos, item = start, _Plain("")
        items.append(item)
        start, indent = _next_line(src, pos)
        if indent > column:
            raise src.refused(start + indent, _MISALIGNED)
        if indent < column or not _is_entry(text, start + indent):
            return start, items
        pos = start + indent


def _key(src, pos, owner):
    """The implicit key at pos and the position after its ':', or None when
    no 'key:' starts there."""
    text = src.text
    char = text[pos:pos + 1]
    if char in ("'", '"'):
        end, key = _quoted(src, pos, owner)
        if "\n" in text[pos:end]:
            return None
    elif char in ("", "[", "{", "|", ">"):
        return None
    else:
        _check_plain_start(src, pos, False)
        end = _plain_run(src, pos, False)
        key = _Plain(text[pos:end])
    colon = _SPACES.match(text, end).end()
    if text.startswith(":", colon) and text[colon + 1:colon + 2] in ("", " ", "\n", "\t"):
        return key, colon + 1
    return None


# -- Scalars and flow collections on a line ----------------------------------

def _inline_node(src, pos, owner, depth):
    """A flow collection or scalar at pos that ends its node's lines; the start
    of the next line and the value."""
    text = src.text
    char = text[pos]
    if char in "|>":
        return _block_scalar(src, pos, owner)
    if char in "[{":
        end, value = _flow_collection(src, pos, owner, depth + 1)
    else:
        _yaml_count(src, pos)
        if char in "'\"":
            end, value = _quoted(src, pos, owner)
        else:
            _check_plain_start(src, pos, False)
            end, value = _yaml_plain(src, pos, owner, False)
    if text.startswith(":", _SPACES.match(text, end).end()):
        if char in "[{":
            raise src.refused(pos, "complex keys ([ ] or { } as a key) are not read")
        if "\n" in text[pos:end]:
            raise src.refused(pos, "a key cannot span lines")
        raise src.refused(pos, "a mapping cannot start on its key's line")
    return _end_of_line(src, end), value


def _check_plain_start(src, pos, flow):
    """Refuse what cannot start a plain scalar at pos, naming it."""
    text = src.text
    char = text[pos]
    follows = text[pos + 1:pos + 2]
    if char in _INDICATORS:
        raise src.refused(pos, _INDICATORS[char])
    if char in "|>":
        raise src.refused(pos, "a block scalar (| or >) inside [ ] or { }")
    if char in ",[]{}":
        raise src.refused(pos, "a '%s' where a value should be" % char)
    if char in "-?:" and follows in ("", " ", "\n", "\t"):
        raise src.refused(pos, {
            "-": "a block sequence cannot start here",
            "?": "complex keys ('? ') are not read",
            ":": "a ':' without a key before it"}[char])
    if flow and (char in "?:" or char == "-" and follows in ",[]{}"):
        raise src.refused(pos, "a value inside [ ] or { } that starts with '%s' is "
                          "read differently by YAML 1.1 and 1.2" % char)


def _plain_run(src, pos, flow):
    """The end of the text of a plain scalar on pos's line, trailing spaces
    left out: it stops at ': ', ' #' and, inside [ ] or { }, at , [ ] { }."""
    text = src.text
    stop = (_FLOW_PLAIN_STOP if flow else _PLAIN_STOP).search(text, pos)
    end = len(text) if stop is None else stop.start()
    if text.startswith("\t", end):
        raise src.refused(end, _TAB)
    if text.startswith("?", end):
        raise src.refused(end, "a '?' inside [ ] or { } is read differently by "
                          "YAML 1.1 and 1.2")
    while end > pos and text[end - 1] == " ":
        end -= 1
    return end


def _yaml_plain(src, pos, owner, flow):
    """A plain scalar at pos, continued on the lines below indented more than
    owner: a line break reads as a space, n empty lines as n line feeds."""
    text = src.text
    chunks = []
    while True:
        end = _plain_run(src, pos, flow)
        chunks.append(text[pos:end])
        after = _SPACES.match(text, end).end()
        if not text.startswith("\n", after):
            return end, _Plain("".join(chunks))
        breaks = 0
        line = after + 1
        while True:
            first = _SPACES.match(text, line).end()
            if not text.startswith("\n", first):
                break
            breaks += 1
            line = first + 1
        if (first >= len(text) or first - line <= owner or text[first] == "#"
                or _plain_run(src, first, flow) == first):
            return end, _Plain("".join(chunks))
        chunks.append("\n" * breaks if breaks else " ")
        pos = first


def _quoted(src, pos, owner):
    """A single- or double-quoted scalar at pos, folded like a plain one across
    lines indented more than owner; the position after it and its text."""
    text = src.text
    quote = text[pos]
    run = _DOUBLE_RUN if quote == '"' else _SINGLE_RUN
    chunks = []
    start = pos
    pos += 1
    while True:
        match = run.match(text, pos)
        if match is not None:
            chunks.append(match.group())
            pos = match.end()
        char = text[pos:pos + 1]
        if char == quote:
            if quote == "'" and text.startswith("'", pos + 1):
                chunks.append("'")
                pos += 2
                continue
            return pos + 1, "".join(chunks)
        if char in (" ", "\t"):
            end = _WHITE.match(text, pos).end()
            if not text.startswith("\n", end):
                chunks.append(text[pos:end])
            pos = end
        elif char == "\n":
            pos, breaks = _quoted_break(src, pos, owner)
            chunks.append("\n" * breaks if breaks else " ")
        elif char == "\\":
            pos = _escape(src, pos, owner, chunks)
        else:
            raise src.refused(start, "this quoted scalar is never closed")


def _quoted_break(src, pos, owner):
    """Pass the line break at pos, the empty lines after it and the next line's
    indentation; that position and the count of empty lines."""
    text = src.text
    breaks = -1
    while text.startswith("\n", pos):
        breaks += 1
        line = pos + 1
        pos = _WHITE.match(text, line).end()
        indent = _SPACES.match(text, line).end() - line
        tab = pos > line + indent
        if indent <= owner and (tab or pos < len(text) and text[pos] != "\n"):
            raise src.refused(pos, "this line of a quoted scalar must be indented "
                              "with spaces more than its key or entry")
    return pos, breaks


def _escape(src, pos, owner, chunks):
    """Read the escape at pos in a double-quoted scalar into chunks; the
    position after it."""
    text = src.text
    char = text[pos + 1:pos + 2]
    if char == "\n":
        pos, breaks = _quoted_break(src, pos + 1, owner)
        if breaks:
            raise src.refused(pos, "an empty line after an escaped line break is read "
                              "as a line feed by some YAML readers, as a space by others")
        return pos
    if char in _YAML_ESCAPES:
        chunks.append(_YAML_ESCAPES[char])
        return pos + 2
    size = _ESCAPE_SIZES.get(char, 0)
    digits = text[pos + 2:pos + 2 + size]
    if not size or len(digits) != size or not _HEX.match(digits):
        raise src.refused(pos, "an unknown escape \\%s in a double-quoted scalar" % char)
    code = int(digits, 16)
    end = pos + 2 + size
    low = text[end + 2:end + 6] if text.startswith("\\u", end) else ""
    if 0xD800 <= code < 0xDC00 and len(low) == 4 and _HEX.match(low):
        if 0xDC00 <= int(low, 16) < 0xE000:
            code = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)
            end += 6
    if 0xD800 <= code < 0xE000 or code > 0x10FFFF:
        raise src.refused(pos, "the escape \\%s%s is no character" % (char, digits))
    chunks.append(chr(code))
    return end


def _flow_collection(src, pos, owner, depth):
    """A [ ] or { } collection at pos, whose lines after the first are
    indented more than owner; the position after it and its value."""
    _enter(src, pos, depth)
    text = src.text
    opening = pos
    closing = "]" if text[pos] == "[" else "}"
    collection = [] if closing == "]" else {}
    pos = _flow_space(src, pos + 1, owner, opening)
    while not text.startswith(closing, pos):
        if closing == "}":
            pos = _flow_pair(src, pos, owner, depth, collection, opening)
        else:
            entry = pos
            pos, item = _flow_node(src, pos, owner, depth)
            if text.startswith(":", _SPACES.match(text, pos).end()):
                raise src.refused(entry, "a pair 'key: value' inside [ ] is not read")
            collection.append(item)
        pos = _flow_space(src, pos, owner, opening)
        if text.startswith(",", pos):
            pos = _flow_space(src, pos + 1, owner, opening)
        elif not text.startswith(closing, pos):
            raise src.refused(pos, "expected ',' or '%s'" % closing)
    return pos + 1, collection


def _flow_pair(src, pos, owner, depth, mapping, opening):
    """Read the entry 'key: value' (or a lone key) of a { } at pos into
    mapping; the position after it."""
    text = src.text
    if text[pos] in "[{":
        raise src.refused(pos, "complex keys ([ ] or { } as a key) are not read")
    end, key = _flow_scalar(src, pos, owner)
    if "\n" in text[pos:end]:
        raise src.refused(pos, "a key cannot span lines")
    _check_key(src, pos, key, mapping)
    colon = _SPACES.match(text, end).end()
    if not text.startswith(":", colon):
        _yaml_count(src, end)
        mapping[key] = _Plain("")
        return end
    end = _flow_space(src, colon + 1, owner, opening)
    if text[end] in ",}":
        _yaml_count(src, end)
        mapping[key] = _Plain("")
        return end
    end, mapping[key] = _flow_node(src, end, owner, depth)
    return end


def _flow_node(src, pos, owner, depth):
    """A scalar or a nested collection inside [ ] or { }."""
    char = src.text[pos]
    if char in "[{":
        return _flow_collection(src, pos, owner, depth + 1)
    _yaml_count(src, pos)
    return _flow_scalar(src, pos, owner)


def _flow_scalar(src, pos, owner):
    """A quoted or plain scalar inside [ ] or { }."""
    if src.text[pos] in "'\"":
        return _quoted(src, pos, owner)
    _check_plain_start(src, pos, True)
    return _yaml_plain(src, pos, owner, True)


def _flow_space(src, pos, owner, opening):
    """Pass the spaces, comments and line breaks at pos inside the [ ] or { }
    opened at opening; refuse a line not indented more than owner."""
    text = src.text
    line_start = False
    while True:
        end = _SPACES.match(text, pos).end()
        if line_start and end < len(text) and text[end] not in "\n#" and end - pos <= owner:
            raise src.refused(end, "this line of a [ ] or { } must be indented more "
                              "than its key or entry")
        if text.startswith("\t", end):
            raise src.refused(end, _TAB)
        if text.startswith("#", end):
            if end == pos and not line_start:
                raise src.refused(end, "a comment must be set off by a space")
            end = _line_end(text, end)
        if end >= len(text):
            raise src.refused(opening, "this '%s' is never closed" % text[opening])
        if text[end] != "\n":
            return end
        pos = end + 1
        line_start = True


# -- Block scalars ----------------------------------------------------------

def _block_scalar(src, pos, owner):
    """A literal (|) or folded (>) scalar whose header is at pos; the start of
    the line after it and its text."""
    text = src.text
    header = _BLOCK_HEADER.match(text, pos)
    if text[header.end():header.end() + 1] not in ("", " ", "\n"):
        raise src.refused(header.end(), "a block scalar's header is | or > with at "
                          "most a chomping indicator (- or +) and a digit 1-9")
    folded = header.group(1) == ">"
    chomp = header.group(2) or header.group(5) or ""
    digit = header.group(3) or header.group(4)
    indent = max(owner, 0) + int(digit) if digit else None
    lines, end = _block_lines(src, _end_of_line(src, header.end()), owner, indent)
    texts = [index for index, line in enumerate(lines) if line.strip(" ")]
    if any(lines[texts[-1] + 1 if texts else 0:]):
        raise src.refused(pos, "a block scalar that ends in a line of only spaces past "
                          "its indentation is read differently by YAML readers")
    pos = end
    last = len(lines)
    while last and not lines[last - 1]:
        last -= 1
    value = _folded(lines[:last]) if folded else "\n".join(lines[:last])
    if chomp == "+":
        value += "\n" * (len(lines) - last + (1 if last else 0))
    elif not chomp and last:
        value += "\n"
    if pos >= len(text) and value.endswith("\n") and (chomp == "+" or lines[-1]):
        value = _Tail(value)
        value.cut = value[:-1]
    _yaml_count(src, pos)
    return pos, value


def _block_lines(src, pos, owner, indent):
    """The lines of a block scalar's content from pos ('' for an empty line),
    without their indentation, which is indent or the first line's; and the
    position of the line that ends them."""
    text = src.text
    lines = []
    widest = 0
    while pos < len(text):
        end = _line_end(text, pos)
        spaces = _SPACES.match(text, pos, end).end() - pos
        if pos + spaces == end:
            if indent is None:
                widest = max(widest, spaces)
            lines.append(text[pos + indent:end] if indent is not None and spaces > indent
                         else "")
            pos = end + 1
            continue
        if indent is None:
            if spaces <= owner:
                break
            if spaces < widest:
                raise src.refused(pos, "an empty line before this block scalar's first "
                                  "line is indented more than it")
            indent = spaces
        if spaces < indent:
            break
        lines.append(text[pos + indent:end])
        pos = end + 1
    return lines, pos


def _folded(lines):
    """The text of a folded scalar's lines: the break between two lines that
    do not start with white space reads as a space unless empty lines follow it."""
    chunks = []
    previous = None
    empty = 0
    for line in lines:
        if not line:
            empty += 1
            continue
        if previous is None:
            chunks.append("\n" * empty)
        elif previous[0] not in " \t" and line[0] not in " \t":
            chunks.append("\n" * empty if empty else " ")
        else:
            chunks.append("\n" * (empty + 1))
        chunks.append(line)
        previous = line
        empty = 0
    return "".join(chunks)


# -- What a plain scalar reads as ---------------------------------------------

_NULLS = frozenset(["", "~", "null", "Null", "NULL"])
_BOOLS = dict([(word, True) for word in
               "y Y yes Yes YES true True TRUE on On ON".split()]
              + [(word, False) for word in
                 "n N no No NO false False FALSE off Off OFF".split()])
_INT_12 = re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")
_FLOAT_12 = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INT_11 = re.compile(r"""(?:[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\Z""", re.VERBOSE)
_FLOAT_11 = re.compile(r"""(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*)\Z""", re.VERBOSE)
_YAML_INFINITY = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)\Z")
_YAML_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_DATETIME = re.compile(r"""(?P<year>[0-9]{4})-(?P<month>[0-9]{1,2})-(?P<day>[0-9]{1,2})
    (?:[Tt]|[ \t]+)(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})
    (?:\.(?P<fraction>[0-9]*))?
    (?:[ \t]*(?P<tz>Z|(?P<sign>[-+])(?P<tz_hour>[0-9]{1,2})(?::(?P<tz_minute>[0-9]{2}))?))?
    \Z""", re.VERBOSE)


def _readings(text):
    """What a plain scalar reads as besides its own string: null, a bool, a
    number by YAML 1.2's core schema or YAML 1.1 (as PyYAML reads it, with the
    spec's y and n), or the JSON renderings of a YAML 1.1 timestamp."""
    values = []
    if text in _NULLS:
        values.append(None)
    if text in _BOOLS:
        values.append(_BOOLS[text])
    for pattern, convert in ((_INT_12, _int_12), (_FLOAT_12, float),
                             (_INT_11, _int_11), (_FLOAT_11, _float_11),
                             (_YAML_INFINITY, _float_11), (_NAN, _float_11)):
        if pattern.match(text):
            try:
                values.append(convert(text))
            except (ValueError, OverflowError):  # "0b_", or too many digits
                pass
    values.extend(_timestamps(text))
    return values


def _int_12(text):
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text)


def _int_11(text):
    """A YAML 1.1 int, as PyYAML constructs it: 0b, 0x, a leading 0 for
    octal, and base 60 with ':'."""
    digits = text.replace("_", "")
    sign = -1 if digits[0] == "-" else 1
    if digits[0] in "+-":
        digits = digits[1:]
    if digits == "0":
        return 0
    if digits.startswith("0b"):
        return sign * int(digits[2:], 2)
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits[0] == "0":
        return sign * int(digits, 8)
    if ":" in digits:
        return sign * _sexagesimal(digits, int)
    return sign * int(digits)


def _float_11(text):
    """A YAML 1.1 float, as PyYAML constructs it (.inf and .nan as well)."""
    digits = text.replace("_", "").lower()
    sign = -1 if digits[0] == "-" else 1
    if digits[0] in "+-":
        digits = digits[1:]
    if digits == ".inf":
        return sign * float("inf")
    if digits == ".nan":
        return float("nan")
    if ":" in digits:
        return sign * _sexagesimal(digits, float)
    return sign * float(digits)


def _sexagesimal(digits, convert):
    """A base 60 number, summed from its last part as PyYAML does, so that
    floats round alike; past 64 parts, none (a bound on the work)."""
    if digits.count(":") >= _MAX_SEXAGESIMAL_PARTS:
        raise ValueError("too many base 60 parts")
    value = convert(0)
    base = 1
    for part in reversed(digits.split(":")):
        value += convert(part) * base
        base *= 60
    return value


def _timestamps(text):
    """The JSON renderings a server may give a YAML 1.1 timestamp: Python's
    str() and isoformat(), and JavaScript's toISOString()."""
    import datetime  # lazy: only a plain scalar that may be a date
    try:
        if _YAML_DATE.match(text):
            date = datetime.date(*[int(part) for part in text.split("-")])
            return [date.isoformat(), date.isoformat() + "T00:00:00.000Z"]
        match = _DATETIME.match(text)
        if match is None:
            return []
        part = match.groupdict()
        fraction = int((part["fraction"] or "")[:6].ljust(6, "0"))
        zone = None
        if part["sign"]:
            offset = datetime.timedelta(hours=int(part["tz_hour"]),
                                        minutes=int(part["tz_minute"] or 0))
            zone = datetime.timezone(-offset if part["sign"] == "-" else offset)
        elif part["tz"]:
            zone = datetime.timezone.utc
        moment = datetime.datetime(
            int(part["year"]), int(part["month"]), int(part["day"]), int(part["hour"]),
            int(part["minute"]), int(part["second"]), fraction, zone)
        utc = moment.replace(tzinfo=None) - (moment.utcoffset() or datetime.timedelta())
    except (ValueError, OverflowError):  # no such day, hour or offset
        return []
    script = "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (
        utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second,
        utc.microsecond // 1000)
    return [str(moment), moment.isoformat(), script]


# -- Comparing with the entry -----------------------------------------------

def _front_matches(value, expected):
    """Whether the front matter read from SKILL.md is the entry's JSON value."""
    return _front_difference(value, expected) is None


def _front_difference(value, expected):
    """None when the front matter read from SKILL.md matches the entry's JSON
    value, else the first difference, naming its field."""
    return _difference(value, expected, "")


def _difference(value, expected, path):
    if isinstance(value, dict):
        if not isinstance(expected, dict):
            return _differs(path, value, expected)
        return _mapping_difference(value, expected, path)
    if isinstance(value, list):
        if not isinstance(expected, list):
            return _differs(path, value, expected)
        if len(value) != len(expected):
            return "%s: SKILL.md has %d items, the entry %d" % (
                _yaml_field(path), len(value), len(expected))
        for index, item in enumerate(value):
            found = _difference(item, expected[index], "%s[%d]" % (path, index))
            if found is not None:
                return found
        return None
    if isinstance(value, _Plain):
        readings = [str(value)] + _readings(value)
    elif isinstance(value, _Tail):
        readings = [str(value), value.cut]
    else:
        readings = [value]
    if any(_yaml_same(reading, expected) for reading in readings):
        return None
    return _differs(path, value, expected)


def _mapping_difference(value, expected, path):
    partners = _partners(value, expected)
    for key in value:
        if key not in partners:
            return "SKILL.md has a field %s the entry lacks" % _shown(_yaml_join(path, key))
    paired = set(partners.values())
    for key in expected:
        if key not in paired:
            return "%s is missing from SKILL.md" % _yaml_field(_yaml_join(path, key))
    for key in value:
        found = _difference(value[key], expected[partners[key]], _yaml_join(path, key))
        if found is not None:
            return found
    return None


def _partners(value, expected):
    """Each front matter key's key in the entry: the same string, else, for a
    plain key, the JSON key one of its readings becomes."""
    partners = {}
    for key in value:
        if key in expected:
            partners[key] = key
    taken = set(partners)
    for key in value:
        if key in partners or not isinstance(key, _Plain):
            continue
        for form in _key_forms(key):
            if form in expected and form not in taken:
                partners[key] = form
                taken.add(form)
                break
    return partners


def _key_forms(key):
    """The JSON object keys that Python's json or JavaScript makes of a plain
    key's readings: "null" (or ""), "true", "8", "1.1", "Infinity", and
    JavaScript's "1" for 1.0."""
    forms = []
    for reading in _readings(key):
        if reading is None:
            forms.extend(["null", ""])  # Python's json; the npm package yaml
        elif isinstance(reading, bool):
            forms.append("true" if reading else "false")
        elif isinstance(reading, int):
            forms.append(str(reading))
            if _double(reading) is not None:
                forms.append(_js_number(float(reading)))
        elif isinstance(reading, float):
            if reading != reading:
                forms.append("NaN")
            elif reading in (float("inf"), float("-inf")):
                forms.append("Infinity" if reading > 0 else "-Infinity")
            else:
                forms.extend([repr(reading), _js_number(reading)])
        else:
            forms.append(reading)
    return forms


def _js_number(number):
    """A finite float as JavaScript's String() writes it: "1" for 1.0,
    "2345678901234567700", "1e+21", "1.5e-7"."""
    if number == 0:
        return "0"
    import decimal  # lazy: only a number of a skill's front matter
    digits = decimal.Decimal(repr(number))
    if 1e-6 <= abs(number) < 1e21:
        text = format(digits, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    sign, figures, exponent = digits.normalize().as_tuple()
    figures = "".join(str(figure) for figure in figures)
    power = exponent + len(figures) - 1
    mantissa = figures[0] + ("." + figures[1:] if figures[1:] else "")
    return "%s%se%s%d" % ("-" if sign else "", mantissa, "+" if power >= 0 else "-",
                          abs(power))


def _yaml_same(reading, expected):
    """Whether a reading is the entry's value: a bool is never a number, nor a
    number a string; numbers are the same by value or as doubles (as
    JavaScript reads and writes them), NaN as NaN."""
    if isinstance(reading, bool) or isinstance(expected, bool):
        return reading is expected
    if reading is None or expected is None:
        return reading is expected
    if isinstance(reading, str) or isinstance(expected, str):
        return (isinstance(reading, str) and isinstance(expected, str)
                and reading == expected)
    if isinstance(reading, (int, float)) and isinstance(expected, (int, float)):
        if reading == expected or (reading != reading and expected != expected):
            return True
        return _double(reading) == _double(expected) is not None
    return False


def _double(number):
    """The number as JavaScript holds it (the nearest double), or None."""
    try:
        return float(number)
    except OverflowError:
        return None


def _yaml_join(path, key):
    return "%s.%s" % (path, key) if path else str(key)


def _yaml_field(path):
    return "field %s" % _shown(path) if path else "the front matter"


def _differs(path, value, expected):
    return "%s: SKILL.md has %s, the entry %s" % (
        _yaml_field(path), _shown(value), _shown(expected))


def _shown(value):
    """A value as a message shows it: short, and quoted like repr."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, _Plain) and not value:
        return "an empty value"
    if isinstance(value, str):
        text = str(value)
        if len(text) > _SHOWN_CHARS:
            return repr(text[:_SHOWN_CHARS]) + "..."
        return repr(text)
    return repr(value)


# -- end of the front matter reader


# ---------------------------------------------------------------------------
# Transports: what the Client needs of a way to a server; stdio
# ---------------------------------------------------------------------------

class _Transport(object):
    """The way to one server, as the Client uses it; each transport subclasses this.

    The Client keeps the protocol (eras, ids, _meta, MRTR, answer policies)
    and never asks which transport it holds; what the specification lets
    differ by transport (sessions, headers, how a request is cancelled)
    happens behind these methods. A transport owns what it starts (a process,
    sockets, threads) and ``close`` ends all of it within the grace period.

    The core, which every transport implements:

    start()             reach the server; LaunchError, ConnectionLost, ...
    send(message, frame, answer=False)
                        send one message: its dict (for what a transport
                        derives from it) and its encoded frame. Never blocks:
                        what cannot go now is queued. ``answer`` marks a
                        response to the server.
    hold(), flush()     after hold(), frames only queue, to go out together
                        at flush() (or at the next receive).
    receive(deadline)   the inbox, a deque the caller pops from, waiting until
                        ``deadline`` (a _Deadline) at most for something to
                        arrive. Items: messages (dicts), _Noise, and _Failed
                        (one request failed, the rest go on). What the caller
                        leaves stays for the next call. Raises the MCPError
                        that ended the connection once the inbox is empty.
    waker()             a function that another thread may call to make a
                        waiting ``receive`` return at once (a session's server
                        hears its clients so); call it before that thread starts.
    describe()          how the server is reached, for people (``info``).
    last_words          text the server said last, for error lines.
    close(grace=None)   end everything, each step ``grace`` seconds at most
                        (None: the transport's own); idempotent.
    abort()             from a signal handler: end everything at once.

    Optional hooks, for what differs by transport; the defaults here do
    nothing (or say there is nothing to do):

    time_limit(ident, limit)
                        request ``ident``, about to be sent, may take until
                        ``limit`` (monotonic) at most: a session passes it on,
                        HTTP connects within it.
    cancel(ident)       True if the transport itself cancelled the request
                        (or took it back unsent); False: the Client sends
                        notifications/cancelled.
    settled(era, version)
                        the era and protocol version are known (or changed).
    negotiated()        the era and handshake the server already settled (a
                        session's, as a dict), or None: the Client settles them.
    listen()            open what carries the server's own messages outside
                        any request, if the transport has such a thing to open
                        (the legacy era's GET stream) and has not yet.
    backlogged()        True while answers to the server pile up unsent: it
                        is not reading, and is not answered any more.
    held_back(ident)    why request ``ident`` was never sent, for people, or
                        None if it went (or the transport cannot tell).
    vet_tools(tools)    (the tools of a tools/list page it can call, [(name,
                        why) for each it cannot]); all of them by default.
    needs_tools()       True while it must see tools/list before a tools/call.
    authorize(error)    after an AuthError: True when new credentials are in
                        place and the refused request is worth sending again.
    renew(session)      after the server ended session ``session`` (HTTP 404):
                        True when this call should open a new one, False when
                        another request renewed it already.
    env_names()         the names of the variables the server was given, or None.

    Attributes: ``max_bytes`` (the largest message), ``received`` (bytes read
    so far), ``pid`` (the server's process, or None).
    """

    held = False
    pid = None
    received = 0
    noise = "ignored non-JSON line on server stdout: %r"  # a warning, by transport
    max_bytes = DEFAULT_MAX_BYTES
    last_words = ""

    def start(self):
        raise NotImplementedError

    def send(self, message, frame, answer=False):
        raise NotImplementedError

    def hold(self):
        self.held = True

    def flush(self):
        pass

    def receive(self, deadline):
        raise NotImplementedError

    def waker(self):
        raise NotImplementedError

    def describe(self):
        raise NotImplementedError

    def close(self, grace=None):
        raise NotImplementedError

    def abort(self):
        self.close(0)

    # -- optional hooks -------------------------------------------------------

    def time_limit(self, ident, limit):
        pass

    def cancel(self, ident):
        return False

    def settled(self, era, version):
        pass

    def negotiated(self):
        return None

    def listen(self):
        pass

    def backlogged(self):
        return False

    def held_back(self, ident):
        return None

    def vet_tools(self, tools):
        return tools, []

    def needs_tools(self):
        return False

    def authorize(self, error):
        return False

    def renew(self, session):
        return False

    def env_names(self):
        return None


class _Asked(object):
    """An inbox item: a question from the server held over from a wait, with
    the time limit it is answered within (Client._hold_over)."""

    __slots__ = ("message", "limit")

    def __init__(self, message, limit):
        self.message = message
        self.limit = limit


class _Failed(object):
    """An inbox item: request ``ident`` failed with ``error`` (an MCPError) in the
    transport, as one HTTP request can while the others go on."""

    __slots__ = ("ident", "error")

    def __init__(self, ident, error):
        self.ident = ident
        self.error = error


# The ends a selectors loop waits on and moves bytes through: POSIX, pipes
# and their descriptors, read and written with os.read, os.write and
# os.writev; Windows, whose select() takes sockets only, the two ends of a
# socketpair. _channel() makes a (read end, write end); _close_end ends one.
if _WINDOWS:
    def _channel():
        """A loopback TCP pair made with the C module (socket.py's enums are
        a tenth of a cold start there), its ends checked to be each other's,
        Nagle's delay off: a frame goes at once, in however many sends."""
        import _socket  # lazy: what the loop waits on, on Windows
        family, kind = _socket.AF_INET, _socket.SOCK_STREAM
        listener = _socket.socket(family, kind)
        ends = []
        try:
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            ends.append(_socket.socket(family, kind))
            ends[0].connect(listener.getsockname())
            fd, address = listener._accept()
            ends.append(_socket.socket(family, kind, 0, fd))
            if address != ends[0].getsockname():  # another took the port's connection
                raise ConnectionError(errno.ECONNABORTED, "a loopback pair was intercepted")
            for end in ends:
                end.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
                end.setblocking(False)
        except BaseException:
            for end in ends:
                end.close()
            raise
        finally:
            listener.close()
        return ends[1], ends[0]

    def _read_end(end, size):
        try:
            return end.recv(size)
        except ConnectionError:  # the far end gone: its end of file
            return b""

    def _write_end(end, data):
        return end.send(data)

    def _writev_end(end, frames):
        return end.send(b"".join(frames))

    def _close_end(end):
        end.close()
else:
    def _channel():
        ends = os.pipe()
        for end in ends:
            os.set_blocking(end, False)
        return ends

    _read_end, _write_end, _writev_end, _close_end = os.read, os.write, os.writev, os.close


# A poll of a few sockets and channels, with select.poll's calls:
# _new_poll() gives (poll, the events of reading, of writing). POSIX:
# select.poll itself (what selectors adds on top, enums and a class, costs a
# short call through a session a tenth of its time). Windows, which has no
# poll and whose select() takes sockets only: the same calls over select().
if _WINDOWS:
    class _SelectPoll(object):

        def __init__(self):
            self._watched = {}

        def register(self, what, events):
            self._watched[what] = events

        modify = register

        def unregister(self, what):
            self._watched.pop(what, None)

        def poll(self, milliseconds):
            import select  # lazy: what waits on sockets
            reads = [what for what, events in self._watched.items() if events & 1]
            writes = [what for what, events in self._watched.items() if events & 4]
            seconds = min(max(0.0, milliseconds / 1000.0), _WAIT_STEP)  # callers wait on
            if not reads and not writes:
                time.sleep(seconds)
                return []
            readable, writable, failed = select.select(reads, writes, reads, seconds)
            ready = dict((what, 1) for what in readable + failed)
            for what in writable:
                ready[what] = ready.get(what, 0) | 4
            return list(ready.items())

    def _new_poll():
        return _SelectPoll(), 1, 4
else:
    def _new_poll():
        import select  # lazy: what waits on sockets
        return select.poll(), select.POLLIN | select.POLLHUP | select.POLLERR, select.POLLOUT


class _WakePipe(object):
    """A channel whose read end sits in a transport's poll: a byte written to
    it, from any thread, ends the wait. No wake is lost, whenever it comes; a
    full channel already holds one. ``close`` first stops further writes, so a
    late wake never reaches a descriptor number the process has reused."""

    def __init__(self):
        import _thread  # lazy: the C module, all a lock needs
        self.fds = _channel()
        self._open = True
        self._lock = _thread.allocate_lock()

    def wake(self):
        with self._lock:
            if self._open:
                try:
                    _write_end(self.fds[1], b"w")
                except OSError:
                    pass  # full: a wake is pending

    def drain(self):
        try:
            _read_end(self.fds[0], _READ_SIZE)
        except OSError:
            pass

    def close(self):
        with self._lock:
            if self._open:
                self._open = False
                for fd in self.fds:
                    _close_end(fd)


# The server's stdin, stdout and stderr as ends the stdio transport's loop
# waits on. POSIX: the pipes themselves. Windows: a thread per pipe copies
# between it and one end of a socketpair (blocking on the pipe, which the
# loop cannot), so the loop, its caps, its deadlines and the take-back of
# unsent frames are the same on both; the threads end with the pipes.
if _WINDOWS:
    class _ServerPipes(object):

        def __init__(self, proc):
            import threading  # lazy: Windows stdio only
            self.input, far_in = _channel()
            self.output, far_out = _channel()
            self.errors, far_err = _channel()
            for end in (far_in, far_out, far_err):
                end.setblocking(True)  # the threads' ends block; the loop's do not
            import _socket  # lazy: Windows stdio only
            # What is written and not yet read by the server held to about a
            # pipe's worth, as on POSIX (a socket pair's buffers grow to
            # megabytes): a request the server did not read stays unsent, and
            # answers to a server that does not read back up where we see them.
            self.input.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDBUF, _READ_SIZE)
            far_in.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVBUF, _READ_SIZE)
            self.input_closed = False
            self._threads = [threading.Thread(target=target, args=args, daemon=True)
                             for target, args in ((self._to_pipe, (far_in, proc.stdin)),
                                                  (self._from_pipe, (proc.stdout, far_out)),
                                                  (self._from_pipe, (proc.stderr, far_err)))]
            for thread in self._threads:
                thread.start()

        @staticmethod
        def _to_pipe(end, pipe):
            try:
                while True:
                    data = end.recv(_READ_SIZE)
                    if not data:
                        break
                    view = memoryview(data)
                    while view:
                        view = view[pipe.write(view):]
            except (OSError, ValueError):
                pass  # the server stopped reading: the loop's writes fill up and stop
            finally:
                end.close()
                try:
                    pipe.close()  # the server's end of file
                except OSError:
                    pass

        @staticmethod
        def _from_pipe(pipe, end):
            try:
                while True:
                    data = os.read(pipe.fileno(), _READ_SIZE)
                    if not data:
                        break
                    end.sendall(data)
            except (OSError, ValueError):
                pass
            finally:
                end.close()  # the loop's end of file

        def close_input(self):
            if not self.input_closed:
                self.input_closed = True
                self.input.close()

        def close(self):
            self.close_input()
            for end in (self.output, self.errors):
                end.close()
            for thread in self._threads:  # the server is gone: its pipes are closed
                thread.join(_LINGER)
else:
    class _ServerPipes(object):

        def __init__(self, proc):
            self._proc = proc
            self.input = proc.stdin.fileno()
            os.set_blocking(self.input, False)
            self.output, self.errors = proc.stdout.fileno(), proc.stderr.fileno()
            self.input_closed = False

        def close_input(self):
            self._proc.stdin.close()
            self.input_closed = True

        def close(self):
            for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                stream.close()


# The stdio transport: the server process, and one selectors loop over its pipes.

def _check_stdio(command, env, inherit_env, cwd):
    """UsageError for a stdio argument of the wrong kind, before anything starts."""
    if isinstance(command, (str, bytes)):
        raise UsageError("the server command is a list of arguments, not a string "
                         "(split it, e.g. with shlex.split)")
    if not isinstance(command, (list, tuple)):
        raise UsageError("the server command is a list of arguments, not %s" % _arg(command))
    if not command or not command[0]:
        raise UsageError("the server command is empty")
    for word in command:  # what exec takes: text, bytes, paths, without NUL
        if not _os_string(word):
            raise UsageError("the server command holds %s, which is not an argument "
                             "(strings without NUL only)" % _arg(word))
    if env is not None and not hasattr(env, "items"):
        raise UsageError("env is a mapping of names to values, not %s" % _arg(env))
    for key, value in (env or {}).items():
        if (not isinstance(key, (str, bytes)) or not _os_string(key) or not key
                or b"=" in os.fsencode(key) or not _os_string(value)):
            raise UsageError("env holds names without '=' and values, strings without NUL, "
                             "not %s=%s" % (_arg(key), _arg(value)))
    if cwd is not None and not _os_string(cwd):
        raise UsageError("cwd is a path, not %s" % _arg(cwd))
    if not isinstance(inherit_env, bool):
        raise UsageError("inherit_env is True or False, not %s" % _arg(inherit_env))


def _os_string(value):
    """Whether ``value`` can be an argument, path or environment string: text, bytes
    or a path, that the file system encoding takes, without NUL."""
    try:
        return b"\0" not in os.fsencode(value)
    except (TypeError, UnicodeError):  # not a string; a lone surrogate
        return False


def _child_env(env=None, inherit_env=False, base=None):
    """The server's environment: an allowlist of ours (or all of it) plus ``env``."""
    base = os.environ if base is None else base
    if inherit_env:
        result = dict(base)
    else:
        result = dict((k, v) for k, v in base.items()
                      if (k.upper() if _WINDOWS else k) in ENV_ALLOWLIST
                      or k.startswith("LC_"))
    result.update(env or {})
    return result


# A server and what it starts, as one group: _spawn starts it so, _end_group
# ends the group (``hard``: at once; else asked to, where the system can ask),
# _group_alive says whether any of it runs. POSIX: a session and process group
# of its own, signalled. Windows: a new process group inside a Job object that
# kills what is in it when it is closed, whether by the client or by the
# client's end: no signal reaches a console-less server there.
if _WINDOWS:
    def _spawn(argv, **options):
        """subprocess.Popen in a process group and a Job object of its own
        (``proc.job``): started suspended, and let run once it is in the job,
        so nothing it starts can be outside it.

        The command is found as a Windows user's shell finds it, on the
        server's PATH with PATHEXT (``npx`` is npx.cmd); a batch file runs
        under cmd.exe with each argument reaching it unchanged (_batch_line).
        """
        import subprocess  # lazy: stdio servers and --sampling-command
        found = _windows_which(os.fsdecode(argv[0]), options.get("env"), options.get("cwd"))
        if found is None:
            raise FileNotFoundError(errno.ENOENT, "not found", argv[0])
        if os.path.splitext(found)[1].lower() in (".cmd", ".bat"):
            comspec = os.environ.get("COMSPEC") or os.path.join(
                os.environ.get("SystemRoot", "C:\\Windows"), "System32", "cmd.exe")
            options["executable"] = comspec
            argv = _batch_line(found, [os.fsdecode(a) for a in argv[1:]])
        else:
            argv = [found] + list(argv[1:])
        # In two steps, as on POSIX: a signal after the process was made and
        # before Popen returned must not leave it (suspended) behind.
        proc = subprocess.Popen.__new__(subprocess.Popen)
        try:
            proc.__init__(argv, creationflags=subprocess.CREATE_NEW_PROCESS_GROUP
                          | 0x4, **options)  # CREATE_SUSPENDED
            proc.job = _JobObject(proc)
            proc.job.resume(proc)
        except BaseException:
            if getattr(proc, "_handle", None) is not None:
                proc.kill()
                proc.wait()
            raise
        return proc

    def _end_group(proc, hard=True):
        """Soft: a console break to the group, where this process has a console
        to send it on (a detached one, or Wine, has none: then at once as
        hard); hard, or after it: the job terminated."""
        if not hard and proc.poll() is None:
            import ctypes  # lazy: Windows only. Not os.kill: 3.8's fails as SystemError.
            if ctypes.WinDLL("kernel32").GenerateConsoleCtrlEvent(1, proc.pid):  # CTRL_BREAK
                return
        job = getattr(proc, "job", None)
        if job is not None:
            job.terminate()
        elif proc.poll() is None:
            proc.kill()

    def _group_alive(proc):
        job = getattr(proc, "job", None)
        return job.active() if job is not None else proc.poll() is None
else:
    def _spawn(argv, **options):
        """subprocess.Popen in a session (and process group) of its own.

        Made in two steps: a signal while Popen waits for the exec (the child
        forked, the object not yet returned) must not leave the child running.
        """
        import subprocess  # lazy: stdio servers and --sampling-command
        proc = subprocess.Popen.__new__(subprocess.Popen)
        try:
            proc.__init__(argv, close_fds=True, start_new_session=True, **options)
        except OSError:
            raise
        except BaseException:
            if getattr(proc, "pid", None) is not None:
                os.kill(proc.pid, signal.SIGKILL)  # it may not lead its group yet
                _killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            raise
        return proc

    def _end_group(proc, hard=True):
        _killpg(proc.pid, signal.SIGKILL if hard else signal.SIGTERM)

    def _group_alive(proc):
        return _pgid_alive(proc.pid)  # start_new_session: the pid is the group's id


def _windows_which(command, env, cwd=None):
    """The file Windows runs for ``command``, as an absolute path: a path
    relative to ``cwd`` (the server's working directory, as POSIX's exec
    takes it; else ours), a bare name found as cmd.exe finds it (there,
    unless NoDefaultCurrentDirectoryInExePath is set, then on the PATH of
    ``env``, else ours), each with PATHEXT's extensions (``npx`` is
    npx.cmd). Not shutil.which: it imports the compressors, a tenth of a
    cold start there."""
    environ = os.environ if env is None else env
    here = _cwd() if cwd is None else os.path.join(_cwd(), os.fsdecode(cwd))
    extensions = [e for e in (os.environ.get("PATHEXT") or ".COM;.EXE;.BAT;.CMD").lower()
                  .split(os.pathsep) if e]
    if os.path.dirname(command):
        directories = [here]
    else:
        path = next((v for k, v in environ.items() if k.upper() == "PATH"), None) or ""
        directories = ([] if "NoDefaultCurrentDirectoryInExePath" in os.environ else
                       [here]) + [d.strip('"') for d in path.split(os.pathsep) if d.strip()]
    given = os.path.splitext(command)[1].lower() in extensions
    for directory in directories:
        base = os.path.join(directory, command)
        for name in ([base] if given else []) + [base + e for e in extensions]:
            if os.path.isfile(name):
                return os.path.abspath(name)
    return None


def _batch_line(script, args):
    """The command line that has cmd.exe run the batch file ``script`` with
    ``args``, each reaching it unchanged: ``/d /s /c "…"`` (no AutoRun; the
    outer quotes stripped), the script and every argument quoted unless it
    is made only of characters cmd.exe leaves alone, a ``"`` doubled (so
    cmd.exe's quote state is the same at each argument's end, and the ``& |
    < > ^`` in it stay quoted), and ``%`` written ``%%cd:~,%`` (an empty
    substring of %cd% after it, so no %VAR% in it is ever expanded). CR and
    LF would end the command: an argument holding one is refused (UsageError)."""
    def quoted(arg):
        if "\r" in arg or "\n" in arg:
            raise UsageError("%s is a batch file, which cannot be given an argument with a "
                             "line break (%r)" % (script, arg))
        plain = arg and not arg.endswith("\\") and all(
            ord(c) < 128 and c.isalnum() or c in "#$*+-./:?@\\_" for c in arg)
        out, backslashes = [], 0
        for c in arg:
            if c == "\\":
                backslashes += 1
            else:
                if c == '"':
                    out.append("\\" * backslashes + '"')  # a " after n backslashes: 2n
                elif c == "%":
                    out.append("%%cd:~,")
                backslashes = 0
            out.append(c)
        text = "".join(out)
        return text if plain else '"%s%s"' % (text, "\\" * backslashes)
    line = 'cmd.exe /d /e:ON /v:OFF /s /c "%s"' % " ".join(
        ['"%s"' % script.replace("%", "%%cd:~,%")] + [quoted(arg) for arg in args])
    if len(line) > _CMD_LINE_MAX:
        raise UsageError("%s is a batch file, and cmd.exe takes a command line of at most "
                         "%d characters; this one has %d" % (script, _CMD_LINE_MAX, len(line)))
    return line


_CMD_LINE_MAX = 8191  # cmd.exe's longest command line


# A command line as words and words as one line, the way this system's
# programs take them: POSIX sh's quoting (shlex), or on Windows the rules a
# program splits its own command line by (CommandLineToArgvW's), where the
# backslashes of a path are its own and not escapes. _which finds a command
# on PATH as _spawn would run it.
def _windows_split(line):
    """The words of ``line`` as a Windows program takes them: blanks (and
    line ends) part words outside quotes, 2n backslashes before a quote are n and the quote
    opens or closes, 2n+1 are n and a quote, ``""`` in quotes is a quote,
    other backslashes are themselves. ValueError for an unclosed quote."""
    words, word, quoted, begun, i = [], [], False, False, 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            run = len(line[i:]) - len(line[i:].lstrip("\\"))
            i += run
            if line[i:i + 1] == '"':
                word.append("\\" * (run // 2) + ('"' if run % 2 else ""))
                i += run % 2
            else:
                word.append("\\" * run)
        elif c == '"':
            if quoted and line[i + 1:i + 2] == '"':
                word.append('"')
                i += 1
            else:
                quoted = not quoted
            i += 1
        elif c in " \t\r\n" and not quoted:
            if begun:
                words.append("".join(word))
                word = []
            begun = False
            i += 1
            continue
        else:
            word.append(c)
            i += 1
        begun = True
    if quoted:
        raise ValueError("No closing quotation")
    if begun:
        words.append("".join(word))
    return words


def _windows_word(word):
    """``word`` as _windows_split takes it back: as it is if plain, else in
    quotes, a quote and the backslashes before it escaped, as are the ones
    before the closing quote."""
    if re.match(r"[\w@+=:,./\\-]+\Z", word):
        return word
    return '"%s"' % re.sub(r'(\\*)("|\Z)', lambda m: m.group(1) * 2 + (
        "\\" + m.group(2) if m.group(2) else ""), word)


if _WINDOWS:
    _shell_split, _shell_word = _windows_split, _windows_word
    _PYTHON_WORD = "python"  # what a Windows install puts on PATH

    def _which(command, env=None, cwd=None):
        return _windows_which(command, env, cwd)

    def _not_run(name, path):
        return ("Windows runs programs and batch files (PATHEXT), and this is neither: "
                "name what runs it first (e.g. %s %s)" % (_PYTHON_WORD, _shell_word(name)))
else:
    _PYTHON_WORD = "python3"

    def _shell_split(line):
        import shlex  # lazy: only where a line is split
        return shlex.split(line)

    def _shell_word(word):
        import shlex  # lazy: only where a command is shown
        return shlex.quote(word)

    def _which(command, env=None, cwd=None):
        import shutil  # lazy: only where a command is looked for
        return shutil.which(command, path=(os.environ if env is None else env).get(
            "PATH", os.defpath))

    def _not_run(name, path):
        """Why exec could not run the file ``path``: what it names to run it."""
        try:
            with open(path, "rb") as f:
                first = f.readline(256)
        except (IOError, OSError):
            first = b""
        needed = (first[2:].split() or [b"?"])[0].decode("utf-8", "replace")
        if not first.startswith(b"#!"):
            return "a program it needs to start (its loader) was not found"
        if first.rstrip(b"\n").endswith(b"\r"):
            return "its #! line ends in a carriage return (DOS line endings)"
        return "its interpreter %s was not found" % needed


def _killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _JobObject(object):
    """A Windows Job object holding a server and what it starts (ctypes,
    kernel32): closing its handle, or the client's end, kills them all."""

    _KILL_ON_CLOSE = 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE

    def __init__(self, proc):
        import ctypes  # lazy: Windows only
        from ctypes import wintypes
        self._ctypes = ctypes
        kernel = self._kernel = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel.CreateJobObjectW.restype = wintypes.HANDLE
        kernel.CreateJobObjectW.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
        for name in ("SetInformationJobObject", "QueryInformationJobObject"):
            getattr(kernel, name).argtypes = (wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p,
                                              wintypes.DWORD) + (
                (ctypes.c_void_p,) if name.startswith("Query") else ())
        kernel.AssignProcessToJobObject.argtypes = (wintypes.HANDLE, wintypes.HANDLE)
        kernel.TerminateJobObject.argtypes = (wintypes.HANDLE, wintypes.UINT)
        kernel.CloseHandle.argtypes = (wintypes.HANDLE,)
        self.handle = kernel.CreateJobObjectW(None, None)
        if not self.handle:
            raise ctypes.WinError(ctypes.get_last_error())
        size = ctypes.c_size_t

        class Limits(ctypes.Structure):  # JOBOBJECT_EXTENDED_LIMIT_INFORMATION
            _fields_ = [("user_time", ctypes.c_int64 * 2), ("flags", wintypes.DWORD),
                        ("working_set", size * 2), ("processes", wintypes.DWORD),
                        ("affinity", size), ("classes", wintypes.DWORD * 2),
                        ("io", ctypes.c_uint64 * 6), ("memory", size * 4)]
        limits = Limits()
        limits.flags = self._KILL_ON_CLOSE
        if not (kernel.SetInformationJobObject(self.handle, 9, ctypes.byref(limits),
                                               ctypes.sizeof(limits))
                and kernel.AssignProcessToJobObject(self.handle, int(proc._handle))):
            error = ctypes.WinError(ctypes.get_last_error())
            self.close()
            raise error

    def resume(self, proc):
        """Let ``proc``, started suspended, run (ntdll's NtResumeProcess: the
        handle Popen keeps is the process's, not its thread's)."""
        ctypes = self._ctypes
        ntdll = ctypes.WinDLL("ntdll")
        ntdll.NtResumeProcess.argtypes = (ctypes.c_void_p,)
        status = ntdll.NtResumeProcess(int(proc._handle))
        if status:
            raise OSError(errno.EPERM, "cannot resume the server (NTSTATUS 0x%x)"
                          % (status & 0xFFFFFFFF))

    def terminate(self):
        if self.handle:
            self._kernel.TerminateJobObject(self.handle, 1)

    def active(self):
        """Whether any process of the job still runs (its basic accounting)."""
        if not self.handle:
            return False
        ctypes = self._ctypes
        info = (ctypes.c_uint32 * 12)()  # JOBOBJECT_BASIC_ACCOUNTING_INFORMATION
        if not self._kernel.QueryInformationJobObject(self.handle, 1, ctypes.byref(info),
                                                      ctypes.sizeof(info), None):
            return False
        return info[10] > 0  # ActiveProcesses, after four 64-bit times and two counts

    def close(self):
        handle, self.handle = self.handle, None
        if handle:
            self._kernel.CloseHandle(handle)


def _pgid_alive(pgid):
    """True while any process of the group is still running (zombies do not count).

    Orphaned grandchildren become zombies of PID 1; where PID 1 does not reap
    (many containers), signal 0 still finds them, so on Linux we look in /proc.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            with open("/proc/%s/stat" % pid, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _not_found(name, cwd, env):
    """CommandNotFound for a command exec could not run, naming what is missing."""
    path = name if os.path.dirname(name) else _which(name, env, cwd)
    cwd = os.fsdecode(cwd) if cwd is not None else ""
    if path is None or not os.path.isfile(os.path.join(cwd, path)):
        return CommandNotFound("server command not found: %s (is it installed and on PATH?)"
                               % name)
    return CommandNotFound("server command %s cannot run: %s" % (
        name, _not_run(name, os.path.join(cwd, path))))


def _exit_status(returncode):
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "signal %d" % -returncode
        return "was killed by %s" % name
    return "exited with status %d" % returncode


class _StdioTransport(_Transport):
    """A server process and one selectors loop over its stdin, stdout and stderr.

    ``send`` queues a frame and writes what the pipe takes without blocking;
    ``receive`` runs the loop until messages arrive or the deadline passes,
    writing the rest whenever stdin is writable, so neither side can deadlock
    the other. stderr is drained into a bounded ring buffer all the while.
    """

    @property
    def env(self):
        """What the server gets, made when first needed: a search that finds its
        tool lists kept starts no server."""
        if self._env is None:
            self._env = _child_env(*self._env_given)
        return self._env

    def __init__(self, command, env=None, inherit_env=False, cwd=None,
                 max_bytes=DEFAULT_MAX_BYTES, on_stderr=None, shutdown_grace=SHUTDOWN_GRACE):
        _check_stdio(command, env, inherit_env, cwd)
        self.command = list(command)
        self._env, self._env_given = None, (None if env is None else dict(env), inherit_env)
        self.cwd = cwd
        self.grace = shutdown_grace
        self._on_stderr = on_stderr
        self._framer = _Framer(max_bytes)
        self._proc = None
        self._sel = None
        self._outq = collections.deque()
        self._out_pos = 0
        self.held = False  # see send
        self._writing = False
        self._unsure = False  # see _flush
        self._inbox = collections.deque()  # received, not yet dispatched
        self._lost_reason = None
        self._failure = None
        self._stderr = bytearray()
        self._closed = False  # close() has begun
        self._reaped = False  # close() has ended: the server is reaped, the pipes released
        self.received = 0  # bytes read from the server's stdout
        self.unsent_answers = 0  # bytes of answers to the server not yet written
        self._next_check = 0.0  # when to look at the server process next
        self._wake = None  # a _WakePipe: see waker
        self._woken = False
        self._aborted = False  # abort() came: nothing more is started
        self._pipes = None  # the server's stdin, stdout and stderr, as the loop has them

    # -- start ----------------------------------------------------------------

    def start(self):
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise UsageError("working directory does not exist: %s" % self.cwd)
        import selectors  # lazy: stdio only
        import subprocess
        name = os.fsdecode(self.command[0])  # for messages: it may be bytes or a path
        if self._aborted:  # from another thread, before this one started the server
            raise ConnectionLost("interrupted before the server started")
        try:
            self._proc = _spawn(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, bufsize=0, env=self.env, cwd=self.cwd)
            if self._aborted:  # while it was being started: it ends at once
                _end_group(self._proc)
        except FileNotFoundError:
            raise _not_found(name, self.cwd, self.env)
        except PermissionError:
            raise LaunchError("server command is not executable: %s" % name)
        except OSError as e:
            raise LaunchError("cannot start server command %s: %s" % (name, e.strerror or e))
        self._pipes = _ServerPipes(self._proc)
        self._stdin_fd = self._pipes.input
        self._sel = (selectors.PollSelector() if hasattr(selectors, "PollSelector")
                     else selectors.SelectSelector())
        self._sel_write = selectors.EVENT_WRITE
        self._sel.register(self._pipes.output, selectors.EVENT_READ, "out")
        self._sel.register(self._pipes.errors, selectors.EVENT_READ, "err")

    @property
    def pid(self):
        return self._proc.pid if self._proc else None

    @property
    def max_bytes(self):
        return self._framer.max_bytes

    @property
    def last_words(self):
        return bytes(self._stderr[-STDERR_TAIL_BYTES:]).decode("utf-8", "replace")

    def backlogged(self):
        return self.unsent_answers > self.max_bytes

    def describe(self):
        return "stdio"

    def env_names(self):
        return sorted(self.env)

    # -- the loop -------------------------------------------------------------

    def send(self, message, frame, answer=False):
        """Write one frame, or as much as the pipe takes now and queue the rest.

        ``answer``: the frame answers the server, which counts it in
        ``unsent_answers`` until written. While ``held`` is set, frames
        only queue, to go out together at the next ``flush`` or ``receive``.
        """
        self._check_open()
        self._outq.append((frame, answer, message))  # message: see cancel
        if answer:
            self.unsent_answers += len(frame)
        if not self.held:
            self._flush()

    def cancel(self, ident):
        """A request still queued whole is taken back: the server never sees
        it, so there is nothing to cancel (basic/utilities/cancellation is for
        requests it received). After Ctrl-C, or a time limit, what a server
        that was not reading had not yet been sent is not sent to it at all."""
        i = self._queued_whole(ident)
        if i is None:
            return False
        del self._outq[i]
        return True

    def held_back(self, ident):
        if self._queued_whole(ident) is not None:
            return "never sent: the server was not reading its input"
        return None

    def _queued_whole(self, ident):
        """Where request ``ident`` waits in the queue, not a byte of it written; or None."""
        if self._unsure:  # see _flush: what went out is not known
            return None
        for i, (_, answer, message) in enumerate(self._outq):
            if (not answer and type(message) is dict and message.get("id") == ident
                    and "method" in message):  # a request of ours, not an answer
                return None if i == 0 and self._out_pos else i
        return None

    def receive(self, deadline):
        """The queue of messages from the server, waiting until ``deadline`` (a
        _Deadline) at most for one to arrive; empty when the deadline passes.

        The caller pops what it handles; what it leaves (a callback failed)
        stays for the next call. Raises ConnectionLost (or ProtocolError)
        once everything the server sent has been handed out.
        """
        if self.held:  # nothing waits for an answer to a frame still queued
            self.flush()
        looked = False  # a deadline passed, or a wake, still looks once
        while not self._inbox:
            try:
                self._check_open()
            except MCPError:
                if self._inbox:  # what the server said before it went comes first
                    break
                raise
            timeout = deadline.left()
            if looked and (timeout <= 0 or self._woken):
                break
            self._select(0.0 if self._woken else max(0.0, timeout))
            looked = True
        self._woken = False
        return self._inbox

    def _check_open(self):
        if self._closed:
            raise ConnectionLost("the connection to the server is closed")
        if self._lost_reason is not None and self._failure is None:
            self._settle()
        if self._failure is not None:
            raise self._failure

    def _select(self, timeout):
        # select() returns [] on EINTR (PEP 475) too; callers re-check their deadline.
        # Capped, so a quiet wait looks at the server process every second.
        events = self._sel.select(min(timeout, _QUIET_CHECK))
        if not events or time.monotonic() >= self._next_check:
            self._check_leader()
        for key, _ in events:
            if key.data == "in":
                self._flush()
            elif key.data == "out":
                self._read_stdout(key.fileobj)
            elif key.data == "wake":
                self._wake.drain()
                self._woken = True
            else:
                self._read_stderr(key.fileobj)

    def waker(self):
        """A _WakePipe in the loop."""
        if self._wake is None:
            self._wake = _WakePipe()
            self._sel.register(self._wake.fds[0], sys.modules["selectors"].EVENT_READ, "wake")
        return self._wake.wake

    def _check_leader(self):
        # A server that failed while something it started still holds its stdout
        # would look alive until every timeout ran out. A clean exit (status 0)
        # may be a launcher that handed the pipes on, so only a failure ends it.
        self._next_check = time.monotonic() + _QUIET_CHECK
        if self._lost_reason is None and self._proc.poll() not in (None, 0):
            self._lost_reason = "server exited"

    def flush(self):
        """Write what ``held`` kept queued, as far as the pipe takes it now.

        A lost connection is reported by the next ``receive``, as for ``send``.
        """
        self.held = False
        if not self._closed:
            self._flush()

    @_Unsplit.marked  # Ctrl-C lands once what went out is noted
    def _flush(self):
        try:
            if self._unsure:  # an interrupt split a write from its note (see _Unsplit):
                # what went out is unknown, so nothing more goes (a frame twice, or one cut short)
                self._stop_writing("interrupted while writing to the server")
                return
            self._unsure = True
            while self._outq:
                frame, answer, _ = self._outq[0]
                try:
                    n = self._write_front(frame)
                except BlockingIOError:
                    break
                except (BrokenPipeError, ConnectionResetError):
                    self._stop_writing("server stopped reading its input")
                    break
                if n == len(frame) and not self._out_pos:  # the usual case: one frame, whole
                    self._outq.popleft()
                    if answer:
                        self.unsent_answers -= n
                else:
                    self._written(n)
            self._set_writing(bool(self._outq))
            self._unsure = False
        finally:
            if _Unsplit.later:
                _Unsplit.release()

    def _write_front(self, frame):
        """One system call for what is queued, ``frame`` first: the bytes taken."""
        if self._out_pos:
            return _write_end(self._stdin_fd, memoryview(frame)[self._out_pos:])
        if len(self._outq) == 1:
            return _write_end(self._stdin_fd, frame)
        return _writev_end(self._stdin_fd, [frame for frame, _, _ in
                                            itertools.islice(self._outq, _IOV_MAX)])

    def _stop_writing(self, reason):
        """Nothing more goes to the server: what is queued is dropped, its input ends."""
        self._outq.clear()
        self._out_pos = self.unsent_answers = 0
        self._lost_reason = self._lost_reason or reason
        self._end_input()

    def _end_input(self):
        """Close the server's input (its EOF), out of the loop first."""
        if not self._pipes.input_closed:
            try:
                self._sel.unregister(self._stdin_fd)
            except KeyError:  # not in the loop; or an interrupt split a change (see _flush)
                pass
            self._writing = self._unsure = False
            self._pipes.close_input()

    def _written(self, n):
        """Drop the ``n`` bytes just written from the front of the queue."""
        while n:
            frame, answer, _ = self._outq[0]
            left = len(frame) - self._out_pos
            if n < left:
                self._out_pos += n
                return
            n -= left
            self._outq.popleft()
            self._out_pos = 0
            if answer:
                self.unsent_answers -= len(frame)

    def _set_writing(self, want):
        if want != self._writing and not self._pipes.input_closed:
            if want:
                self._sel.register(self._stdin_fd, self._sel_write, "in")
            else:
                self._sel.unregister(self._stdin_fd)
            self._writing = want

    def _read_stdout(self, fd):
        data = _read_end(fd, _READ_SIZE)
        self.received += len(data)
        if not data:
            self._sel.unregister(fd)
            self._lost_reason = self._lost_reason or "server closed its output"
            self._inbox.extend(self._framer.finish())
            return
        try:
            self._inbox.extend(self._framer.feed(data))
        except ProtocolError as e:
            self._inbox.extend(e.messages)  # handed out before the failure is raised
            e.stderr_tail = self.last_words
            self._failure = e

    def _read_stderr(self, fd):
        data = _read_end(fd, _READ_SIZE)
        if not data:
            self._sel.unregister(fd)
            return
        self._stderr += data
        if len(self._stderr) > 2 * STDERR_TAIL_BYTES:
            del self._stderr[:-STDERR_TAIL_BYTES]
        if self._on_stderr is not None:
            self._on_stderr(data)

    def _settle(self):
        """The connection ended: read what the server still says, then record why."""
        deadline = _Deadline(_LINGER)
        while self._sel.get_map() and self._failure is None and not deadline.passed():
            self._select(deadline.left())
        if self._failure is not None:  # a protocol error read meanwhile says more
            return
        reason = self._lost_reason
        try:
            returncode = self._proc.wait(deadline.left())
            reason = "server " + _exit_status(returncode)
        except sys.modules["subprocess"].TimeoutExpired:  # loaded by start()
            returncode = None
        self._failure = ConnectionLost(reason, stderr_tail=self.last_words,
                                       returncode=returncode)

    # -- shutdown -------------------------------------------------------------

    def close(self, grace=None):
        """Stop the server in the spec's order and reap it (basic/lifecycle, "Shutdown").

        Close stdin, wait; SIGTERM the process group, wait; SIGKILL the group.
        A server that exits on EOF gets no signal, but what it left running in
        its group does. ``grace``: each wait, at most the transport's own.
        Idempotent; interrupted, it kills at once and re-raises, and a close
        that was interrupted before it could do so is finished by the next.
        """
        if self._proc is None or self._reaped:
            return
        if self._closed:
            return self._kill()
        self._closed = True
        grace = self.grace if grace is None else min(grace, self.grace)
        try:
            deadline = _Deadline(min(grace, _LINGER))
            while (self._outq and not self._unsure and self._failure is None
                   and not deadline.passed()):
                self._select(deadline.left())
            self._end_input()
            if not self._gone(grace, leader_only=True) or _group_alive(self._proc):
                _end_group(self._proc, hard=False)
                if not self._gone(grace):
                    _end_group(self._proc)
                    self._gone(grace)
            # What it wrote before it went may still be on its way (in the
            # pipe; on Windows, through the thread that copies it): read to
            # the end, briefly, so its last words are kept and relayed.
            deadline = _Deadline(_LINGER)
            while not deadline.passed() and any(
                    key.data in ("out", "err") for key in self._sel.get_map().values()):
                self._drain(deadline.left())
        except BaseException:
            self._kill()
            raise
        self._kill()

    def abort(self):
        """SIGKILL the server's process group now, if it may still run; safe to
        call from a signal handler (``close`` then reaps it)."""
        self._aborted = True
        if self._proc is not None and not self._reaped:
            _end_group(self._proc)

    def _kill(self):
        """SIGKILL what is left of the group, reap the server, release the pipes."""
        _end_group(self._proc)
        self._proc.wait()
        self._reaped = True
        if self._sel is not None:  # None: interrupted while starting
            self._sel.close()
        if self._pipes is not None:
            self._pipes.close()
        else:
            for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                stream.close()
        if getattr(self._proc, "job", None) is not None:
            self._proc.job.close()
        if self._wake is not None:
            self._wake.close()

    def _gone(self, grace, leader_only=False):
        """Wait up to ``grace`` seconds for the server (and its group) to end.

        Keeps draining its output meanwhile, so a server that logs while it
        exits is not blocked on a full pipe.
        """
        deadline = _Deadline(grace)
        step = 0.001
        # Where the kernel can say when the server exits (Linux 5.3+, Python
        # 3.9+), the wait ends then, not at the next of the growing naps.
        exited = self._exit_fd() if leader_only else None
        try:
            while True:
                if self._proc.poll() is not None and (leader_only or not _group_alive(
                        self._proc)):
                    return True
                remaining = deadline.left()
                if remaining <= 0:
                    return False
                if self._sel.get_map():
                    self._drain(remaining if exited is not None else min(step, remaining))
                else:
                    time.sleep(min(step, remaining))
                step = min(step * 2, 0.05)
        finally:
            if exited is not None:
                if exited in self._sel.get_map():
                    self._sel.unregister(exited)
                os.close(exited)

    def _exit_fd(self):
        """A descriptor that becomes readable when the server exits, in the
        selector; None where there is none to be had."""
        try:
            fd = os.pidfd_open(self._proc.pid)
        except (AttributeError, OSError):
            return None
        self._sel.register(fd, sys.modules["selectors"].EVENT_READ, "exit")
        return fd

    def _drain(self, timeout):
        """Read and drop the server's stdout, keep its stderr; nobody waits any more."""
        for key, _ in self._sel.select(timeout):
            if key.data == "err":
                self._read_stderr(key.fileobj)
            elif key.data == "exit":  # it exited: nothing to read
                self._sel.unregister(key.fileobj)
            elif not _read_end(key.fileobj, _READ_SIZE):  # stdout, or a wake
                self._sel.unregister(key.fileobj)


# ---------------------------------------------------------------------------
# Transports: Streamable HTTP, and the 2024-11-05 HTTP+SSE transport
# ---------------------------------------------------------------------------

# The HTTP transport (basic/transports, "Streamable HTTP"): http.client on
# worker threads, each blocking on one connection; the Client's thread only
# waits on the inbox, so its deadlines hold whatever a socket does, and
# ``close`` ends every socket and thread.

# Requests on connections of their own at once (batch); more wait for one.
# Notifications and answers to the server go one by one on another.
_HTTP_CONNECTIONS = 4
# Messages a stream's reader hands over before it waits for the Client to
# take them: a server that floods is read no faster than it is handled.
_HTTP_BACKLOG = 256
# Redirects one request may follow; a longer chain is taken for a loop.
_MAX_REDIRECTS = 5
# How long a stream is resumed after when the server named no retry time, in
# ms, and the least wait taken whatever it names, so a stream that keeps
# closing cannot spin (it ends at the request's timeout).
_RETRY_MS = 1000
_LEAST_RETRY_MS = 50
# Tries of the standing GET stream that end with nothing received before it
# is given up (a 405 ends it at once: the server offers none).
_GET_TRIES = 3
# How long requests wait for the standing GET stream to open (seconds; a
# quarter of the timeout at most): a server may send what a request needs (a
# question) on that stream alone.
_GET_OPENING = 2.0
# Longest single wait on a lock: past threading.TIMEOUT_MAX it raises.
_MAX_WAIT = 3600.0
# A connect polls for close() and cancellation this often (seconds).
_CONNECT_POLL = 0.05
# How much of an error body is read to find a JSON-RPC error in it.
_ERROR_BODY = 64 * 1024
# HTTP header field names (RFC 9110 "token") and values we send (visible
# ASCII, spaces and tabs inside, none at the ends).
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z"
_PLAIN_VALUE = r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?\Z"
_METHOD_NAME_KEY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                    # extensions/tasks, "Streamable HTTP: Routing Headers"
                    "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
# Headers the transport writes itself: HTTP's framing and the protocol's own.
_OWN_HEADERS = frozenset((
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te",
    "trailer", "upgrade", "expect", "content-type", "accept", "last-event-id",
    "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"))


def _check_http(url, headers):
    """The URL's parts (scheme, host, port, target) and the headers as a list of
    pairs; UsageError for what cannot go on the wire, before anything is sent."""
    from urllib.parse import urlsplit  # lazy: HTTP only
    if not isinstance(url, str):
        raise UsageError("the server URL is a string, not %s" % _arg(url))
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise UsageError("bad server URL %s: %s" % (_shown_url(url), e))
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UsageError("the server URL must start with http:// or https:// and name a "
                         "host, not %s" % _shown_url(url))
    if re.search(r"[\x00-\x20\x7f]", url):
        raise UsageError("the server URL holds a space or control character: %s"
                         % _shown_url(url))
    scheme = parts.scheme.lower()
    target = _ascii_target(parts)
    if headers is not None and not hasattr(headers, "items"):
        raise UsageError("headers is a mapping of names to values, not %s" % _arg(headers))
    given = [str(name).lower() for name in headers or {}]
    if parts.username and "authorization" not in given:  # user:password@ as curl sends it
        from urllib.parse import unquote  # lazy: HTTP only
        headers = dict(headers or {}, Authorization=_basic(unquote(parts.username),
                                                           unquote(parts.password or "")))
    pairs, seen = [], set()
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not re.match(_TOKEN, name):
            raise UsageError("header name %s is not a token (letters, digits, -)" % _arg(name))
        if name.lower() in _OWN_HEADERS or name.lower().startswith("mcp-param-"):
            raise UsageError("header %s is set by mcp_invoke itself, from the URL and the "
                             "protocol; it cannot be given" % name)
        if name.lower() in seen:
            raise UsageError("header %s is given twice" % name)
        seen.add(name.lower())
        if not isinstance(value, str) or re.search(r"[\r\n\x00]", value):
            raise UsageError("the value of header %s is not a string without CR, LF or NUL"
                             % name)
        pairs.append((name, value))
    return (scheme, parts.hostname, port or (443 if scheme == "https" else 80), target), pairs


def _basic(user, password):
    """An Authorization value of the Basic scheme (RFC 7617), UTF-8."""
    import base64  # lazy: HTTP only
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode("utf-8")).decode(
        "ascii")


def _ascii_target(parts):
    """The request target of a split URL, with what is not ASCII percent-encoded
    (UTF-8), as browsers and curl send it; what is ASCII stays as given."""
    from urllib.parse import quote  # lazy: HTTP only
    target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    return quote(target, safe="".join(chr(c) for c in range(0x21, 0x7f)))


def _shown_url(url):
    """A URL as messages show it: no user, password or query (they may hold secrets)."""
    from urllib.parse import urlsplit  # lazy: HTTP only
    try:
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        port = ":%d" % parts.port if parts.port else ""
    except ValueError:
        return "(a malformed URL)"
    if ":" in host:
        host = "[%s]" % host
    shown = "%s://%s%s%s" % (parts.scheme, host, port, parts.path)
    return _flat(_cut(shown, _SHOW_CHARS * 2) + ("?..." if parts.query else ""))


def _last_event_id(last_id):
    """The Last-Event-ID header resuming a stream: the id as UTF-8, as the SSE
    standard has EventSource send it (WHATWG HTML, "Server-sent events"); an
    id holds no NUL, CR or LF, so any one a server gave can go back."""
    return ("Last-Event-ID", last_id.encode("utf-8"))


def _header_value(text):
    """A value mirrored into a header: as is when plain ASCII, else in the Base64
    sentinel form (2026-07-28 transports/streamable-http, "Value Encoding")."""
    import base64  # lazy: modern HTTP only
    if re.match(_PLAIN_VALUE, text) and not (text.startswith("=?base64?")
                                             and text.endswith("?=")):
        return text
    return "=?base64?%s?=" % base64.b64encode(text.encode("utf-8")).decode("ascii")


# Keywords whose values are data, not schemas: an x-mcp-header under them is
# no annotation.
_DATA_KEYWORDS = ("const", "enum", "default", "examples", "x-mcp-header")
_HEADER_TYPES = ("string", "integer", "boolean")


def _param_headers(schema):
    """[(argument path, header name)] from a tool's x-mcp-header annotations;
    ValueError naming the first that breaks the rules (2026-07-28
    streamable-http, "Schema Extension")."""
    found, seen, budget = [], set(), [_MAX_PARTS]

    def walk(node, path, reachable, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_SCHEMA_DEPTH * 4:
            raise ValueError("its inputSchema is too large to check for x-mcp-header")
        if isinstance(node, list):
            for item in node:
                walk(item, path, False, depth + 1)
            return
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node:
            found.append(annotation(node, path, reachable))
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    walk(sub, path + (name,), reachable, depth + 1)
            elif key not in _DATA_KEYWORDS:
                walk(value, path, False, depth + 1)

    def annotation(node, path, reachable):
        header = node["x-mcp-header"]
        where = ".".join(path) or "the arguments"
        if not reachable or not path:
            raise ValueError("x-mcp-header on %s is not reached by properties alone"
                             % _cut(where, _SHOW_CHARS))
        if not isinstance(header, str) or not re.match(_TOKEN, header):
            raise ValueError("x-mcp-header %s of %s is not a header name"
                             % (_show(header), _cut(where, _SHOW_CHARS)))
        if header.lower() in seen:
            raise ValueError("x-mcp-header %s is given twice" % _show(header))
        seen.add(header.lower())
        if node.get("type") not in _HEADER_TYPES:
            raise ValueError("x-mcp-header %s is on %s, whose type is not string, integer "
                             "or boolean" % (_show(header), _cut(where, _SHOW_CHARS)))
        return path, header

    walk(schema, (), True, 0)
    return found


def _proxy_for(scheme, host, environ):
    """The proxy URL the environment names for ``scheme``://``host``, or None
    (curl's rules: lower-case names first, NO_PROXY suffixes and "*")."""
    for name in ("no_proxy", "NO_PROXY"):
        if name in environ:
            for entry in environ[name].replace(" ", "").split(","):
                entry = entry.lstrip(".").lower()
                if entry == "*" or entry and (host.lower() == entry
                                              or host.lower().endswith("." + entry)):
                    return None
            break
    for name in (scheme + "_proxy", scheme.upper() + "_PROXY", "all_proxy", "ALL_PROXY"):
        if environ.get(name):
            proxy = environ[name] if "://" in environ[name] else "http://" + environ[name]
            if not proxy.lower().startswith("http://"):
                raise UsageError("%s names a %s proxy; only http:// proxies are supported "
                                 "(unset it, or list the host in no_proxy)"
                                 % (name, proxy.split("://")[0]))
            return proxy
    return None


def _proxy_auth(proxy):
    """Proxy-Authorization (Basic) from the proxy URL's user and password, as
    curl sends it: on CONNECT, or on each request through a plain proxy."""
    from urllib.parse import unquote, urlsplit  # lazy: HTTP only
    parts = urlsplit(proxy or "")
    if not parts.username:
        return []
    return [("Proxy-Authorization", _basic(unquote(parts.username),
                                           unquote(parts.password or "")))]


def _http_connection(scheme, host, port, proxy, context, until, stop, blocking=False):
    """An http.client connection to ``scheme``://``host``:``port``, not yet open:
    the one way the transport and OAuth reach a server. Through ``proxy`` (an
    http:// URL, or None; https goes through it by CONNECT, with its
    credentials), TLS from ``context()``. Its connect (see _connect) waits until
    the _Deadline ``until``, or until ``stop()`` is true; the socket then blocks
    for what ``until`` has left (TLS, CONNECT), or with ``blocking`` for as long
    as it takes (the caller's timer ends it through _hang_up)."""
    import http.client  # lazy: HTTP only
    tunnel = None
    if proxy is not None:
        from urllib.parse import urlsplit  # lazy: HTTP only
        parts = urlsplit(proxy)
        if scheme == "https":
            tunnel = (host, port)  # CONNECT through it
        try:
            host, port = parts.hostname, parts.port or 80
        except ValueError:
            raise UsageError("the proxy URL in the environment is malformed: %s"
                             % _shown_url(proxy))
    if scheme == "https":
        conn = http.client.HTTPSConnection(host, port, context=context())
    else:
        conn = http.client.HTTPConnection(host, port)
    if tunnel is not None:
        conn.set_tunnel(tunnel[0], tunnel[1], headers=dict(_proxy_auth(proxy)))
    conn._create_connection = lambda address, *_: _connected(
        conn, _connect(address, until, stop, blocking))
    conn.mcp_sock = None
    return conn


def _end_request(conn, body):
    """conn.endheaders(body), a small body in the same write as the head:
    http.client writes them apart, which costs a second segment and, on a
    server that reads the head as it comes, a second wake-up per request."""
    if len(body) > _READ_SIZE:
        return conn.endheaders(body)
    parts = []
    conn.send = parts.append  # what endheaders would write, kept
    try:
        conn.endheaders(body)
    finally:
        del conn.send
    conn.send(b"".join(parts))


def _connect(address, until, stop, blocking=False):
    """A connected socket, waiting in short steps so that close() and
    cancellation end the wait; blocking (with the time ``until`` has left, or
    with none given ``blocking``) once connected."""
    import select  # lazy: HTTP only
    import socket
    host, port = address
    error = None
    for family, kind, proto, _, address in socket.getaddrinfo(host, port, 0,
                                                              socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.connect_ex(address)
            # Done when writable; on Windows a connect that failed is "exceptional".
            while not any(select.select([], [sock], [sock], _CONNECT_POLL)[1:]):
                if stop():
                    raise ConnectionAbortedError(0, "cancelled")
                if until.passed():
                    raise socket.timeout(0, "connection timed out")
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, os.strerror(code))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(None if blocking else max(until.left(), 0.001))
            return sock
        except OSError as e:
            sock.close()
            error = e
    raise error or OSError(0, "no address for %s" % host)


def _connected(conn, sock):
    """Keep a duplicate of ``conn``'s socket as soon as it is connected: shut
    down (_hang_up), it wakes whatever waits on the connection, the TLS
    handshake and a proxy's CONNECT included, and a response that took the
    socket over."""
    if conn.mcp_sock is not None:  # http.client reconnects a kept connection itself
        conn.mcp_sock.close()
    conn.mcp_sock = sock.dup()
    return sock


def _hang_up(conn):
    """Wake a thread waiting on ``conn``: shut its socket down, through the
    duplicate kept at connect."""
    import socket  # lazy: HTTP only
    sock = getattr(conn, "mcp_sock", None)
    if sock is not None:
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except (OSError, ValueError):
            pass


def _close_conn(conn):
    conn.close()
    if getattr(conn, "mcp_sock", None) is not None:
        conn.mcp_sock.close()
        conn.mcp_sock = None


class _Post(object):
    """One HTTP exchange: a message to POST (or a stream to resume) and its state."""

    __slots__ = ("message", "body", "ident", "method", "conn", "response", "cancelled",
                 "answered", "after", "session", "generation", "limit")

    def __init__(self, message, body, after=0):
        self.message = message
        self.body = body
        self.method = message.get("method")
        # The id of a request: its answer is what this exchange waits for.
        self.ident = message.get("id") if self.method is not None else None
        self.conn = None  # the connection carrying it now, and its response
        self.response = None
        self.cancelled = False
        self.answered = False
        self.after = after  # notifications and answers sent before it goes
        self.session = None  # the Mcp-Session-Id it went with
        self.generation = None  # the OAuth token it went with (_OAuth.generation)
        self.limit = None  # a request's time limit (monotonic), as the Client keeps it


class _Wire(object):
    """How an HTTP server carries its messages: Streamable HTTP answers each POST
    in its own response; the 2024-11-05 HTTP+SSE transport answers every POST
    on one GET stream, whose first event names where to POST. A transport
    starts with the first, and may learn the server speaks the second (see
    _HttpTransport._old_transport)."""

    __slots__ = ("name", "one_stream")

    def __init__(self, name, one_stream):
        self.name = name
        self.one_stream = one_stream  # every answer comes on the one GET stream


_STREAMABLE_HTTP = _Wire("streamable HTTP", False)
_HTTP_SSE = _Wire("HTTP+SSE (2024-11-05)", True)


class _HttpTransport(_Transport):
    """Streamable HTTP, in both eras (2025-11-25 basic/transports; 2026-07-28
    basic/transports/streamable-http).

    ``send`` queues a POST; worker threads (up to _HTTP_CONNECTIONS for
    requests, one for notifications and answers) carry them on keep-alive
    connections and put what comes back, a JSON body or the events of a
    stream, into the inbox, and a failed exchange as _Failed. Legacy era:
    the session id from initialize and the version header go on every
    request, a standing GET stream (opened before the first request that
    may draw questions) carries the server's own requests, a
    stream that ends early is resumed with Last-Event-ID, and the session is
    DELETEd on close. Modern era: the headers mirror the body, and closing a
    request's stream cancels it.
    """

    noise = "ignored an event from the server that is not JSON: %r"

    def __init__(self, url, headers=None, max_bytes=DEFAULT_MAX_BYTES, timeout=DEFAULT_TIMEOUT,
                 cacert=None, insecure=False, shutdown_grace=SHUTDOWN_GRACE, environ=None,
                 oauth=None, max_time=None):
        (self.scheme, self.host, self.port, self.target), self.headers = _check_http(url, headers)
        if cacert is not None and not _os_string(cacert):
            raise UsageError("cacert is a path, not %s" % _arg(cacert))
        import threading  # lazy: HTTP only
        self.url = url
        self.shown_url = _shown_url(url)
        self.max_bytes = max_bytes
        self.connect_timeout = timeout
        self.cacert = cacert
        self.insecure = bool(insecure)
        self.grace = shutdown_grace
        environ = os.environ if environ is None else environ
        self.proxy = _proxy_for(self.scheme, self.host, environ)
        # OAuth (2025-11-25 basic/authorization): its header goes on every request
        # to the server; workers take it under the lock the Client's thread holds
        # while it renews the token.
        self.auth = None if oauth is None else _OAuth(url, oauth, timeout, self._context,
                                                      environ, _time_cap(timeout, max_time))
        self._auth_lock = threading.Lock()
        self.session_id = None
        self.era = self.version = None
        # One lock, a condition for each kind of waiting, so that each change
        # wakes only whom it concerns: idle workers wait on _work (requests) and
        # _small_work (notifications and answers), the Client on _arrived (the
        # inbox, a wake, the end), everything else on _cond.
        lock = threading.RLock()
        self._cond = threading.Condition(lock)
        self._arrived = threading.Condition(lock)
        self._work = threading.Condition(lock)
        self._small_work = threading.Condition(lock)
        self._thread = threading.Thread
        self._inbox = collections.deque()
        self._requests = collections.deque()  # _Posts waiting for a worker
        self._small = collections.deque()  # notifications and answers, in order
        self._small_bytes = 0  # of answers not yet sent (backlogged)
        self._small_count = self._small_done = 0  # notifications and answers queued, sent
        # How many smalls there were up to the last notification: a request goes
        # after those (initialized, a cancellation), not after answers queued since,
        # so a server's burst of questions cannot hold back the requests that follow.
        self._notified = 0
        self._small_method = None  # the one going now
        self._live = {}  # request id -> its _Post, while it is carried
        self._limit = (None, None)  # (id, time limit) of the request sent next
        self._idle = []  # keep-alive connections not in use
        self._conns = set()  # every connection open now
        self._threads = []
        self._workers = self._waiting = 0
        self._stalled = 0  # readers waiting for the Client to take what they read
        self._woken = False  # see waker
        self._small_worker = False
        self._get_wanted = False
        self._get_opening = None  # until when requests wait for the GET stream
        self._renewing = False  # a new session is being opened: requests wait for it
        self.wire = _STREAMABLE_HTTP  # or _HTTP_SSE, once the server shows it speaks that
        self._ended = None  # what ended that stream: every later receive raises it
        self._closed = False
        self._tls = None
        self._params = {}  # tool name -> [(argument path, Mcp-Param- header name)]
        self._vetted = False  # a tools/list has been seen (modern era)
        self.last_words = ""
        self.received = 0
        if cacert is not None:
            self._context()  # a CA file that cannot be read is exit 2 before anything is sent

    def start(self):
        pass  # connections open as requests go

    # -- the Client's side ----------------------------------------------------

    def send(self, message, frame, answer=False):
        if self._closed:
            raise ConnectionLost("the connection to the server is closed")
        with self._cond:
            # An answer keeps only its frame: thousands may wait for a slow server.
            post = _Post({} if answer else message, frame, self._small_count)
            if post.ident is None:  # a notification or an answer: in order, on their own
                self._small_count += 1
                if not answer:
                    self._notified = self._small_count
                self._small.append(post)
                if answer:
                    self._small_bytes += len(frame)
                if not self._small_worker:
                    self._small_worker = True
                    self._spawn(self._serve_small)
                self._small_work.notify()
            else:
                post.after = self._notified
                if self._limit[0] == post.ident:
                    post.limit = self._limit[1]
                self._requests.append(post)
                self._live[post.ident] = post
                if len(self._requests) > self._waiting and self._workers < _HTTP_CONNECTIONS:
                    self._workers += 1
                    self._spawn(self._serve_requests)
                self._work.notify()
            if post.method in _MRTR_METHODS + ("resources/subscribe",):
                # Opened once, before the first request the server may answer
                # with questions of its own or with updates (a list needs none).
                self._open_get()

    def listen(self):
        with self._cond:
            self._open_get()

    def time_limit(self, ident, limit):
        self._limit = (ident, limit)

    def waker(self):
        def wake():
            with self._cond:
                self._woken = True
                self._arrived.notify_all()
        return wake

    def _open_get(self):
        if self._get_wanted and not self.era.modern and not self.wire.one_stream:
            self._get_wanted = False
            self._get_opening = time.monotonic() + min(_GET_OPENING, self.connect_timeout / 4)
            self._spawn(self._serve_get)

    def receive(self, deadline):
        with self._cond:
            if self._stalled:  # the caller took what it handled: readers may go on
                self._cond.notify_all()
            while not self._inbox and not self._closed and self._ended is None:
                timeout = deadline.left()
                if timeout <= 0 or self._woken:
                    break
                self._arrived.wait(min(timeout, _MAX_WAIT, _WAIT_STEP))
            self._woken = False
            if self._closed and not self._inbox:
                raise ConnectionLost("the connection to the server is closed")
            if self._ended is not None and not self._inbox:
                raise self._ended
        return self._inbox

    def cancel(self, ident):
        """Close the request's stream: cancellation itself in the modern era
        (2026-07-28 streamable-http, "Cancellation"); in the legacy era the
        Client also sends notifications/cancelled (a closed stream is not one)."""
        with self._cond:
            post = self._live.pop(ident, None)
            if post is not None:
                post.cancelled = True
                if post in self._requests:
                    self._requests.remove(post)
                _hang_up(post.conn)
        return self.modern

    def settled(self, era, version):
        self.era, self.version = era, version  # an _Era, once the Client settles it
        self._get_wanted = not era.modern

    @property
    def modern(self):
        return self.era is not None and self.era.modern

    def backlogged(self):
        return self._small_bytes > self.max_bytes

    def describe(self):
        session = " (session %s)" % self.session_id if self.session_id else ""
        return "%s %s%s" % (self.wire.name, self.shown_url, session)

    def vet_tools(self, tools):
        """2026-07-28 streamable-http, "Custom Headers from Tool Parameters": a
        tool whose x-mcp-header annotations break the rules is left out; the
        others' are kept, to mirror their arguments into headers."""
        if not self.modern:
            return tools, []
        self._vetted = True
        kept, rejected = [], []
        for tool in tools:
            name = _dict(tool).get("name")
            try:
                params = _param_headers(_dict(tool).get("inputSchema"))
            except ValueError as e:
                rejected.append((name, str(e)))
                continue
            if isinstance(name, str):
                self._params[name] = params
            kept.append(tool)
        return kept, rejected

    def needs_tools(self):
        return self.modern and not self._vetted

    def held_back(self, ident):
        with self._cond:
            post = self._live.get(ident)
            if post is None or post not in self._requests and post.conn is not None:
                return None
            if self._small_done < post.after and self._small_method:
                return "never sent: the server had not taken %s" % self._small_method
            if self._renewing:
                return "never sent: a new session was being opened"
            return None

    def authorize(self, error):
        if self.auth is None or error.status not in (401, 403) or getattr(
                error, "generation", None) is None:
            return False
        with self._auth_lock:
            return self.auth.answer(error.status, error.www_authenticate, error.generation)

    def renew(self, session):
        """Forget ``session``, which the server ended (404); True if it was the
        current one (a new initialize follows), False if one is open anew."""
        with self._cond:
            if session != self.session_id:
                return False
            self.session_id = None
            self.era = None
            self._renewing = True  # until the new initialize's exchange ends
            return True

    # -- workers --------------------------------------------------------------

    def _spawn(self, target):
        thread = self._thread(target=target, name="mcp_invoke-http")
        thread.daemon = True  # never holds the interpreter open; close() joins it
        self._threads.append(thread)
        thread.start()

    def _next(self, queue):
        """The next exchange from ``queue``, waiting; None once closed. A request
        goes once the notifications and answers sent before it have gone (the
        server reads initialized before what follows it)."""
        idle = self._work if queue is self._requests else self._small_work
        with self._cond:
            while not queue and not self._closed:
                self._waiting += queue is self._requests
                idle.wait()
                self._waiting -= queue is self._requests
            if self._closed:
                return None
            post = queue.popleft()
            self._after(post)
            return post

    def _after(self, post):
        while not (self._closed or post.cancelled):
            if self._small_done < post.after or self._renewing and post.method != "initialize":
                self._cond.wait()  # renewing: no session to name until initialize is answered
            elif self._get_opening is not None and post.ident is not None:
                left = self._get_opening - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)
            else:
                return

    def _get_opened(self):
        """The GET stream has its answer (or none will come): requests may go."""
        with self._cond:
            self._get_opening = None
            self._cond.notify_all()

    def _serve_requests(self):
        while True:
            post = self._next(self._requests)
            if post is None:
                return
            self._exchange(post)

    def _serve_small(self):
        while True:
            post = self._next(self._small)
            if post is None:
                return
            self._small_method = post.method or "an answer to its request"
            try:
                self._exchange(post)
            finally:
                with self._cond:
                    self._small_done += 1
                    if post.message.get("method") is None:
                        self._small_bytes -= len(post.body)
                    self._cond.notify_all()

    def _exchange(self, post):
        """POST one message and hand over what comes back; never raises."""
        try:
            try:
                response = self._open("POST", self._headers_for(post), post)
                if response is not None:
                    self._take(response, post)
            except ProtocolError as e:
                if not (post.method == "initialize" and e.status in (400, 404, 405)
                        and self.wire is _STREAMABLE_HTTP and self._old_transport(post)):
                    raise
                response = self._open("POST", self._headers_for(post), post)
                if response is not None:
                    self._take(response, post)
        except MCPError as e:
            self._fail(post, e)
        except Exception as e:  # a bug here must not kill the worker silently
            self._fail(post, ConnectionLost("HTTP request failed: %s: %s"
                                            % (type(e).__name__, e)))
        finally:
            self._release(post)
            with self._cond:
                if self._live.get(post.ident) is post:
                    del self._live[post.ident]
                if post.method == "initialize" and self._renewing:
                    self._renewing = False  # the new session is known (or never will be)
                    self._cond.notify_all()

    def _fail(self, post, error):
        if post.cancelled or self._closed:
            return
        error.method = error.method or post.method
        self._put([_Failed(post.ident, error)], post)

    def _put(self, items, post=None):
        """Hand messages to the Client; waits while it has a backlog."""
        with self._cond:
            while (len(self._inbox) > _HTTP_BACKLOG and not self._closed
                   and not (post is not None and post.cancelled)):
                self._stalled += 1
                try:
                    self._cond.wait()
                finally:
                    self._stalled -= 1
            if self._closed or post is not None and post.cancelled:
                return
            self._inbox.extend(items)
            self._arrived.notify_all()

    # -- HTTP -----------------------------------------------------------------

    def _post_headers(self, message):
        headers = [("Content-Type", "application/json"),
                   ("Accept", "application/json, text/event-stream")]
        params = _dict(message.get("params"))
        version = _dict(params.get("_meta")).get(_VERSION_KEY)
        method = message.get("method")
        if isinstance(version, str):
            # 2026-07-28 "Request Metadata": the headers mirror the body.
            headers.append(("MCP-Protocol-Version", _header_value(version)))
            if isinstance(method, str):
                headers.append(("Mcp-Method", _header_value(method)))
            name = params.get(_METHOD_NAME_KEY.get(method))
            if isinstance(name, str):
                headers.append(("Mcp-Name", _header_value(name)))
            if method == "tools/call":
                headers += self._param_values(name, params.get("arguments"))
        else:
            headers += self._session_headers(method)
        return headers

    def _headers_for(self, post):
        """The headers of ``post``'s POST; it remembers the session it names."""
        post.session = self.session_id if post.method != "initialize" else None
        return self._post_headers(post.message)

    def _param_values(self, tool, arguments):
        """Mcp-Param-{Name} for each annotated argument present ("Value Encoding")."""
        headers = []
        for path, header in self._params.get(tool, ()):
            value = arguments
            for key in path:
                value = _dict(value).get(key)
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, (int, str)):
                text = str(value)
            elif isinstance(value, float) and value.is_integer():
                text = "%d" % value  # 42.0 meets an integer schema: written 42
            else:
                continue  # absent, or of a type the annotation does not take
            headers.append(("Mcp-Param-" + header, _header_value(text)))
        return headers

    def _session_headers(self, method=None):
        # 2025-11-25 transports, "Session Management" and "Protocol Version Header".
        headers = []
        if method != "initialize":
            if self.session_id is not None:
                headers.append(("Mcp-Session-Id", self.session_id))
            if self.era is not None and not self.modern and self.version is not None:
                headers.append(("MCP-Protocol-Version", self.version))
        return headers

    def _open(self, method, headers, post, target=None):
        """Send ``method`` to the endpoint and return the response, following
        redirects on the same origin; None if the exchange was cancelled."""
        target = target or self.target
        for _ in range(_MAX_REDIRECTS + 1):
            response = self._request(method, target, headers, post)
            if response is None or response.status not in (307, 308):
                return response
            target = self._redirected(response.getheader("Location") or "")
            self._release(post)
        raise ProtocolError("the server redirected more than %d times" % _MAX_REDIRECTS)

    def _redirected(self, location, what="redirected to"):
        """The target of a redirect on the same origin; other origins are refused,
        as Authorization and our headers are never sent to them."""
        from urllib.parse import urljoin, urlsplit  # lazy: HTTP only
        base = "%s://%s:%d%s" % (self.scheme, self.host, self.port, self.target)
        try:
            parts = urlsplit(urljoin(base, location))
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise ProtocolError("the server %s a malformed URL" % what)
        if (parts.scheme, parts.hostname, port) != (self.scheme, self.host, self.port):
            raise ProtocolError("the server %s another origin, %s; not followed (use that "
                                "URL if it is trusted)" % (what, _shown_url(parts.geturl())))
        if re.search(r"[\x00-\x20\x7f]", location):
            raise ProtocolError("the server %s a URL with a space or control character" % what)
        return _ascii_target(parts)

    def _request(self, method, target, headers, post):
        """One request on a keep-alive connection (a new one if the server closed
        the old meanwhile); the response, its headers read."""
        import http.client  # lazy: HTTP only
        headers = ([("User-Agent", "mcp_invoke/" + __version__)] + headers + self.headers
                   + self._authorization(post))
        if self.proxy is not None and self.scheme == "http":
            headers += self._proxy_auth
        for attempt in (0, 1):
            conn, reused = self._connection(post)
            if conn is None:
                return None
            try:
                if conn.sock is None:
                    conn.connect()
                    conn.sock.settimeout(None)  # close() and cancel() end a wait now
                    if post.cancelled:  # between the connect and the line above
                        raise ConnectionAbortedError(0, "cancelled")
                conn.putrequest(method, self._absolute(target), skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                if method == "POST":
                    conn.putheader("Content-Length", str(len(post.body)))
                    _end_request(conn, post.body)
                else:
                    conn.endheaders()
                post.response = conn.getresponse()
                return post.response
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError) as e:
                if post.cancelled or self._closed:
                    return None
                self._drop(post)
                if not reused or attempt:  # a kept connection may have timed out: once more
                    raise self._lost(e)
            except (OSError, http.client.HTTPException) as e:
                if post.cancelled or self._closed:
                    return None
                self._drop(post)
                raise self._lost(e)
        return None

    @property
    def _proxy_auth(self):
        return _proxy_auth(self.proxy)

    def _authorization(self, post):
        """The OAuth Authorization header, when there is a token; ``post`` notes
        which (2025-11-25 basic/authorization, "Token Requirements": on every request)."""
        if self.auth is None:
            return []
        with self._auth_lock:
            credentials = self.auth.header()
            post.generation = self.auth.generation
        return [] if credentials is None else [("Authorization", credentials)]

    def _absolute(self, target):
        if self.proxy is not None and self.scheme == "http":  # a plain proxy takes the URL
            return "http://%s:%d%s" % (self.host, self.port, target)
        return target

    def _lost(self, error):
        """ConnectionLost naming what failed: the address, TLS, a reset."""
        import http.client  # lazy: HTTP only
        import socket
        import ssl
        where = "%s:%d" % (self.host, self.port)
        if isinstance(error, http.client.HTTPException) and not isinstance(
                error, (http.client.RemoteDisconnected, http.client.IncompleteRead)):
            # Not HTTP at all, a status line or header too long, too many
            # headers: named by kind, as the server's bytes may hold anything.
            return ProtocolError("server at %s answered with something that is not valid "
                                 "HTTP (%s)" % (where, type(error).__name__))
        if isinstance(error, OSError) and "407" in str(error):
            return AuthError("the proxy refused us: 407 Proxy Authentication Required",
                             status=407)
        if isinstance(error, ssl.SSLError):
            reason = getattr(error, "verify_message", None) or error.reason or str(error)
            reason = re.sub(r"\s*\(_ssl\.c:[0-9]+\)", "", str(reason))  # Python's, not ours
            return ConnectionLost("TLS with %s failed: %s%s" % (
                where, _flat(reason), " (give its CA with --cacert FILE)"
                if "verify" in str(error).lower() else ""))
        if isinstance(error, socket.gaierror):
            return ConnectionLost("cannot find host %s: %s" % (self.host, error.strerror))
        if isinstance(error, ConnectionRefusedError):
            return ConnectionLost("cannot connect to %s: connection refused" % where)
        if isinstance(error, OSError) and error.strerror:
            return ConnectionLost("connection to %s failed: %s" % (where, error.strerror.lower()))
        return ConnectionLost("connection to %s failed: %s" % (
            where, _flat(_cut(str(error) or type(error).__name__, _SHOW_CHARS))))

    def _connection(self, post):
        """(a connection for ``post``, whether it was kept from before); (None,
        False) once the exchange is cancelled."""
        with self._cond:
            if post.cancelled or self._closed:
                return None, False
            reused = bool(self._idle)
            conn = self._idle.pop() if reused else self._new_connection(post)
            post.conn = conn
        return conn, reused

    def _new_connection(self, post, timeout=None, stop=None):
        """A connection to the server (see _http_connection), not yet open; its
        connect gives up after ``timeout`` (by default the request's time
        limit, else the Client's timeout), or once
        ``stop()`` is true (by default once the exchange is cancelled or the
        transport closed)."""
        if timeout is None and post.limit is not None:
            # A request's: its connect lasts as long as the request may (the
            # Client's clock ends it sooner, cancelling the exchange).
            timeout = post.limit - time.monotonic()
        until = _Deadline(self.connect_timeout if timeout is None else timeout,
                          "connection timed out")
        conn = _http_connection(self.scheme, self.host, self.port, self.proxy, self._context,
                                until, stop or (lambda: post.cancelled or self._closed))
        self._conns.add(conn)
        return conn

    def _context(self):
        import ssl  # lazy: HTTPS only
        if self._tls is None:
            try:
                cadata = None if self.cacert is None else _read_file(
                    self.cacert, "the CA file " + os.fsdecode(self.cacert), "ascii", wait=2.0)
                if cadata is not None and "-----BEGIN" not in cadata:
                    raise ValueError("it holds no PEM certificate")
                context = ssl.create_default_context(cadata=cadata)
            except (ssl.SSLError, ValueError) as e:  # ValueError: no certificate in it
                raise UsageError("cannot use the CA file %s: %s" % (
                    self.cacert, re.sub(r"\s*\(_ssl\.c:[0-9]+\)", "", str(e))))
            if self.insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            self._tls = context
        return self._tls

    def _release(self, post):
        """Give the exchange's connection back for the next one, or close it."""
        with self._cond:
            conn, post.conn = post.conn, None
            if conn is None:
                return
            response, post.response = post.response, None
            if (self._closed or post.cancelled or conn.sock is None
                    or response is not None and not response.isclosed()):
                if response is not None:
                    response.close()
                self._conns.discard(conn)
                _close_conn(conn)
            else:
                self._idle.append(conn)

    def _drop(self, post):
        """Close the exchange's connection (broken, or carrying a stream we leave)."""
        with self._cond:
            conn, post.conn = post.conn, None
            response, post.response = post.response, None
            if conn is not None:
                self._conns.discard(conn)
                _hang_up(conn)
                _close_conn(conn)
            if response is not None:
                response.close()

    # -- responses ------------------------------------------------------------

    def _take(self, response, post):
        """Hand over what a POST's response says, or how it failed."""
        status = response.status
        if 200 <= status < 300 and post.generation is not None:
            self.auth.worked(post.generation)
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if (post.ident is None or self.wire.one_stream) and 200 <= status < 300:
            # Taken: a notification or an answer; with HTTP+SSE, a request too,
            # answered on the stream (nothing to cancel there once sent).
            post.answered = True
            return self._discard(response)
        if post.method == "initialize" and status == 200:
            session = response.getheader("Mcp-Session-Id")
            if session is not None:
                if not re.match(r"[\x21-\x7e]+\Z", session):
                    raise ProtocolError("the server's Mcp-Session-Id is not visible ASCII")
                self.session_id = session
        if status == 200 and kind == "text/event-stream":
            return self._stream(response, post)
        if (status in (200, 201) and kind == "application/json"
                or status >= 400 and post.ident is not None):
            body = self._body(response, status)
            if body is not None:
                return self._answered(body, status, response, post)
        if status in (202, 204):
            self._discard(response)
            raise ProtocolError("server answered %s with HTTP %d and no answer"
                                % (post.method, status), post.method)
        raise self._refused(status, response, post)

    def _refused(self, status, response, post, error=None):
        """The error for an HTTP status that carries no answer of JSON-RPC."""
        reason = _flat(_cut(response.reason or "", _SHOW_CHARS))
        said = "server answered HTTP %d %s" % (status, reason)
        message = _flat(_cut(str(_dict(error).get("message", "")), _SHOW_CHARS)).strip()
        if message:  # a JSON-RPC error object without our id: its message helps
            said += ": " + message
        if status == 407:
            return AuthError("the proxy refused us: %s" % said, post.method, status)
        if status in (401, 403):
            challenge = (response.getheader("WWW-Authenticate") or "")[:_CHALLENGE_CHARS]
            hint = _flat(_cut(challenge, 300))
            refused = AuthError("%s%s" % (said, "; WWW-Authenticate: " + hint if hint else
                                          " (give credentials with --header or --bearer-env)"),
                                post.method, status, challenge)
            refused.generation = post.generation  # which token was refused
            return refused
        if status == 404 and post.session is not None:
            gone = _SessionGone("%s: the server ended the session" % said, post.method,
                                status=404)
            gone.session = post.session
            return gone
        if status >= 500:
            return ConnectionLost(said, post.method, status=status)
        if 200 <= status < 300:
            ctype = _flat(_cut(response.getheader("Content-Type") or "none", _SHOW_CHARS))
            error = ProtocolError("server answered %s with Content-Type %s, not JSON or an "
                                  "event stream" % (post.method, ctype), post.method)
        else:
            error = ProtocolError(said, post.method)
        error.status = status
        return error

    def _body(self, response, status):
        """The body (bytes) of a JSON answer within max_bytes, or None for an
        error status whose body is not JSON (its HTML never shows)."""
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if status >= 400 and kind != "application/json":
            return None
        length = (response.getheader("Content-Length") or "").strip()
        if length and not (length.isdigit() and len(length) < 19):
            raise ProtocolError("server sent a Content-Length that is not a number of bytes: %s"
                                % _show(length))
        length = int(length) if length else None
        limit = self.max_bytes if status < 400 else min(self.max_bytes, _ERROR_BODY)
        if status >= 400 and length is not None and length > limit:
            return None
        reader = _BodyReader(limit, length)
        while True:
            chunk = self._read(response)
            if not chunk:
                return reader.finish()
            self.received += len(chunk)
            reader.feed(chunk)

    def _read(self, response):
        import http.client  # lazy: HTTP only
        try:
            chunk = response.read1(_READ_SIZE)
            if response.length == 0 and not response.isclosed():
                # The body is whole: closed, the connection is kept for the next
                # request (Python 3.13's read1 does this itself; older ones not).
                response.close()
            return chunk
        except http.client.IncompleteRead:
            raise ConnectionLost("the server's answer ended early")
        except ValueError:  # a chunk size that is not hexadecimal
            raise ProtocolError("server sent a malformed chunked body")
        except (OSError, http.client.HTTPException) as e:
            raise self._lost(e)

    def _discard(self, response):
        try:
            for _ in range(16):  # a few reads; a longer body just closes the connection
                if not self._read(response):
                    return
        except Exception:
            pass

    def _answered(self, body, status, response, post):
        """A JSON body: the answer to ``post``, or, with an error status, an error
        object (without an id: about the request itself) made its answer."""
        message, bad, text = _parse_frame([body])
        if not isinstance(message, dict):
            if status >= 400:
                raise self._refused(status, response, post)
            raise ProtocolError("server answered %s with a body that is not a JSON-RPC "
                                "message" % post.method, post.method)
        if status >= 400:
            error = message.get("error")
            if not isinstance(error, dict) or message.get("id") not in (None, post.ident):
                raise self._refused(status, response, post, error)
            if status in (401, 403) or status >= 500 or status == 404 and post.session:
                raise self._refused(status, response, post, error)
            message = {"jsonrpc": "2.0", "id": post.ident, "error": error}
        post.answered = message.get("id") == post.ident and "method" not in message
        if not post.answered:
            raise ProtocolError("server answered %s with a message that is not its answer"
                                % post.method, post.method)
        self._put(([_BadUTF8()] if bad else []) + [message], post)

    def _stream(self, response, post):
        """Read a response's event stream until its answer; resume it (legacy era)
        with Last-Event-ID when it ends before, waiting the server's retry time."""
        parser = _SSEParser(self.max_bytes)
        while True:
            self._events(response, parser, post)
            if post.answered or post.cancelled or self._closed:
                return
            if parser.last_id is None or self.modern:
                # 2025-11-25 transports: a stream that ends unanswered is resumed by
                # its event ID; with none, nothing can bring the answer back.
                raise ConnectionLost("the server's stream ended before the answer to %s"
                                     % post.method, post.method)
            self._drop(post)
            if not self._pause(parser.retry, post):
                return
            headers = [("Accept", "text/event-stream"), _last_event_id(parser.last_id)]
            response = self._open("GET", headers + self._session_headers(), post)
            if response is None:
                return
            kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if response.status != 200 or kind != "text/event-stream":
                raise self._refused(response.status, response, post)
            parser.restart()

    def _pause(self, retry, post):
        """Wait the retry time (ms) unless closed or cancelled; False if so."""
        retry = _RETRY_MS if retry is None else min(retry, _MAX_SECONDS * 1000)
        until = _Deadline(max(retry, _LEAST_RETRY_MS) / 1000.0)
        with self._cond:
            while not (post.cancelled or self._closed):
                left = until.left()
                if left <= 0:
                    return True
                self._cond.wait(min(left, _MAX_WAIT))
        return False

    def _events(self, response, parser, post):
        """Hand over a stream's messages until it ends, its answer comes, or the
        exchange is cancelled; a ProtocolError hands over what came first."""
        while not (post.answered or post.cancelled or self._closed):
            try:
                chunk = self._read(response)
            except ConnectionLost:
                if post.cancelled or self._closed:
                    return
                if parser.last_id is not None and not self.modern:
                    return  # resumable
                raise
            if not chunk:
                return
            self.received += len(chunk)
            bad = parser.bad_utf8
            try:
                events = parser.feed(chunk)
            except ProtocolError as e:
                self._put(self._messages(e.events, post), post)
                raise
            if parser.bad_utf8 and not bad:  # said once per stream
                self._put([_BadUTF8()], post)
            if events:
                self._put(self._messages(events, post), post)

    def _messages(self, events, post):
        items = []
        for event in events:
            if event.name != "message" or not event.data:
                continue  # other events carry no JSON-RPC; a priming event no data
            try:
                message = _json_loads(event.data)
            except _NotJSON as e:
                if event.data.lstrip()[:1] in ("{", "["):  # NaN, deep nesting: exit 4
                    self._put(items, post)
                    raise ProtocolError("server sent a message that is not JSON: %s" % e)
                message = None
            except ValueError:
                message = None
            if not isinstance(message, dict):
                items.append(_Noise(event.data))
                continue
            if "method" not in message and not self.wire.one_stream:
                if post is None or message.get("id") != post.ident:
                    # A stream carries the answer to its own request only
                    # (2025-11-25 transports, "Sending Messages to the Server").
                    items.append(_Stray("ignored an answer to request id %s that came on "
                                        "%s" % (_cut(json.dumps(message.get("id")), _SHOW_CHARS),
                                                "another request's stream" if post.ident
                                                is not None else "the GET stream")))
                    continue
                post.answered = True
            items.append(message)
        return items

    # -- the 2024-11-05 HTTP+SSE transport ------------------------------------

    def _old_transport(self, post):
        """2025-11-25 transports, "Backwards Compatibility": initialize refused
        with 400, 404 or 405 (no JSON-RPC answer in the body) may mean the older
        HTTP+SSE transport. GET the URL; a
        stream whose first event is ``endpoint`` names where to POST (on the
        same origin), and carries every answer from then on. False if not."""
        self._drop(post)
        response = self._open("GET", [("Accept", "text/event-stream")], post)
        if response is None:
            return False
        if response.status in (401, 403, 407) or response.status >= 500:
            raise self._refused(response.status, response, post)  # what it is, told
        if response.status != 200 or (response.getheader("Content-Type") or "").split(
                ";")[0].strip().lower() != "text/event-stream":
            return False
        parser, early, endpoint = _SSEParser(self.max_bytes), [], None
        while endpoint is None:
            chunk = self._read(response)
            if not chunk:
                return False
            for event in parser.feed(chunk):
                if endpoint is None and event.name == "endpoint":
                    endpoint = event.data.strip()
                else:
                    early.append(event)
            if len(early) > _DEFERRED_MAX:  # kept until the endpoint: a bounded few
                raise ProtocolError("the server's HTTP+SSE stream sent over %d events "
                                    "before naming its endpoint" % _DEFERRED_MAX)
        self.target = self._redirected(endpoint, "named its endpoint on")
        self.wire = _HTTP_SSE
        stream = _Post({}, None)  # the stream outlives this exchange
        with self._cond:
            stream.conn, stream.response, post.conn, post.response = (
                post.conn, post.response, None, None)
        self._put(self._messages(early, stream))
        self._spawn(lambda: self._carry(stream, response, parser))
        return True

    def _carry(self, stream, response, parser):
        """Hand over the HTTP+SSE stream's messages; its end ends the connection."""
        try:
            self._events(response, parser, stream)
            lost = ConnectionLost("the server's event stream ended")
        except MCPError as e:
            lost = e
        except Exception as e:
            lost = ConnectionLost("the server's event stream failed: %s" % e)
        finally:
            self._drop(stream)
        with self._cond:
            self._ended = lost
            self._cond.notify_all()
            self._arrived.notify_all()

    # -- the standing GET stream (legacy era) ---------------------------------

    def _serve_get(self):
        """2025-11-25 transports, "Listening for Messages from the Server": a GET
        stream for what the server sends outside our requests; a 405 means it
        offers none, and a stream that keeps failing is given up."""
        try:
            self._listen()
        except Exception:  # nothing to report: the requests go on without it
            pass
        finally:
            self._get_opened()

    def _listen(self):
        with self._cond:
            post = _Post({}, None, self._notified)  # once initialized has gone
            self._after(post)
        parser, tries = _SSEParser(self.max_bytes), 0
        while tries < _GET_TRIES and not self._closed:
            headers = [("Accept", "text/event-stream")] + self._session_headers()
            if parser.last_id is not None:
                headers.append(_last_event_id(parser.last_id))
            try:
                try:
                    response = self._open("GET", headers, post)
                finally:
                    self._get_opened()  # answered, refused or failed: requests go
                if response is None:
                    return
                kind = (response.getheader("Content-Type") or "").split(";")[0].lower()
                if response.status != 200 or kind.strip() != "text/event-stream":
                    return  # 405: none offered; others: nothing to listen to
                before = self.received
                self._events(response, parser, post)
                tries = 0 if self.received > before else tries + 1
            except MCPError:
                tries += 1
            finally:
                self._drop(post)
            parser.restart()
            if not self._pause(parser.retry, post):
                return

    # -- shutdown -------------------------------------------------------------

    def close(self, grace=None):
        """Stop every exchange, DELETE the session (legacy era; 405 is fine), and
        end every thread and socket, ``grace`` seconds per step at most."""
        if self._closed:
            return
        grace = self.grace if grace is None else min(grace, self.grace)
        deadline = _Deadline(min(grace, _LINGER))
        with self._cond:  # what was sent last (notifications/cancelled) goes out first
            while self._small_done < self._small_count and not deadline.passed():
                self._cond.wait(deadline.left())
            self._closed = True
            conns = list(self._conns)
            for waiting in (self._cond, self._arrived, self._work, self._small_work):
                waiting.notify_all()
        for conn in conns:
            if conn not in self._idle:  # an idle one may carry the DELETE
                _hang_up(conn)
        deadline = _Deadline(grace)
        for thread in self._threads:
            thread.join(deadline.left())
        if self.session_id is not None and self.era is not None and not self.modern and grace > 0:
            self._delete(grace)
        for conn in conns:
            _close_conn(conn)

    def _delete(self, grace):
        """2025-11-25 transports, "Session Management": end the session we opened,
        on a kept connection if there is one (a fresh one if that has gone)."""
        import http.client  # lazy: HTTP only
        deadline = _Deadline(grace)
        for kept in (True, False):
            left = deadline.left()
            if left <= 0 or kept and not self._idle:
                continue
            conn = self._idle.pop() if kept else self._new_connection(
                _Post({}, None), left, stop=lambda: False)
            try:
                if conn.sock is None:
                    conn.connect()
                conn.sock.settimeout(left)
                conn.putrequest("DELETE", self._absolute(self.target), skip_accept_encoding=True)
                for name, value in ([("User-Agent", "mcp_invoke/" + __version__)]
                                    + self._session_headers() + self.headers
                                    + self._authorization(_Post({}, None))):
                    conn.putheader(name, value)
                conn.endheaders()
                conn.getresponse().read(_ERROR_BODY)  # 405: the server keeps it; fine
                return
            except (OSError, http.client.HTTPException):
                pass  # a kept connection the server closed meanwhile: once more
            finally:
                _close_conn(conn)
                self._conns.discard(conn)

    def abort(self):
        """From a signal handler: shut every connection now (close() joins)."""
        for conn in list(self._conns):
            _hang_up(conn)


# ---------------------------------------------------------------------------
# Transports: OAuth 2.1 for Streamable HTTP (discovery, identity, grants, tokens)
# ---------------------------------------------------------------------------

# The keys of Client(oauth={...}); see the Client's docstring.
_OAUTH_KEYS = frozenset((
    "client_id", "client_secret", "client_metadata_url", "scope", "grant", "private_key_file",
    "signing_alg", "idp_token_endpoint", "idp_client_id", "idp_id_token", "headless",
    "listen", "cache", "on_authorize", "on_secret", "login"))
_GRANTS = ("authorization_code", "client_credentials", "jwt-bearer")
_GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
_TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
_ASSERTION_TYPE_JWT = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# A token counts as expired this many seconds before the time it was given for:
# clocks differ, and a request takes time to arrive.
_TOKEN_SLACK = 30
# Authorizations one run may make (the first, then step-ups) before a refusal
# stands (2025-11-25 basic/authorization, "Step-Up Authorization Flow": retry limits).
_MAX_AUTHORIZATIONS = 3
# Largest answer read from an authorization server: metadata and tokens are small.
_OAUTH_MAX_BYTES = 1024 * 1024
# How long a person may take to authorize in a browser and come back.
_PERSON_WAIT = 600.0
# Where the browser is sent back to when nothing listens: the person copies the
# URL it shows (RFC 8252 7.3, a loopback redirect).
_PASTE_REDIRECT = "http://127.0.0.1:8976/callback"
# How long a run waits for another to finish writing the token file.
_LOCK_WAIT = 2.0
# Longest lifetime believed of a token (ten years): past it, times are nonsense.
_LONGEST_TOKEN = 10 * 365 * 86400
# Lifetime of a client assertion (RFC 7523 3: short).
_ASSERTION_LIFETIME = 300


def _challenge(header):
    """The parameters of the Bearer challenge in a WWW-Authenticate value
    (RFC 9110 11.6.1, RFC 6750 3), names lower-cased; {} without one."""
    params, scheme, pos = {}, None, 0
    text = header or ""
    pattern = re.compile(r'[\s,]*([^\s,="]+)(?:\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*))?')
    while pos < len(text):
        found = pattern.match(text, pos)
        if not found or found.end() == pos:
            break
        pos = found.end()
        name, value = found.group(1), found.group(2)
        if value is None:
            scheme = name.lower()
        elif scheme == "bearer":
            if len(value) > 1 and value[0] == value[-1] == '"':
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            params.setdefault(name.lower(), value)
    return params


def _scopes(text):
    """A scope string as a list, in order, once each (RFC 6749 3.3)."""
    seen = []
    for scope in (text or "").split():
        if scope not in seen:
            seen.append(scope)
    return seen


def _origin(url):
    from urllib.parse import urlsplit  # lazy: HTTP only
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    default = 443 if scheme == "https" else 80
    port = parts.port or default
    return "%s://%s%s" % (scheme, (parts.hostname or "").lower(),
                          "" if port == default else ":%d" % port)


def _origin_or_none(url):
    try:
        return _origin(url)
    except ValueError:
        return None


def _url_path(url):
    from urllib.parse import urlsplit  # lazy: HTTP only
    return urlsplit(url).path.rstrip("/")


def _metadata_urls(issuer):
    """Where an authorization server's metadata may be, in the order to try
    (2025-11-25 basic/authorization, "Authorization Server Metadata Discovery")."""
    origin, path = _origin(issuer), _url_path(issuer)
    if not path:
        return [origin + "/.well-known/oauth-authorization-server",
                origin + "/.well-known/openid-configuration"]
    return [origin + "/.well-known/oauth-authorization-server" + path,
            origin + "/.well-known/openid-configuration" + path,
            origin + path + "/.well-known/openid-configuration"]


def _resource_covers(resource, url):
    """Whether a protected resource's identifier names the server at ``url``: the
    same origin, and a path that is the URL's or a parent of it (RFC 9728 3.3;
    RFC 8707 2: the most specific URI is best, a parent still names it)."""
    if not isinstance(resource, str) or not resource:
        return False
    try:
        if _origin(resource) != _origin(url):
            return False
    except ValueError:
        return False
    return (_url_path(url) + "/").startswith(_url_path(resource) + "/")


def _b64url(data):
    import base64  # lazy: OAuth only
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _pkce():
    """A code verifier and its S256 challenge (RFC 7636 4.1, 4.2)."""
    import secrets  # lazy: OAuth only
    verifier = secrets.token_urlsafe(48)
    return verifier, _b64url(_sha256()(verifier.encode("ascii")).digest())


def _said(step, document, status):
    """What an authorization server's error answer says (RFC 6749 5.2), one line."""
    error = _dict(document).get("error")
    if not isinstance(error, str):
        return "OAuth %s failed: HTTP %d%s" % (step, status, "" if document is not None
                                               else " (the answer is not JSON)")
    text = "OAuth %s failed: %s" % (step, _flat(_cut(error, _SHOW_CHARS)))
    described = _dict(document).get("error_description")
    if isinstance(described, str) and described.strip():
        text += ": " + _flat(_cut(described, 200))
    return text


class _TokenCache(object):
    """The token file: for each server URL, the clients registered with its
    authorization servers and the tokens obtained, keyed by (client id, scopes).
    Created 0600 in a 0700 directory, replaced whole (atomically) on each write."""

    def __init__(self, path, private_directory=False):
        self.path = _named(path)
        self.private_directory = private_directory  # ours alone: kept 0700

    @staticmethod
    def default_path(environ):
        return os.path.join(_state_home(environ), "oauth.json")

    def load(self):
        try:
            fd = _open_file(self.path, os.O_RDONLY)  # a FIFO there: no hang
        except OSError:
            return {"servers": {}}
        try:
            info = os.fstat(fd)
            if info.st_mode & 0o170000 != 0o100000:
                raise UsageError("the token file %s is not a regular file" % self.path)
            if not _yours(info):  # another's tokens would make us act as another
                raise UsageError("the token file %s is not this user's alone to write (it "
                                 "is another's, or group or others may write it); remove "
                                 "it, or chmod 600 a file of yours" % self.path)
            with open(fd, "rb", closefd=False) as f:
                text = _read_up_to(f, _INPUT_LIMIT + 1).decode("utf-8")
            if len(text) > _INPUT_LIMIT:
                data = None
            elif not text.strip():
                data = {"servers": {}}  # an empty file: ours to fill
            else:
                data = _json_loads(text)
        except (IOError, OSError, ValueError):
            data = None
        finally:
            os.close(fd)
        if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
            # Not ours, or damaged: read as empty, and never written over (update).
            return {"servers": {}, "foreign": True}
        return data

    def server(self, url, data=None):
        """What is kept for ``url``: {"clients": {issuer: ...}, "tokens": [...]}."""
        entry = _dict((data or self.load())["servers"].get(url))
        return {"clients": _dict(entry.get("clients")),
                "tokens": [t for t in entry.get("tokens") or [] if isinstance(t, dict)]}

    def update(self, url, change):
        """Apply ``change`` to the server's entry and write the file, under a lock
        (runs at once each keep what the others wrote); False when it cannot be
        written (the tokens then last this run only)."""
        lock = self._lock()
        try:
            data = self.load()
            if data.pop("foreign", False):
                return False
            entry = self.server(url, data)
            change(entry)
            if entry["clients"] or entry["tokens"]:
                data["servers"][url] = entry
            else:
                data["servers"].pop(url, None)
            return self._write(data)
        finally:
            if lock is not None:
                os.close(lock)  # and with it the lock

    def _lock(self):
        """An exclusive lock on PATH.lock, held until its fd closes; None where
        the lock file cannot be made."""
        try:
            _private_dir(os.path.dirname(os.path.realpath(self.path)), self.private_directory)
            fd = _open_file(os.path.realpath(self.path) + ".lock", os.O_WRONLY | os.O_CREAT,
                            0o600, follow=False)
        except OSError:
            return None
        deadline = _Deadline(_LOCK_WAIT)
        while True:
            try:
                _try_lock(fd)
                return fd
            except OSError:
                if deadline.passed():
                    return fd  # held too long (a stuck run): written without it, atomically
                time.sleep(0.01)

    def _write(self, data):
        try:
            _write_whole(self.path, json.dumps(data, indent=1, sort_keys=True),
                         narrow=self.private_directory)
            return True
        except (IOError, OSError):
            return False


class _OAuth(object):
    """OAuth 2.1 for one MCP server (2025-11-25 basic/authorization, with the
    2025-03-26 fallbacks, and 2026-07-28 basic/authorization): the Authorization
    header for its requests and, when it refuses them, a refresh or a new
    authorization: discovery, the client's identity, a grant, the cache."""

    def __init__(self, url, options, timeout, context, environ, cap):
        self.url = url
        self.options = options
        self.timeout = timeout
        self.cap = cap  # seconds a whole renewal may take, a person's time aside
        self.renewal = None  # the _Deadline of the one under way
        self.context = context  # the TLS context for https:// (the transport's)
        self.environ = environ
        cache = options.get("cache")
        self.cache = _TokenCache(cache, cache == _TokenCache.default_path(environ)) if (
            cache) else None
        self.token = None  # the token entry in use (a dict), or None
        self.generation = 0  # counts tokens taken into use; requests carry it
        self.authorizations = self.refreshes = 0  # this run's, each kind bounded
        self.asked = []  # the scopes last asked for
        self.server = None  # discovery's findings: resource, issuer, metadata, scopes
        self.clients = {}  # issuer -> the client registered with it in this run
        self.loaded = False

    # -- what the transport asks ----------------------------------------------

    def header(self):
        """The Authorization value for the next request, or None."""
        if not self.loaded:
            self.loaded = True
            self.renewal = self._renewal()
            if self.options.get("login"):
                self._forget()
            else:
                self._adopt(self._cached())
                if self.token is not None and self._expired(self.token):
                    if not self.token.get("refresh_token") or not self._refresh_quietly():
                        self.token = None
        if self.token is None:
            return None
        return "Bearer " + self.token["access_token"]

    def worked(self, generation):
        """A request made with token ``generation`` was taken: the bounds on
        authorizations and refreshes count from here, so a Client or session
        that lives long renews its tokens for as long as it runs."""
        if generation == self.generation:
            self.authorizations = self.refreshes = 0

    def answer(self, status, challenge, generation):
        """After a 401 or 403 to a request made with token ``generation``: True
        when a new token is in place and the request is worth sending again."""
        if generation != self.generation:
            return True  # another request renewed it meanwhile
        self.renewal = self._renewal()
        if challenge.strip() and not re.search(r"(?:^|[\s,])bearer(?:[\s,]|$)", challenge,
                                               re.IGNORECASE):
            return False  # another scheme (Basic, Negotiate): not a matter for OAuth
        params = _challenge(challenge)
        if status == 403:
            if params.get("error") != "insufficient_scope":
                return False
            wanted = self.asked + [s for s in _scopes(params.get("scope"))
                                   if s not in self.asked]
        else:
            if self.token is not None and self.token.get("refresh_token") and \
                    self.refreshes < _MAX_AUTHORIZATIONS and self._refresh_quietly():
                return True
            wanted = _scopes(params.get("scope"))
        if self.authorizations >= _MAX_AUTHORIZATIONS:
            raise AuthError("the server still refuses after %d authorizations: HTTP %d%s" % (
                self.authorizations, status, "; WWW-Authenticate: " + _flat(_cut(
                    challenge, 300)) if challenge else ""), status=status,
                www_authenticate=challenge)
        self.authorizations += 1
        self._authorize(params.get("resource_metadata"), wanted, status, challenge)
        return True

    # -- the token in use, and the cache --------------------------------------

    def _cached(self):
        if self.cache is None:
            return None
        client_id, scope = self.options.get("client_id"), self.options.get("scope")
        tokens = [t for t in self.cache.server(self.url)["tokens"]
                  if isinstance(t.get("access_token"), str)
                  and re.match(r"[\x21-\x7e]+\Z", t["access_token"])
                  and (client_id is None or t.get("client_id") == client_id)
                  and (scope is None or t.get("scope") == " ".join(_scopes(scope)))]
        tokens.sort(key=lambda t: t.get("obtained_at") or 0)
        return tokens[-1] if tokens else None

    def _adopt(self, token):
        if token is not None:
            self.token = token
            self.generation += 1
            self.asked = _scopes(token.get("scope"))
            self._secret(token.get("access_token"), token.get("refresh_token"))

    def _secret(self, *values):
        on_secret = self.options.get("on_secret")
        for value in values:
            if on_secret is not None and isinstance(value, str) and value:
                on_secret(value)

    @staticmethod
    def _expired(token):
        expires = token.get("expires_at")
        return isinstance(expires, (int, float)) and time.time() >= expires - _TOKEN_SLACK

    def _store(self, token):
        """Take a token answer into use and keep it in the cache."""
        self._adopt(token)
        if self.cache is not None:
            def change(entry):
                entry["tokens"] = [t for t in entry["tokens"] if not (
                    t.get("client_id") == token["client_id"]
                    and t.get("scope") == token["scope"])] + [token]
            self.cache.update(self.url, change)

    def _forget(self):
        if self.cache is not None:
            def change(entry):
                entry["tokens"] = []
            self.cache.update(self.url, change)

    # -- refresh --------------------------------------------------------------

    def _refresh_quietly(self):
        """Refresh the token in use (RFC 6749 6); False when that did not work
        (the refresh token is then dropped, and a new authorization follows)."""
        old = self.token
        refresh_token = old.get("refresh_token")
        self.refreshes += 1
        try:
            client = self._client_for(old)
            form = {"grant_type": "refresh_token", "refresh_token": old["refresh_token"]}
            if old.get("resource"):
                form["resource"] = old["resource"]
            answer = self._token_request("refresh", old["token_endpoint"], form, client,
                                         old.get("issuer"))
        except (AuthError, KeyError, TypeError):
            old.pop("refresh_token", None)
            self.token = None
            self.generation += 1
            if self.cache is not None:  # a refresh token refused once is not tried again
                def change(entry):
                    for kept in entry["tokens"]:
                        if kept.get("refresh_token") == refresh_token:
                            del kept["refresh_token"]
                self.cache.update(self.url, change)
            return False
        if not answer.get("refresh_token"):
            answer["refresh_token"] = old["refresh_token"]  # not rotated: still good
        self._store(self._token_entry(answer, client, old["token_endpoint"],
                                      old.get("issuer"), old.get("resource"),
                                      _scopes(old.get("scope"))))
        return True

    # -- a new authorization --------------------------------------------------

    def _authorize(self, hint, wanted, status, challenge):
        grant = self.options.get("grant") or "authorization_code"
        if grant == "authorization_code" and not (
                self.options.get("headless") or self.options.get("listen")
                or self.options.get("on_authorize")):
            raise AuthError(
                "the server answered HTTP %d and asks for OAuth authorization%s, and there "
                "is no terminal to ask a person: run `auth login` on one, or give "
                "--oauth-headless, --oauth-listen, --oauth-grant, or a token with "
                "--bearer-env" % (status, "" if not challenge else " (WWW-Authenticate: %s)"
                                  % _flat(_cut(challenge, 200))),
                status=status, www_authenticate=challenge)
        server = self._discover(hint)
        scopes = self._scopes_for(wanted, server, grant, status == 403)
        self.asked = scopes
        form = {"resource": server["resource"]}
        if scopes:
            form["scope"] = " ".join(scopes)
        if grant == "client_credentials":
            client = self._identity(server, grant, None)
            form["grant_type"] = "client_credentials"
            answer = self._token_request("token", server["token_endpoint"], form, client,
                                         server["issuer"])
        elif grant == "jwt-bearer":
            client = self._identity(server, grant, None)
            form.update(grant_type=_GRANT_JWT_BEARER, assertion=self._id_jag(server, scopes))
            answer = self._token_request("token", server["token_endpoint"], form, client,
                                         server["issuer"])
        else:
            answer, client = self._code_grant(server, scopes)
        self._store(self._token_entry(answer, client, server["token_endpoint"],
                                      server["issuer"], server["resource"], scopes))

    @staticmethod
    def _token_entry(answer, client, endpoint, issuer, resource, scopes):
        expires_in = answer.get("expires_in")
        entry = {"client_id": client["client_id"], "issuer": issuer, "resource": resource,
                 "token_endpoint": endpoint, "scope": " ".join(scopes),
                 "access_token": answer["access_token"], "obtained_at": time.time(),
                 "auth_method": client["method"]}
        if isinstance(answer.get("refresh_token"), str) and answer["refresh_token"]:
            entry["refresh_token"] = answer["refresh_token"]
        if isinstance(answer.get("scope"), str):
            entry["granted"] = answer["scope"]
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
            entry["expires_at"] = time.time() + min(max(0, expires_in), _LONGEST_TOKEN)
        return entry

    def _scopes_for(self, wanted, server, grant, step_up):
        """2025-11-25 basic/authorization, "Scope Selection Strategy": the
        challenge's scopes, else the resource's scopes_supported, else none;
        offline_access added where the authorization server lists it (2026-07-28
        basic/authorization, "Refresh Tokens"), and never asked for where not.
        Scopes given replace the first choice; a step-up adds to them."""
        if self.options.get("scope") is not None:
            given = _scopes(self.options["scope"])
            return given + [s for s in wanted if s not in given] if step_up else given
        scopes = list(wanted) if wanted else list(server["scopes"])
        supported = server["metadata"].get("scopes_supported")
        offline = isinstance(supported, list) and "offline_access" in supported
        if not offline:
            scopes = [s for s in scopes if s != "offline_access"]
        elif grant == "authorization_code" and scopes and "offline_access" not in scopes:
            scopes.append("offline_access")
        return scopes

    # -- discovery ------------------------------------------------------------

    def _discover(self, hint):
        """The resource, its authorization server's issuer and metadata, and the
        scopes it supports (2025-11-25 basic/authorization, "Authorization Server
        Discovery"); once a run."""
        if self.server is not None:
            return self.server
        path = _url_path(self.url)
        root = _origin(self.url) + "/.well-known/oauth-protected-resource"
        found = None
        for where in ([hint] if hint else []) + ([root + path] if path else []) + [root]:
            self._check_endpoint("discovery", where, "resource metadata URL")
            status, document = self._http("discovery", "GET", where)[:2]
            if status == 200 and not isinstance(document, dict):
                raise AuthError("OAuth discovery failed: the resource metadata at %s is not a "
                                "JSON object" % _shown_url(where), status=401)
            if status == 200:
                found = document
                break
        if found is None:
            # 2025-03-26 basic/authorization, "Server Metadata Discovery": without
            # resource metadata, the server's origin is the authorization server.
            issuer = _origin(self.url)
            server = {"resource": self.url, "issuer": issuer, "scopes": [],
                      "metadata": self._metadata(issuer, strict=False)}
        else:
            server = self._from_resource(found)
        meta = server["metadata"]
        for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
            if meta.get(key) is not None:
                self._check_endpoint("discovery", meta.get(key), key)
        server["token_endpoint"] = meta["token_endpoint"]
        self.server = server
        return server

    def _from_resource(self, document):
        resource = document.get("resource")
        if not _resource_covers(resource, self.url):
            # RFC 9728 3.3: metadata for another resource is not to be used.
            raise AuthError("OAuth discovery: the server's protected resource metadata is "
                            "for %s, not %s; refused, nothing was sent to its authorization "
                            "server" % (_show(resource), _shown_url(self.url)), status=401)
        servers = document.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise AuthError("OAuth discovery: the server's protected resource metadata names "
                            "no authorization server (authorization_servers)", status=401)
        scopes = document.get("scopes_supported")
        scopes = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else []
        return {"resource": resource, "issuer": servers[0], "scopes": scopes,
                "metadata": self._metadata(servers[0], strict=True)}

    def _metadata(self, issuer, strict):
        """The authorization server's metadata (RFC 8414, OpenID Connect discovery).

        ``strict``: its issuer must be the one asked for (RFC 8414 3.3; 2026-07-28
        authorization-server-discovery); the 2025-03-26 fallback takes the
        document the server's origin serves, whatever issuer it names."""
        self._check_endpoint("discovery", issuer, "issuer")
        wrong = None
        for where in _metadata_urls(issuer):
            status, document = self._http("discovery", "GET", where)[:2]
            if status != 200 or not isinstance(document, dict):
                continue
            named = document.get("issuer")
            if named != issuer and (strict or not isinstance(named, str) or _origin_or_none(
                    named) != _origin(issuer)):
                # 2025-03-26's fallback: a path may differ, the origin may not.
                wrong = named
                continue
            if not isinstance(document.get("token_endpoint"), str):
                raise AuthError("OAuth discovery: the metadata at %s names no token_endpoint"
                                % _shown_url(where), status=401)
            return document
        if strict:
            raise AuthError("OAuth discovery: no metadata for the authorization server %s%s"
                            % (_shown_url(issuer), "" if wrong is None else
                               " (one names the issuer %s instead)" % _show(wrong)),
                            status=401)
        # 2025-03-26 basic/authorization, "Fallbacks for Servers without Metadata Discovery".
        return {"issuer": issuer, "authorization_endpoint": issuer + "/authorize",
                "token_endpoint": issuer + "/token", "registration_endpoint": issuer + "/register",
                "code_challenge_methods_supported": ["S256"]}

    def _check_endpoint(self, step, url, name):
        """An endpoint of the authorization server: http(s), and HTTPS unless the
        MCP server itself is reached over plain HTTP (2025-11-25 basic/authorization,
        "Communication Security")."""
        from urllib.parse import urlsplit  # lazy: HTTP only
        try:
            parts = urlsplit(url)
            parts.port  # a bad port raises here
        except (ValueError, TypeError, AttributeError):
            parts = None
        scheme = parts.scheme.lower() if parts is not None else ""
        if scheme not in ("http", "https") or not parts.hostname or re.search(
                r"[\x00-\x20\x7f]", url):
            raise AuthError("OAuth %s: the %s %s is not an http(s) URL" % (
                step, name, _show(url)), status=401)
        if scheme == "http" and self.url.lower().startswith("https:"):
            raise AuthError("OAuth %s: the %s %s is not HTTPS; tokens go over HTTPS only"
                            % (step, name, _shown_url(url)), status=401)

    # -- the client's identity ------------------------------------------------

    def _identity(self, server, grant, redirect, scopes=()):
        """Who we are to the authorization server, in the spec's order
        (2025-11-25 basic/authorization, "Client Registration Approaches"):
        pre-registered, a client ID metadata document, dynamic registration
        (with the scopes the authorization request is to ask for)."""
        options, meta = self.options, server["metadata"]
        if options.get("client_id"):
            return self._pre_registered(meta)
        if grant != "authorization_code":
            raise AuthError("OAuth registration: --oauth-grant %s needs a client registered "
                            "with the authorization server: give --oauth-client-id" % grant,
                            status=401)
        document = options.get("client_metadata_url")
        if document and meta.get("client_id_metadata_document_supported") is True:
            return {"client_id": document, "method": "none", "kind": "metadata document"}
        known = self._registered(server["issuer"], redirect, scopes)
        if known is not None:
            return known
        if not isinstance(meta.get("registration_endpoint"), str):
            raise AuthError("OAuth registration: the authorization server %s takes neither "
                            "dynamic registration nor %s; give --oauth-client-id (and its "
                            "secret) registered with it" % (
                                _shown_url(server["issuer"]),
                                "the --oauth-client-metadata-url given" if document
                                else "client ID metadata documents"), status=401)
        return self._register(server, redirect, scopes)

    def _pre_registered(self, meta):
        options = self.options
        secret = options.get("client_secret")
        methods = meta.get("token_endpoint_auth_methods_supported")
        methods = methods if isinstance(methods, list) else ["client_secret_basic"]
        if options.get("private_key_file"):
            method = "private_key_jwt"
        elif secret is None:
            method = "none"
        elif "client_secret_basic" not in methods and "client_secret_post" in methods:
            method = "client_secret_post"
        else:
            method = "client_secret_basic"
        return {"client_id": options["client_id"], "secret": secret, "method": method,
                "kind": "pre-registered"}

    def _registered(self, issuer, redirect, scopes):
        """A registration made earlier in this run or kept from another, if it
        fits (2026-07-28 client-registration, "Authorization Server Binding"):
        its redirect URI, and every scope asked for now, as a server may hold a
        client to the scopes it registered with (RFC 7591 2, "scope")."""
        known = self.clients.get(issuer)
        if known is None and self.cache is not None:
            known = _dict(self.cache.server(self.url)["clients"].get(issuer))
        known = _dict(known)
        if isinstance(known.get("client_id"), str) and redirect in (
                known.get("redirect_uris") or []) and set(scopes) <= set(
                    _list(known.get("scopes"))):
            self._secret(known.get("secret"))
            return known
        return None

    def _register(self, server, redirect, scopes):
        """RFC 7591 dynamic client registration, as a native app (2026-07-28
        client-registration, "Application Type and Redirect URI Constraints"),
        for the scopes the authorization request asks for."""
        meta = server["metadata"]
        methods = meta.get("token_endpoint_auth_methods_supported")
        methods = methods if isinstance(methods, list) else ["client_secret_basic"]
        asked = next((m for m in ("none", "client_secret_basic", "client_secret_post")
                      if m in methods), "client_secret_basic")
        # Refresh tokens are used when given, so the grant is asked for unless the
        # server lists the grants it takes and that is not one (RFC 8414 2).
        grants = ["authorization_code", "refresh_token"]
        supported = meta.get("grant_types_supported")
        if isinstance(supported, list) and "refresh_token" not in supported:
            grants = ["authorization_code"]
        document = {"client_name": "mcp_invoke", "redirect_uris": [redirect],
                    "grant_types": grants, "response_types": ["code"],
                    "token_endpoint_auth_method": asked, "application_type": "native"}
        if scopes:
            document["scope"] = " ".join(scopes)
        status, answer = self._http("registration", "POST", meta["registration_endpoint"],
                                    document=document)[:2]
        if status not in (200, 201) or not isinstance(_dict(answer).get("client_id"), str):
            raise AuthError(_said("registration", answer, status) if status not in (200, 201)
                            else "OAuth registration failed: the answer (HTTP %d) holds no "
                            "client_id" % status, status=401)
        secret = answer.get("client_secret")
        method = answer.get("token_endpoint_auth_method")
        if not isinstance(method, str):
            method = "client_secret_basic" if isinstance(secret, str) else "none"
        client = {"client_id": answer["client_id"], "method": method, "kind": "registered",
                  "redirect_uris": [redirect], "scopes": list(scopes)}
        if isinstance(secret, str):
            client["secret"] = secret
            self._secret(secret)
        self.clients[server["issuer"]] = client
        if self.cache is not None:
            def change(entry):
                entry["clients"][server["issuer"]] = client
            self.cache.update(self.url, change)
        return client

    def _client_for(self, token):
        """The client a cached token was obtained with, to refresh it."""
        if self.options.get("client_id") == token["client_id"]:
            client = self._pre_registered({})
            client["method"] = token.get("auth_method") or client["method"]
            return client
        if self.cache is not None:
            known = _dict(self.cache.server(self.url)["clients"].get(token.get("issuer")))
            if known.get("client_id") == token["client_id"]:
                self._secret(known.get("secret"))
                return known
        return {"client_id": token["client_id"], "method": "none"}

    def _listener(self):
        """A loopback socket for the browser's redirect (--oauth-listen)."""
        import socket  # lazy: only for --oauth-listen
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
        except OSError as e:
            listener.close()
            raise AuthError("OAuth authorization: cannot listen on 127.0.0.1: %s"
                            % (e.strerror or e), status=401)
        return listener

    # -- grants ---------------------------------------------------------------

    def _code_grant(self, server, scopes):
        """The authorization code grant with PKCE (OAuth 2.1 4.1; RFC 7636), the
        code brought back without a browser here: read from the redirect
        (headless), caught on a loopback listener, or pasted by a person."""
        import secrets  # lazy: OAuth only
        from urllib.parse import urlencode  # lazy: HTTP only
        meta = server["metadata"]
        methods = meta.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            # 2025-11-25 basic/authorization, "Authorization Code Protection".
            raise AuthError("OAuth discovery: the authorization server does not offer PKCE "
                            "with S256 (code_challenge_methods_supported); refused",
                            status=401)
        if not isinstance(meta.get("authorization_endpoint"), str):
            raise AuthError("OAuth discovery: the metadata names no authorization_endpoint",
                            status=401)
        listener = self._listener() if self.options.get("listen") else None
        try:
            redirect = _PASTE_REDIRECT if listener is None else (
                "http://127.0.0.1:%d/callback" % listener.getsockname()[1])
            client = self._identity(server, "authorization_code", redirect, scopes)
            verifier, challenge = _pkce()
            state = secrets.token_urlsafe(24)
            query = [("response_type", "code"), ("client_id", client["client_id"]),
                     ("redirect_uri", redirect), ("code_challenge", challenge),
                     ("code_challenge_method", "S256"), ("state", state),
                     ("resource", server["resource"])]
            if scopes:
                query.append(("scope", " ".join(scopes)))
            endpoint = meta["authorization_endpoint"]
            url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(query)
            back = self._come_back(url, listener, redirect, state)
        finally:
            if listener is not None:
                listener.close()
        code = self._code(back, state, meta, server["issuer"])
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                "code_verifier": verifier, "resource": server["resource"]}
        return self._token_request("token", server["token_endpoint"], form, client,
                                   server["issuer"]), client

    def _come_back(self, url, listener, redirect, state):
        """Where the authorization server sent the browser back to: a URL, or
        what a person pasted (the URL, or the code alone)."""
        from urllib.parse import urlsplit  # lazy: HTTP only
        if self.options.get("headless"):
            status, response, _ = self._exchange("authorization", "GET", url, None, {
                "User-Agent": "mcp_invoke/" + __version__})
            location = response.getheader("Location")
            if status not in (301, 302, 303, 307, 308) or not location:
                raise AuthError("OAuth authorization: the authorization server answered "
                                "HTTP %d, not a redirect with the code; it wants a person: "
                                "run `auth login` on a terminal, or use --oauth-listen"
                                % status, status=401)
            if urlsplit(location)[:3] != urlsplit(redirect)[:3]:
                raise AuthError("OAuth authorization: the authorization server redirected "
                                "to %s, not to our redirect URI; refused" % _shown_url(
                                    location), status=401)
            return location
        on_authorize = self.options.get("on_authorize")
        start = time.monotonic()
        try:
            if listener is not None:
                if on_authorize is not None:
                    on_authorize(url, True)
                return _await_redirect(listener, _Deadline(
                    _PERSON_WAIT, "OAuth authorization: the browser did not come back within "
                    "%gs" % _PERSON_WAIT), state)
            pasted = on_authorize(url, False)
        finally:  # a person's time is not the servers'
            if self.renewal is not None:
                self.renewal.at += time.monotonic() - start
        if not isinstance(pasted, str) or not pasted.strip():
            raise AuthError("OAuth authorization: nothing was pasted", status=401)
        return pasted.strip()

    @staticmethod
    def _code(back, state, meta, issuer):
        """The code in the redirect, once its state and issuer are checked
        (OAuth 2.1 7.12; RFC 9207 2.4, 2026-07-28 basic/authorization,
        "Authorization Response Validation")."""
        from urllib.parse import parse_qs, urlsplit  # lazy: HTTP only
        if "=" not in back and "?" not in back and "/" not in back:
            return back  # the code alone: its state cannot be checked, the person saw it
        query = parse_qs(urlsplit(back).query or urlsplit(back).fragment)
        said = {key: values[0] for key, values in query.items()}
        if "iss" in said and said["iss"] != issuer or (
                "iss" not in said and meta.get("authorization_response_iss_parameter_supported")
                is True):
            raise AuthError("OAuth authorization: the answer is not from the authorization "
                            "server asked (iss %s, not %s); refused" % (
                                _show(said.get("iss")), _show(issuer)), status=401)
        if said.get("state") != state:
            raise AuthError("OAuth authorization: the answer's state does not match the "
                            "request's; refused", status=401)
        if "error" in said:
            raise AuthError(_said("authorization", said, 400), status=401)
        if not said.get("code"):
            raise AuthError("OAuth authorization: the redirect carries no code", status=401)
        return said["code"]

    def _id_jag(self, server, scopes):
        """An identity assertion grant for the authorization server, from the
        enterprise identity provider: RFC 8693 token exchange of an ID token
        (SEP-990, enterprise-managed authorization)."""
        options = self.options
        endpoint = options.get("idp_token_endpoint")
        if not endpoint or not options.get("idp_id_token"):
            raise AuthError("OAuth token: --oauth-grant jwt-bearer needs "
                            "--oauth-idp-token-endpoint and an ID token "
                            "(--oauth-idp-id-token or --oauth-idp-id-token-env)", status=401)
        self._check_endpoint("token", endpoint, "identity provider's token endpoint")
        form = {"grant_type": _GRANT_TOKEN_EXCHANGE, "requested_token_type": _TOKEN_TYPE_ID_JAG,
                "audience": server["issuer"], "resource": server["resource"],
                "subject_token": options["idp_id_token"],
                "subject_token_type": _TOKEN_TYPE_ID_TOKEN}
        if scopes:
            form["scope"] = " ".join(scopes)
        if options.get("idp_client_id"):
            form["client_id"] = options["idp_client_id"]
        status, answer = self._http("token exchange", "POST", endpoint, form=form)[:2]
        jag = _dict(answer).get("access_token")
        if status != 200 or not isinstance(jag, str) or not jag:
            raise AuthError(_said("token exchange", answer, status), status=401)
        if answer.get("issued_token_type") not in (None, _TOKEN_TYPE_ID_JAG):
            raise AuthError("OAuth token exchange: the identity provider issued %s, not an "
                            "ID-JAG" % _show(answer.get("issued_token_type")), status=401)
        self._secret(jag)
        return jag

    def _token_request(self, step, endpoint, form, client, issuer):
        """A token endpoint request, the client authenticated as it registered
        (RFC 6749 2.3.1; RFC 7523 2.2 for private_key_jwt); the token answer."""
        from urllib.parse import quote_plus  # lazy: HTTP only
        form, headers = dict(form), {}
        method = client.get("method")
        if method == "client_secret_basic" and client.get("secret") is not None:
            # The client_id in the form too (RFC 6749 3.2.1 allows it): some
            # servers read it only from there.
            headers["Authorization"] = _basic(quote_plus(client["client_id"]),
                                              quote_plus(client["secret"]))
            form["client_id"] = client["client_id"]
        elif method == "client_secret_post" and client.get("secret") is not None:
            form.update(client_id=client["client_id"], client_secret=client["secret"])
        elif method == "private_key_jwt":
            form.update(client_id=client["client_id"], client_assertion_type=_ASSERTION_TYPE_JWT,
                        client_assertion=self._assertion(client["client_id"], issuer))
        else:
            form["client_id"] = client["client_id"]
        if headers.get("Authorization"):
            self._secret(headers["Authorization"].partition(" ")[2])  # as a server may echo it
        status, answer = self._http(step, "POST", endpoint, form=form, headers=headers)[:2]
        token = _dict(answer).get("access_token")
        if status != 200 or not isinstance(token, str) or not token:
            raise AuthError(_said(step, answer, status) if status != 200 else (
                "OAuth %s failed: the answer (HTTP 200) holds no access_token" % step),
                status=401)
        if not re.match(r"[\x21-\x7e]+\Z", token):
            # RFC 6750 2.1: a b64token; anything else cannot go in a header.
            raise AuthError("OAuth %s failed: the access token holds characters an "
                            "Authorization header cannot carry" % step, status=401)
        if str(answer.get("token_type", "")).lower() not in ("bearer", "dpop") and \
                answer.get("token_type") is not None:
            raise AuthError("OAuth %s: the token is of type %s, not Bearer" % (
                step, _show(answer.get("token_type"))), status=401)
        self._secret(token, answer.get("refresh_token"))
        return answer

    def _assertion(self, client_id, issuer):
        """A client assertion JWT (RFC 7523 3): iss and sub the client, aud the
        authorization server's issuer, short-lived, with a unique jti."""
        import secrets  # lazy: OAuth only
        path = self.options["private_key_file"]
        key = _private_key(_read_file(path, "the private key " + os.fsdecode(path), "latin-1",
                                      wait=2.0))
        alg = self.options.get("signing_alg") or _key_alg(key)
        now = int(time.time())
        claims = {"iss": client_id, "sub": client_id, "aud": issuer, "iat": now,
                  "exp": now + _ASSERTION_LIFETIME, "jti": secrets.token_urlsafe(16)}
        try:
            return _sign_jwt(key, claims, alg)
        except ValueError as e:
            raise UsageError("--oauth-private-key-file %s: %s" % (path, e))

    # -- HTTP to authorization servers ----------------------------------------

    def _renewal(self):
        return _Deadline(self.cap, "the authorization took longer than its time limit of "
                         "%gs" % self.cap)

    def _step(self, step):
        """The _Deadline of one request to an authorization server: its timeout,
        within what is left of the renewal's time limit (--max-time)."""
        why = "no complete answer within %gs" % self.timeout
        deadline = (_Deadline(self.timeout, why) if self.renewal is None
                    else self.renewal.within(self.timeout, why))
        if deadline.passed():
            raise AuthError("OAuth %s: %s" % (step, deadline.why), status=401)
        return deadline

    def _http(self, step, method, url, form=None, document=None, headers=None):
        """One request to an authorization server: (status, the JSON answer or None,
        the headers). A GET without credentials follows redirects (public
        metadata), nothing else does: a secret never goes where it was not sent."""
        from urllib.parse import urlencode, urljoin  # lazy: HTTP only
        sent = {"Accept": "application/json", "User-Agent": "mcp_invoke/" + __version__}
        body = None
        if form is not None:
            body = urlencode(form).encode("utf-8")
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        elif document is not None:
            body = json.dumps(document).encode("utf-8")
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        follow = method == "GET" and not headers
        for _ in range(_MAX_REDIRECTS + 1):
            status, response, data = self._exchange(step, method, url, body, sent)
            location = response.getheader("Location")
            if not (follow and status in (301, 302, 303, 307, 308) and location):
                break
            url = urljoin(url, location)
            self._check_endpoint(step, url, "redirect target")
        try:
            answer = _json_loads(data.decode("utf-8")) if data else None
        except ValueError:  # not JSON, or JSON nested past reading
            answer = None
        return status, answer, response

    def _exchange(self, step, method, url, body, headers):
        """(status, response, body) of one HTTP request, all of it within the
        step's _Deadline: one timer hangs the connection up when it passes, so
        a server that dribbles its headers or body cannot stretch it."""
        import http.client  # lazy: HTTP only
        import threading  # lazy: HTTP only
        from urllib.parse import urlsplit  # lazy: HTTP only
        deadline = self._step(step)
        parts = urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
        target = _ascii_target(parts)
        proxy = _proxy_for(scheme, host, self.environ)
        expired, response = [], None
        conn = _http_connection(scheme, host, port or (443 if scheme == "https" else 80),
                                proxy, self.context, deadline, lambda: bool(expired),
                                blocking=True)
        if proxy is not None and scheme != "https":  # a plain proxy takes the whole URL
            target = "http://%s%s" % (parts.netloc.rpartition("@")[2], target)
            headers = dict(headers, **dict(_proxy_auth(proxy)))
        watchdog = threading.Timer(deadline.left(), lambda: (expired.append(True),
                                                             _hang_up(conn)))
        watchdog.daemon = True
        watchdog.start()
        try:
            conn.request(method, target, body, headers)
            response = conn.getresponse()
            data = response.read(_OAUTH_MAX_BYTES + 1)
            if len(data) > _OAUTH_MAX_BYTES:
                raise ValueError("it is larger than %d bytes" % _OAUTH_MAX_BYTES)
            if expired:  # cut short by the timer: what came is not the answer
                raise ValueError("timed out")
            return response.status, response, data
        except (OSError, ValueError, http.client.HTTPException) as e:
            # Which limit ran out is the deadline's to say, whatever noticed it.
            late = bool(expired) or deadline.passed()
            if late and deadline is self.renewal:
                raise AuthError("OAuth %s: %s" % (step, deadline.why), status=401)
            why = deadline.why if late else re.sub(
                r"\s*\(_ssl\.c:[0-9]+\)", "", getattr(e, "strerror", None) or str(e)
                or type(e).__name__)
            raise AuthError("OAuth %s: %s %s: %s" % (
                step, "the answer broke off from" if response is not None
                else "no answer from" if conn.mcp_sock is not None else "cannot reach",
                _shown_url(url), why), status=401)
        finally:
            watchdog.cancel()
            _close_conn(conn)


def _await_redirect(listener, deadline, state):
    """The first /callback request to the loopback listener that carries our
    ``state``, as a URL (RFC 8252 7.3); it is answered with a page saying so.
    Others (a stray page, another program guessing the port) are turned away,
    and every connection is read as it comes: an idle one delays nobody."""
    import select  # lazy: only for --oauth-listen
    reading = {}  # connection -> [bytes so far, until when it may send them]
    try:
        while True:
            now = time.monotonic()
            if now >= deadline.at:
                raise AuthError(deadline.why, status=401)
            for conn in [c for c, (_, until) in reading.items() if now >= until]:
                reading.pop(conn).close()
            for sock in select.select([listener] + list(reading), [], [],
                                      min(deadline.at - now, 0.5))[0]:
                if sock is listener:
                    conn, _ = listener.accept()
                    reading[conn] = [b"", now + 5.0]  # for its request line and headers
                    continue
                try:
                    part = sock.recv(4096)
                except OSError:
                    part = b""
                data = reading[sock][0] = reading[sock][0] + part
                if part and b"\r\n\r\n" not in data and len(data) < 16384:
                    continue
                reading.pop(sock)
                found = _answer_callback(sock, data, state)
                if found:
                    return found
    finally:
        for conn in reading:
            conn.close()


def _answer_callback(conn, data, state):
    """Answer one request to the listener; the URL if it is our redirect."""
    from urllib.parse import parse_qs, urlsplit  # lazy: HTTP only
    target = data.split(b"\r\n", 1)[0].split(b" ")
    path = target[1].decode("latin-1") if len(target) >= 2 else ""
    found = urlsplit(path).path == "/callback" and parse_qs(
        urlsplit(path).query).get("state") == [state]
    page = (b"mcp_invoke: authorization received; you may close this window.\n"
            if found else b"not the answer mcp_invoke is waiting for\n")
    try:
        conn.settimeout(1.0)
        conn.sendall(b"HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (
                         b"200 OK" if found else b"404 Not Found", len(page), page))
    except OSError:
        pass
    finally:
        conn.close()
    return "http://127.0.0.1" + path if found else None


# ---------------------------------------------------------------------------
# Transports: JWT signing, ES256 and RS256 from a PEM private key (client assertions)
# ---------------------------------------------------------------------------

# Python's integers are not constant-time: fine for a client signing a few
# assertions of its own, not for a signing service open to attackers.

# NIST P-256 domain parameters (FIPS 186-4 §D.1.2.3; a = -3 mod p).
_P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_P256_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
           0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)
_OID_EC_PUBLIC_KEY = "1.2.840.10045.2.1"      # id-ecPublicKey (RFC 5480 §2.1.1)
_OID_P256 = "1.2.840.10045.3.1.7"             # secp256r1 / prime256v1
_OID_RSA = "1.2.840.113549.1.1.1"             # rsaEncryption (RFC 8017 §A.1)
_OID_NAMES = {"1.3.132.0.34": "P-384", "1.3.132.0.35": "P-521",
              "1.3.132.0.10": "secp256k1", "1.3.101.112": "Ed25519",
              "1.3.101.113": "Ed448", "1.3.101.110": "X25519",
              "1.2.840.10040.4.1": "DSA", "1.2.840.113549.1.1.10": "RSASSA-PSS"}
# DER DigestInfo prefix for SHA-256 (RFC 8017 §9.2 note 1).
_SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


def _der_items(data):
    """Split DER bytes into a list of (tag, value) pairs (X.690 §8.1); ValueError if malformed."""
    items, i, end = [], 0, len(data)
    while i < end:
        if end - i < 2:
            raise ValueError("malformed DER: truncated tag/length")
        tag, length = data[i], data[i + 1]
        i += 2
        if tag & 0x1F == 0x1F:
            raise ValueError("malformed DER: multi-byte tags are not supported")
        if length == 0x80:
            raise ValueError("malformed DER: indefinite length is not allowed")
        if length > 0x80:
            count = length & 0x7F
            if count > 4 or end - i < count:
                raise ValueError("malformed DER: bad long-form length")
            length = int.from_bytes(data[i:i + count], "big")
            i += count
        if end - i < length:
            raise ValueError("malformed DER: value runs past the end of the data")
        items.append((tag, data[i:i + length]))
        i += length
    return items


def _der_one(data, tag, what):
    """Return the value of the single TLV in data, which must carry `tag`."""
    items = _der_items(data)
    if len(items) != 1 or items[0][0] != tag:
        raise ValueError("malformed DER: expected %s" % what)
    return items[0][1]


def _der_int(item):
    """Decode a non-negative DER INTEGER from a (tag, value) pair."""
    tag, value = item
    if tag != 0x02 or not value or value[0] & 0x80:
        raise ValueError("malformed DER: expected a non-negative INTEGER")
    return int.from_bytes(value, "big")


def _der_oid(item):
    """Decode a DER OBJECT IDENTIFIER to dotted text (X.690 §8.19)."""
    tag, value = item
    if tag != 0x06 or not value or value[-1] & 0x80:
        raise ValueError("malformed DER: expected an OBJECT IDENTIFIER")
    arcs, acc = [], 0
    for byte in value:
        acc = (acc << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(acc)
            acc = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(str(a) for a in [first, arcs[0] - 40 * first] + arcs[1:])


def _oid_label(oid):
    """'1.3.132.0.34 (P-384)' for error messages."""
    return "%s (%s)" % (oid, _OID_NAMES[oid]) if oid in _OID_NAMES else oid


def _pem_blocks(text):
    """[(label, header lines, base64 lines)] for each PEM block (RFC 7468 2, RFC 1421 headers)."""
    blocks, label, headers, body = [], None, [], []
    for line in text.splitlines():
        line = line.strip()
        if label is None:
            if line.startswith("-----BEGIN ") and line.endswith("-----"):
                label, headers, body = line[11:-5], [], []
        elif line == "-----END %s-----" % label:
            blocks.append((label, headers, body))
            label = None
        elif ":" in line:
            headers.append(line)
        elif line:
            body.append(line)
    return blocks


def _private_key(pem_text):
    """An unencrypted PEM private key: ("EC", d) for P-256, or
    ("RSA", n, e, d, p, q, dp, dq, qinv); ValueError naming what is wrong."""
    if isinstance(pem_text, bytes):
        pem_text = pem_text.decode("ascii", "replace")
    blocks = _pem_blocks(pem_text)
    for label, headers, _ in blocks:
        if "ENCRYPTED" in label or any("ENCRYPTED" in h.upper() for h in headers):
            raise ValueError("the private key is encrypted (%s); it must be unencrypted, "
                             "e.g. decrypt it with: openssl pkey -in KEY.pem -out PLAIN.pem"
                             % label)
    keys = [b for b in blocks if b[0] in ("PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY")]
    if not keys:
        found = ", ".join(b[0] for b in blocks)
        raise ValueError("no private key PEM block found"
                         + (" (found: %s)" % found if found else ""))
    label, _, body = keys[0]
    try:
        import base64  # lazy: OAuth only
        der = base64.b64decode("".join(body).encode("ascii"), validate=True)
    except (ValueError, UnicodeError):
        raise ValueError("the %s PEM block is not valid base64" % label) from None
    if label == "RSA PRIVATE KEY":
        return _rsa_pkcs1(der)
    if label == "EC PRIVATE KEY":
        return _ec_sec1(der, None)
    return _pkcs8(der)


def _pkcs8(der):
    """PKCS#8 PrivateKeyInfo / OneAsymmetricKey (RFC 5208 §5, RFC 5958 §2)."""
    items = _der_items(_der_one(der, 0x30, "a PKCS#8 PrivateKeyInfo SEQUENCE"))
    if len(items) < 3 or items[1][0] != 0x30 or items[2][0] != 0x04:
        raise ValueError("malformed DER: bad PKCS#8 PrivateKeyInfo")
    if _der_int(items[0]) not in (0, 1):
        raise ValueError("unsupported PKCS#8 version")
    alg = _der_items(items[1][1])
    if not alg:
        raise ValueError("malformed DER: empty PKCS#8 AlgorithmIdentifier")
    oid = _der_oid(alg[0])
    if oid == _OID_RSA:
        return _rsa_pkcs1(items[2][1])
    if oid == _OID_EC_PUBLIC_KEY:
        if len(alg) < 2 or alg[1][0] != 0x06:   # namedCurve (RFC 5480 §2.1.1)
            raise ValueError("unsupported EC key: explicit curve parameters (need the "
                             "named curve P-256)")
        return _ec_sec1(items[2][1], _der_oid(alg[1]))
    raise ValueError("unsupported private key algorithm OID %s; only EC P-256 (ES256) "
                     "and RSA (RS256) keys are supported" % _oid_label(oid))


def _ec_sec1(der, curve_oid):
    """SEC 1 C.4 / RFC 5915 3 ECPrivateKey; the curve from its [0] parameters or
    the PKCS#8 wrapper."""
    items = _der_items(_der_one(der, 0x30, "an ECPrivateKey SEQUENCE"))
    if len(items) < 2 or _der_int(items[0]) != 1 or items[1][0] != 0x04:
        raise ValueError("malformed DER: bad ECPrivateKey")
    for tag, value in items[2:]:
        if tag == 0xA0:                          # [0] ECParameters
            params = _der_items(value)
            if len(params) != 1 or params[0][0] != 0x06:
                raise ValueError("unsupported EC key: explicit curve parameters (need the "
                                 "named curve P-256)")
            oid = _der_oid(params[0])
            if curve_oid is not None and oid != curve_oid:
                raise ValueError("malformed EC key: conflicting curve OIDs")
            curve_oid = oid
    if curve_oid is None:
        raise ValueError("EC key does not name its curve")
    if curve_oid != _OID_P256:
        raise ValueError("unsupported EC curve OID %s; ES256 needs P-256 (%s)"
                         % (_oid_label(curve_oid), _OID_P256))
    d = int.from_bytes(items[1][1], "big")
    if len(items[1][1]) > 32 or not 1 <= d < _P256_N:
        raise ValueError("invalid P-256 private key value")
    return ("EC", d)


def _rsa_pkcs1(der):
    """PKCS#1 RSAPrivateKey (RFC 8017 §A.1.2), two-prime only."""
    items = _der_items(_der_one(der, 0x30, "an RSAPrivateKey SEQUENCE"))
    if len(items) < 9:
        raise ValueError("malformed DER: bad RSAPrivateKey")
    version, n, e, d, p, q, dp, dq, qinv = [_der_int(item) for item in items[:9]]
    if version != 0:
        raise ValueError("unsupported RSA key: multi-prime keys are not supported")
    if n.bit_length() < 2048:                    # RFC 7518 §3.3: 2048 bits or larger MUST be used
        raise ValueError("RSA key is %d bits; RS256 requires at least 2048" % n.bit_length())
    if not (1 < e < n and 1 < d < n):
        raise ValueError("invalid RSA private key values")
    return ("RSA", n, e, d, p, q, dp, dq, qinv)


def _key_alg(key):
    """JWS 'alg' for a parsed key (RFC 7518 §3.1)."""
    return "ES256" if key[0] == "EC" else "RS256"


def _b64json(obj):
    """Compact JSON, UTF-8, base64url (RFC 7519 §7.1 steps 1-2)."""
    return _b64url(json.dumps(obj, separators=(",", ":")).encode("utf-8"))


def _sign_jwt(key, claims, alg=None, kid=None):
    """Return a compact-serialised JWS (RFC 7515 §7.1) over the JSON claims."""
    expected = _key_alg(key)
    alg = alg or expected
    if alg != expected:
        raise ValueError("alg %s does not match the %s key (use %s)" % (alg, key[0], expected))
    header = {"alg": alg, "typ": "JWT"}
    if kid is not None:
        header["kid"] = kid
    signing_input = _b64json(header) + "." + _b64json(claims)
    data = signing_input.encode("ascii")
    sig = _ecdsa_sign(key[1], data) if key[0] == "EC" else _rsa_sign(key, data)
    return signing_input + "." + _b64url(sig)


def _rsa_sign(key, message):
    """RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2.1, EMSA §9.2), CRT + fault check."""
    _, n, e, d, p, q, dp, dq, qinv = key
    k = (n.bit_length() + 7) // 8
    t = _SHA256_DIGEST_INFO + _sha256()(message).digest()
    m = int.from_bytes(b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t, "big")
    if p * q == n and p > 1 and q > 1:           # RSASP1 via CRT (RFC 8017 §5.1.2 step 2.b)
        s1, s2 = pow(m, dp, p), pow(m, dq, q)
        s = s2 + q * (((s1 - s2) * qinv) % p)
    else:
        s = pow(m, d, n)
    if pow(s, e, n) != m:                        # guards against CRT faults / bad key parts
        raise ValueError("RSA signature self-check failed; the key is inconsistent")
    return s.to_bytes(k, "big")


def _ec_double(pt):
    """Jacobian point doubling for a = -3 (dbl-2001-b); infinity is Z = 0."""
    x, y, z = pt
    p = _P256_P
    delta, gamma = z * z % p, y * y % p
    beta = x * gamma % p
    alpha = 3 * (x - delta) * (x + delta) % p
    x3 = (alpha * alpha - 8 * beta) % p
    z3 = ((y + z) * (y + z) - gamma - delta) % p
    y3 = (alpha * (4 * beta - x3) - 8 * gamma * gamma) % p
    return (x3, y3, z3)


def _ec_add_affine(pt, q):
    """Jacobian + affine point addition (madd); caller guarantees pt != +-q and pt != infinity."""
    x1, y1, z1 = pt
    p = _P256_P
    zz = z1 * z1 % p
    h = (q[0] * zz - x1) % p
    r = (q[1] * zz * z1 - y1) % p
    if h == 0:
        raise ValueError("internal error: degenerate EC point addition")
    hh = h * h % p
    hhh, v = h * hh % p, x1 * hh % p
    x3 = (r * r - hhh - 2 * v) % p
    return (x3, (r * (v - x3) - y1 * hhh) % p, z1 * h % p)


def _ec_mul(k):
    """Affine k*G for 1 <= k < n by left-to-right double-and-add in Jacobian coordinates."""
    pt = (_P256_G[0], _P256_G[1], 1)
    for bit in bin(k)[3:]:                       # intermediate multiples stay in [2, n-2]
        pt = _ec_double(pt)
        if bit == "1":
            pt = _ec_add_affine(pt, _P256_G)
    zinv = pow(pt[2], _P256_P - 2, _P256_P)      # Fermat inverse, p is prime
    return (pt[0] * zinv * zinv % _P256_P, pt[1] * zinv * zinv * zinv % _P256_P)


def _rfc6979_k(d, h1):
    """Yield deterministic nonces k (RFC 6979 §3.2, HMAC-SHA256, qlen = hlen = 256)."""
    import hashlib  # lazy: OAuth only
    import hmac  # lazy: OAuth only
    x = d.to_bytes(32, "big")
    h1o = (int.from_bytes(h1, "big") % _P256_N).to_bytes(32, "big")   # bits2octets(h1)

    def hm(key, data):
        return hmac.new(key, data, hashlib.sha256).digest()
    v, k = b"\x01" * 32, b"\x00" * 32
    k = hm(k, v + b"\x00" + x + h1o)
    v = hm(k, v)
    k = hm(k, v + b"\x01" + x + h1o)
    v = hm(k, v)
    while True:
        v = hm(k, v)                             # one HMAC block = qlen bits
        candidate = int.from_bytes(v, "big")
        if 1 <= candidate < _P256_N:
            yield candidate
        k = hm(k, v + b"\x00")
        v = hm(k, v)


def _ecdsa_sign(d, message):
    """ECDSA P-256/SHA-256 (FIPS 186-4 §6.4, SEC 1 §4.1.3) -> 64-byte r||s (RFC 7518 §3.4)."""
    h1 = _sha256()(message).digest()
    e = int.from_bytes(h1, "big")
    for k in _rfc6979_k(d, h1):
        r = _ec_mul(k)[0] % _P256_N
        s = pow(k, _P256_N - 2, _P256_N) * (e + r * d) % _P256_N
        if r and s:                              # else retry with the next k (RFC 6979 §3.4)
            return r.to_bytes(32, "big") + s.to_bytes(32, "big")


# ---------------------------------------------------------------------------
# Transports: a keep-alive session, reached over its endpoint
# ---------------------------------------------------------------------------

# The session transport: a keep-alive session of the command line (see
# Sessions) holds the server, settled; this reaches it over its endpoint,
# one JSON line per message, where the session maps our ids to its own. The
# session answers the server's questions itself, with its own policies.

# A session's name: a file name, and a word in a shell.
_SESSION_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"
# How long a session may take to greet a client: its socket thread does so at once.
_SESSION_HELLO = 5.0
# Bytes read from what answers at a session's endpoint before it proved it is
# the session (where it must): its greeting is far smaller.
_HELLO_MAX = 1024 * 1024


# Where a session is reached, so that only its user's processes reach it.
# POSIX: a Unix socket, NAME.sock, in a directory only the user may enter
# ($XDG_RUNTIME_DIR/mcp_invoke, else mcp_invoke-UID in the temp directory).
# Windows, which has no Unix sockets in every Python: a loopback TCP socket
# and a key of 256 random bits, both in NAME.session, a file under
# %LOCALAPPDATA%\mcp_invoke\sessions (the user's alone by its ACL); the
# client's first line is the key, and a connection that does not give it is
# closed before the session says anything. _reach_session gives a connected socket
# (FileNotFoundError: no session; ConnectionRefusedError: a stale endpoint).
if _WINDOWS:
    _ENDPOINT_SUFFIX, _ENDPOINT_KIND = ".session", "an endpoint file"
    _ENDPOINT_PATH_MAX = 32767

    def _device_name(name):
        """Whether ``name`` is one Windows keeps for a device, whatever follows a dot."""
        return bool(re.match(r"(?i)(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?\Z", name))

    def _session_dir(environ, create=False):
        path = os.path.join(_state_home(environ), "sessions")
        try:
            if create:
                _private_dir(path)
            elif _is_link(os.lstat(path)):
                raise _refused_link(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise UsageError("cannot use the sessions directory %s: %s"
                             % (path, e.strerror or e))
        return path

    def _is_endpoint(info):
        return info.st_mode & 0o170000 == 0o100000

    def _endpoint(path):
        """(port, key) of the endpoint file ``path``; FileNotFoundError if
        there is none, ConnectionRefusedError if it is not one."""
        data = _read_kept(path)
        if data is None:
            if not os.path.lexists(path):
                raise FileNotFoundError(errno.ENOENT, "no such session", path)
            raise ConnectionRefusedError(errno.ECONNREFUSED, "unreadable", path)
        try:
            said = _dict(_json_loads(data.decode("utf-8")))
        except (ValueError, RecursionError):
            said = {}
        port, key = said.get("port"), said.get("key")
        if not (isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536
                and isinstance(key, str) and re.match(r"[0-9a-f]{64}\Z", key)):
            raise ConnectionRefusedError(errno.ECONNREFUSED, "not an endpoint", path)
        return port, key

    def _reach_session(path):
        import _socket  # lazy: sessions only
        import binascii
        port, key = _endpoint(path)
        nonce = binascii.hexlify(os.urandom(16)).decode("ascii")
        sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        try:
            sock.settimeout(_SESSION_HELLO)
            sock.connect(("127.0.0.1", port))
            sock.sendall(_encode({"session": "key", "nonce": nonce,
                                  "mac": _session_mac(key, "client", nonce)}))
        except BaseException:
            sock.close()
            raise
        return sock, _session_mac(key, "session", nonce)

    def _session_mac(key, who, nonce):
        """What only a holder of the key can say of ``nonce``: HMAC-SHA256."""
        import hmac  # lazy: sessions on Windows only
        import hashlib
        return hmac.new(key.encode("ascii"), ("%s:%s" % (who, nonce)).encode("utf-8"),
                        hashlib.sha256).hexdigest()

    def _lock_directory(directory):
        fd = _open_file(os.path.join(directory, ".lock"), os.O_RDWR | os.O_CREAT, 0o600,
                        follow=False)
        while True:
            try:
                _try_lock(fd)
                return fd
            except OSError:
                time.sleep(0.01)
else:
    _ENDPOINT_SUFFIX, _ENDPOINT_KIND = ".sock", "a socket"

    def _device_name(name):
        return False
    _ENDPOINT_PATH_MAX = 103  # a Unix socket's (sun_path is 104 bytes on macOS and the BSDs)

    def _session_dir(environ, create=False):
        """It must be this user's, and no one else's to write: whoever could
        write it could stand in for a session."""
        runtime = environ.get("XDG_RUNTIME_DIR")
        if runtime and os.path.isabs(runtime):  # a relative one is ignored (XDG base dirs)
            path = os.path.join(runtime, "mcp_invoke")
        else:
            import tempfile  # lazy: sessions only
            path = os.path.join(tempfile.gettempdir(), "mcp_invoke-%d" % os.getuid())
        try:
            if create:
                _private_dir(path, narrow=False)  # narrowed below, once it is known ours
            info = os.lstat(path)
        except FileNotFoundError:
            return path
        except OSError as e:
            raise UsageError("cannot use the sessions directory %s: %s"
                             % (path, e.strerror or e))
        if info.st_mode & 0o170000 != 0o040000 or not _yours(info):
            raise UsageError("the sessions directory %s is not a directory of this user's "
                             "that only it may write; remove it, or set XDG_RUNTIME_DIR"
                             % path)
        if create and info.st_mode & 0o077:
            os.chmod(path, 0o700)
        return path

    def _is_endpoint(info):
        return info.st_mode & 0o170000 == 0o140000  # a socket

    def _reach_session(path):
        import _socket  # lazy: sessions only
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except BaseException:
            sock.close()
            raise
        return sock, None  # the directory, not a proof, says it is the session

    def _lock_directory(directory):
        import fcntl  # lazy: sessions and tasks only
        fd = os.open(directory, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd


def _session_path(name, environ, create=False):
    """The endpoint of session ``name``; UsageError for a name that cannot be one."""
    if not isinstance(name, str) or not re.match(_SESSION_NAME, name):
        raise UsageError("a session name is up to 64 letters, digits, '.', '_' and '-', "
                         "starting with a letter or digit, not %s" % _arg(name))
    if _device_name(name):
        raise UsageError("%s names a device on Windows, so it cannot name a session" % name)
    path = os.path.join(_session_dir(environ, create), name + _ENDPOINT_SUFFIX)
    if len(os.fsencode(path)) > _ENDPOINT_PATH_MAX:
        raise UsageError("the socket path %s is too long for a Unix socket; set "
                         "XDG_RUNTIME_DIR to a shorter directory" % path)
    return path


def _remove_stale(path):
    """Remove the endpoint at ``path`` if nobody listens on it (its session
    crashed): checked again under the directory's lock, which a starting
    session holds from its check to its listen, so a new one is never taken."""
    with _locked(os.path.dirname(path)):
        if not _listening(path):
            _unlink_endpoint(path)


def _unlink_endpoint(path):
    """Remove ``path`` if it is an endpoint; UsageError if something else is there."""
    if _not_an_endpoint(path) is None:
        _unlink(path)


def _not_an_endpoint(path):
    """UsageError if ``path`` is there and is not a session's endpoint itself (a
    symlink, a directory, another kind of file); None if it is one, False if
    nothing is there."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if _is_link(info) or not _is_endpoint(info):
        raise UsageError("%s is not %s, so not a session's; remove it yourself"
                         % (path, _ENDPOINT_KIND))
    return None


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass  # gone already


def _listening(path):
    """True if a session listens at the endpoint ``path``."""
    try:
        _reach_session(path)[0].close()
        return True
    except OSError:
        return False


class _locked(object):
    """A directory, locked while the block runs (POSIX: flock on it; Windows:
    a lock on its .lock file)."""

    def __init__(self, directory):
        self.directory = directory

    def __enter__(self):
        self.fd = _lock_directory(self.directory)

    def __exit__(self, *exc):
        os.close(self.fd)  # and the lock with it


# The status an error travels between a session and its clients with, and back.
_ERRORS_BY_EXIT = {1: MCPError, 2: UsageError, 4: ProtocolError, 5: ConnectionLost,
                   6: AuthError, 124: RequestTimeout, 126: LaunchError, 127: CommandNotFound}


def _error_data(error):
    """An MCPError as a session sends it to a client."""
    data = {"exit": error.exit_code, "message": error.message, "method": error.method,
            "stderr": error.stderr_tail}
    if isinstance(error, ProtocolError) and isinstance(error.result, dict):
        data["result"] = error.result
    if isinstance(error, ServerError):
        data.update(code=error.code, data=error.data)
    return data


def _error_from(data):
    """The MCPError a session sent, as its client raises it."""
    data = _dict(data)
    cls = _ERRORS_BY_EXIT.get(data.get("exit"), ConnectionLost)
    message = data.get("message")
    method = data.get("method")
    message = message if isinstance(message, str) else "the session failed"
    method = method if isinstance(method, str) else None
    if data.get("exit") == ServerError.exit_code:  # a server's error at session start
        code = data.get("code")
        return ServerError(message, method, code if isinstance(code, int) else None,
                           data.get("data"))
    error = cls(message, method)
    stderr = data.get("stderr")
    error.stderr_tail = stderr if isinstance(stderr, str) else ""
    if cls is ProtocolError and isinstance(data.get("result"), dict):
        error.result = data["result"]
    return error


class _SessionTransport(_Transport):
    """A keep-alive session's server, over the session's Unix socket.

    The session greets each client with the server as it settled it (era,
    version, handshake; see ``negotiated``), so nothing is spawned and no
    handshake is made. Requests go with our ids, answers come back with them;
    a request the session could not carry comes back as _Failed, and a
    server that died as the ConnectionLost it died with.
    """

    noise = "ignored a line from the session that is not JSON: %r"

    def __init__(self, name, max_bytes=DEFAULT_MAX_BYTES, environ=None, hello=_SESSION_HELLO):
        self.name = name
        self.hello_wait = hello  # seconds the session may take to greet
        self.path = _session_path(name, os.environ if environ is None else environ)
        self._framer = _Framer(max_bytes)
        self._sock = self._sel = None
        self._outq = collections.deque()
        self._out_pos = 0
        self._unsure = False  # see _flush
        self.held = False
        self._inbox = collections.deque()
        self._failure = None
        self._closed = False
        self._hello = None
        self._proof = None  # what the session's greeting must prove, where it must
        self._eof = False
        self._wake = None  # a _WakePipe: see waker
        self._woken = False
        self.last_words = ""

    @property
    def max_bytes(self):
        return self._framer.max_bytes

    def start(self):
        _not_an_endpoint(self.path)  # a symlink to another session's is not this one
        try:
            self._sock, self._proof = _reach_session(self.path)
        except (FileNotFoundError, NotADirectoryError):
            raise UsageError("no session %s is running (session list shows those that are)"
                             % self.name)
        except ConnectionRefusedError:
            _remove_stale(self.path)
            raise UsageError("session %s is not running: it ended without removing its %s, "
                             "which is now removed" % (self.name, _ENDPOINT_KIND.split(" ", 1)[1]))
        except OSError as e:
            raise UsageError("cannot reach session %s: %s" % (self.name, e.strerror or e))
        self._sock.setblocking(False)
        self._sel, read, write = _new_poll()
        self._events = (read, write)
        self._sel.register(self._sock.fileno(), read)
        deadline = _Deadline(self.hello_wait, "session %s did not answer within %gs (it may "
                             "still be starting its server)" % (self.name, self.hello_wait))
        while self._hello is None:
            self._check_open()
            if deadline.passed():
                raise RequestTimeout(deadline.why, timeout=self.hello_wait)
            if self._poll(deadline.left()):
                self._read()

    def _poll(self, timeout):
        return self._sel.poll(max(0, int(timeout * 1000 + 0.999)))

    def negotiated(self):
        return self._hello

    def waker(self):
        """A _WakePipe in the poll."""
        if self._wake is None:
            self._wake = _WakePipe()
            self._sel.register(self._wake.fds[0], self._events[0])
        return self._wake.wake

    def describe(self):
        return "session %s (%s)" % (self.name, _dict(self._hello).get("transport", "?"))

    def env_names(self):
        return _dict(self._hello).get("env_names")

    def send(self, message, frame, answer=False):
        self._check_open()
        self._outq.append(frame)
        if not self.held:
            self._flush()

    def _stop_writing(self, reason):
        self._outq.clear()
        self._out_pos = 0
        self._unsure = False
        self._failure = self._failure or ConnectionLost(reason)

    def time_limit(self, ident, limit):
        if limit != float("inf"):  # the session answers the server within it, too
            left = max(0.0, limit - time.monotonic())
            self._outq.append(_encode({"session": "limit", "id": ident, "seconds": left}))

    def flush(self):
        self.held = False
        if not self._closed:
            self._flush()

    @_Unsplit.marked  # as _StdioTransport._flush: nothing goes twice
    def _flush(self):
        try:
            if self._unsure:
                self._stop_writing("interrupted while writing to session %s" % self.name)
                return
            self._unsure = True
            while self._outq:
                try:
                    n = self._sock.send(memoryview(self._outq[0])[self._out_pos:])
                except BlockingIOError:
                    break
                except OSError:
                    self._stop_writing("session %s closed the connection" % self.name)
                    break
                self._out_pos += n
                if self._out_pos == len(self._outq[0]):
                    self._outq.popleft()
                    self._out_pos = 0
            if not self._closed and not self._eof:
                read, write = self._events
                self._sel.modify(self._sock.fileno(), read | (write if self._outq else 0))
            self._unsure = False
        finally:
            if _Unsplit.later:
                _Unsplit.release()

    def _check_open(self):
        if self._closed:
            raise ConnectionLost("the connection to session %s is closed" % self.name)
        if self._failure is not None:
            raise self._failure

    def receive(self, deadline):
        if self.held:
            self.flush()
        while not self._inbox:
            self._check_open()
            timeout = deadline.left()
            if timeout <= 0 or self._woken:
                break
            for fd, mask in self._poll(min(timeout, _QUIET_CHECK)):
                if self._wake is not None and fd == self._wake.fds[0]:
                    self._wake.drain()
                    self._woken = True
                    continue
                if mask & self._events[1]:
                    self._flush()
                if mask & self._events[0] and not self._eof:
                    self._read()
        self._woken = False
        return self._inbox

    def _read(self):
        try:
            data = self._sock.recv(_READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self.received += len(data)
        if not data:
            self._sel.unregister(self._sock.fileno())
            self._eof = True
            self._failure = self._failure or ConnectionLost("session %s ended" % self.name)
            return
        if self._hello is None and self._proof is not None and self.received > _HELLO_MAX:
            self._failure = self._failure or self._impostor()  # read no further
            return
        try:
            messages = self._framer.feed(data)
        except ProtocolError as e:
            messages, self._failure = e.messages, e
        for message in messages:
            if isinstance(message, dict) and "session" in message and "jsonrpc" not in message:
                self._said(message)
            else:
                self._inbox.append(message)

    def _impostor(self):
        return UsageError("what answers at session %s's endpoint is not that session (it "
                          "does not know its key): remove %s if no session %s runs"
                          % (self.name, self.path, self.name))

    def _said(self, envelope):
        """What the session itself says: its greeting, a request it could not
        carry, the end of the server."""
        kind = envelope.get("session")
        if kind == "hello" and self._hello is None:
            proof = envelope.get("proof")
            if self._proof is not None and not (isinstance(proof, str)
                                                and _same_secret(proof, self._proof)):
                self._failure = self._failure or self._impostor()
                return
            self._hello = _dict(envelope.get("state"))
        elif kind == "failed" and _is_id(envelope.get("id")):
            self._inbox.append(_Failed(envelope["id"], _error_from(envelope.get("error"))))
        elif kind == "status":  # for session list
            self._inbox.append(envelope)
        elif kind == "notice" and isinstance(envelope.get("text"), str):
            self._inbox.append(_Said(envelope["text"]))
        elif kind == "lost":
            error = _error_from(envelope.get("error"))
            self.last_words = error.stderr_tail
            self._failure = self._failure or error

    def close(self, grace=None):
        """Send what is queued (a cancellation after Ctrl-C), briefly, and hang up:
        the session and its server go on."""
        if self._closed or self._sock is None:
            return
        deadline = _Deadline(min(_LINGER, SHUTDOWN_GRACE if grace is None else grace))
        try:
            while (self._sel is not None and self._outq and self._failure is None
                   and not deadline.passed()):
                for _ in self._poll(deadline.left()):
                    self._flush()
        finally:
            self._closed = True
            self._sock.close()
            if self._wake is not None:
                self._wake.close()

    def abort(self):
        pass  # no server of ours to kill: close() hangs up, within _LINGER


# ---------------------------------------------------------------------------
# Client
# ---------------------------------------------------------------------------

def _capability(capabilities, path):
    """What ``capabilities`` holds at ``path`` (a tuple of keys: an extension's
    id is one key, dots and all), or None. Declared means an object there
    (_is_declared); a flag such as ``resources.subscribe`` is declared true only
    when it is ``true``."""
    value = capabilities
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _is_declared(value):
    return isinstance(value, dict) or value is True


class _Era(str):
    """The protocol era as a value: "legacy" or "modern" to whoever reads
    ``Client.era``, and, as behaviour, what differs between the eras, chosen
    once where the era is settled (Client._speak): what a request needs
    declared, what goes in its _meta, how a result's kind is read, and how
    a task is recognised, read and waited for."""

    __slots__ = ()
    modern = False
    _needs = {}  # the era's own methods and the capability each needs
    _interval, _ttl = "pollInterval", "ttl"  # a task's fields, in milliseconds

    def needs(self, method):
        """The capability path ``method`` needs declared, or None."""
        return _CAPABILITY_OF.get(method) or self._needs.get(method)

    def task_of(self, result):
        """The Task of a CreateTaskResult."""
        return result

    def interval(self, task):
        """Seconds until the next poll: the server's interval, never under
        MIN_POLL_INTERVAL; None when it gives none a number can hold."""
        value = task.get(self._interval)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            return None
        return max(MIN_POLL_INTERVAL, min(value / 1000.0, _MAX_SECONDS))

    def ttl(self, task):
        """The task's time to live in seconds, or None (unlimited, or not said)."""
        value = task.get(self._ttl)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            return None
        return min(value / 1000.0, _MAX_SECONDS)


class _Legacy(_Era):
    """The handshake era (2024-11-05 to 2025-11-25): capabilities from
    initialize, no per-request _meta, every result complete; a task is asked
    for with ``params.task`` and its result fetched with ``tasks/result``
    (2025-11-25 basic/utilities/tasks)."""

    __slots__ = ()
    _needs = {"tasks/get": ("tasks",), "tasks/result": ("tasks",),
              "tasks/list": ("tasks", "list"), "tasks/cancel": ("tasks", "cancel")}

    ping = "ping"  # 2026-07-28 removed ping: a modern server is asked server/discover

    def meta(self, client):
        return None

    def follow(self, client, uris, lists, until, subscribed):
        """Ask for changes to be reported: resources/subscribe for each uri (each
        added to ``subscribed`` once in place); list changes come unasked, over
        HTTP on the stream the transport opens. The listen, here None."""
        client._transport.listen()
        for uri in uris:
            client.request("resources/subscribe", {"uri": uri})
            subscribed.append(uri)
        return None

    def kind(self, result):
        task = result.get("task")  # CreateTaskResult: {"task": Task}, and no content
        return "task" if type(task) is dict and "content" not in result else "complete"

    def asked_task(self, params):
        return isinstance(params, dict) and "task" in params

    def task_of(self, result):
        return result["task"]

    def step(self, status):
        """What a task's status asks of its waiter: "poll" again, "fetch"
        the outcome (tasks/result, which also carries the server's questions
        while it is open), or "cancelled"."""
        return {"working": "poll", "cancelled": "cancelled"}.get(status, "fetch")


class _Modern(_Era):
    """2026-07-28: stateless, per-request _meta, resultType; tasks are the
    extension io.modelcontextprotocol/tasks, declared with every request,
    whose tasks/get carries the outcome and tasks/update the answers."""

    __slots__ = ()
    modern = True
    _needs = {"tasks/get": ("extensions", _TASKS_EXTENSION),
              "tasks/update": ("extensions", _TASKS_EXTENSION),
              "tasks/cancel": ("extensions", _TASKS_EXTENSION)}
    _interval, _ttl = "pollIntervalMs", "ttlMs"

    ping = "server/discover"

    def meta(self, client):
        return client._modern_meta()

    def follow(self, client, uris, lists, until, subscribed):
        """One subscriptions/listen for all of it (basic/patterns/subscriptions),
        open until the caller ends it (Client._end_listen)."""
        flags = {"resourceSubscriptions": list(uris)} if uris else {}
        flags.update((flag, True) for _, (kind, flag) in sorted(_LIST_CHANGES.items())
                     if kind in lists)
        return client._listen(flags, until)

    def kind(self, result):
        return result.get("resultType", "complete")  # absent: complete (basic/index)

    def asked_task(self, params):
        return True  # the server decides; the extension goes with every request

    def step(self, status):
        """See _Legacy.step; here the outcome comes with the poll ("done"), and
        input is asked for in it ("answer")."""
        return {"working": "poll", "input_required": "answer",
                "cancelled": "cancelled"}.get(status, "done")


_ERAS = {"legacy": _Legacy("legacy"), "modern": _Modern("modern")}


class _Call(object):
    """One request in flight."""

    __slots__ = ("id", "method", "timeout", "cap", "deadline", "limit", "progress",
                 "on_progress", "result", "kind", "error", "done")

    def __init__(self, ident, method, timeout, max_time, progress, on_progress, limit=None):
        now = time.monotonic()
        self.id = ident
        self.method = method
        self.timeout = timeout
        # Progress may push the deadline back, never past this (basic/lifecycle, "Timeouts").
        # ``limit``: a later round of one request keeps the first round's.
        self.cap = _time_cap(timeout, max_time)
        self.limit = now + self.cap if limit is None else limit
        deadline = now + timeout
        self.deadline = deadline if deadline < self.limit else self.limit
        self.progress = progress  # sent a progressToken (its id)
        self.on_progress = on_progress
        self.result = None
        self.kind = None  # the result's (the era's kind), once it is an object
        self.error = None
        self.done = False

    # Every change to a deadline, here: never past the limit.

    def progressed(self):
        """Progress restarts the timeout (basic/lifecycle, "Timeouts")."""
        self.deadline = min(time.monotonic() + self.timeout, self.limit)

    def heard(self, answered_at):
        """An answer to another request shows the server alive and working through
        what it was sent (a batch queued behind a serial server): the timeout
        restarts from it."""
        self.deadline = max(self.deadline, min(answered_at + self.timeout, self.limit))

    def paused(self, spent):
        """Time spent answering the server (a person typing, a sampling command)
        does not count against the timeout."""
        self.deadline = min(self.deadline + spent, self.limit)

    def lasts_as_long_as(self, other):
        """Waited for as long as ``other`` is, if that is longer."""
        self.limit = max(self.limit, other.limit)
        self.deadline = max(self.deadline, other.deadline)

    def overdue(self):
        """Why it expired: its timeout, or its time limit."""
        return self.past_limit() if self.deadline >= self.limit else (
            "timed out after %gs" % self.timeout)

    def past_limit(self):
        return "took longer than its time limit of %gs" % self.cap


# What open() settles, as a session hands it on to its clients (Client._resume, Client.settled).
_SETTLED = ("era", "era_source", "protocol_version", "initialize_result", "discover_result",
            "server_info", "capabilities", "instructions")


class _Request(object):
    """One logical request across its rounds (MRTR input, renewed tokens, another
    version, the polls of a task): what is sent again, what has been tried,
    and the plan of the next round when it is not the request itself."""

    __slots__ = ("method", "params", "timeout", "on_progress", "limit", "rounds",
                 "renewed", "version_retried", "relisted", "call", "detach", "task", "plan",
                 "due", "finished", "outcome")

    def __init__(self, method, params, timeout, on_progress=None, limit=None, detach=False):
        self.method = method
        self.params = params
        self.timeout = timeout
        self.on_progress = on_progress
        self.limit = limit
        self.rounds = 0
        self.renewed = self.version_retried = self.relisted = False
        self.call = None  # the round in flight or done; None between rounds, the next
        # planned (see Client._move)
        self.detach = detach  # a task that comes back is the outcome, not waited on
        self.task = None  # the _Task waited on
        self.plan = None  # the next round, (method, params, timeout), when not the request
        self.due = None  # monotonic time the next round may go (a poll), None: at once
        self.finished = False  # the outcome is known: the result, or the MCPError
        self.outcome = None

    # What the request engine's callers read of the round.

    @property
    def id(self):
        return None if self.call is None else self.call.id

    @property
    def done(self):
        return self.finished or self.call is not None and self.call.done

    @property
    def error(self):
        if self.finished:
            return self.outcome if isinstance(self.outcome, MCPError) else None
        return None if self.call is None else self.call.error


class _Task(object):
    """A task a request waits on, as far as it has been seen."""

    __slots__ = ("id", "status", "message", "ttl", "interval", "answered", "cap", "ending")

    def __init__(self, ident, cap):
        self.id = ident
        self.status = self.message = self.ttl = None
        self.ending = None  # 2025-11-25: the end a poll showed, told once tasks/result has it
        self.interval = 1.0  # until the server says (extensions/tasks: pollIntervalMs)
        self.answered = set()  # input request keys answered: each once, however often asked
        self.cap = cap  # the time limit of the call, in seconds


def _check_oauth(oauth, headers):
    """The Client's oauth argument, checked; None when it is not given."""
    if oauth is None:
        return None
    if not isinstance(oauth, dict) or not set(oauth) <= _OAUTH_KEYS:
        raise UsageError("oauth is a dict with the keys %s, not %s" % (
            ", ".join(sorted(_OAUTH_KEYS)), _arg(oauth)))
    if any(str(name).lower() == "authorization" for name in headers or {}):
        raise UsageError("oauth and an Authorization header exclude each other")
    if oauth.get("grant") not in (None,) + _GRANTS:
        raise UsageError("oauth grant is one of %s, not %s" % (", ".join(_GRANTS),
                                                              _arg(oauth.get("grant"))))
    if oauth.get("signing_alg") not in (None, "ES256", "RS256"):
        raise UsageError("oauth signing_alg is ES256 or RS256, not %s"
                         % _arg(oauth.get("signing_alg")))
    for key, value in sorted(oauth.items()):
        if value is None or key in ("grant", "signing_alg", "headless", "listen", "login"):
            continue
        if key.startswith("on_") and not callable(value):
            raise UsageError("oauth %s is a function, not %s" % (key, _arg(value)))
        if not key.startswith("on_") and not isinstance(value, str) and not (
                key == "cache" and (value is False or hasattr(value, "__fspath__"))):
            raise UsageError("oauth %s is a string%s, not %s" % (
                key, " (a path)" if key in ("cache", "private_key_file") else "", _arg(value)))
    return dict(oauth)


def _check_arguments(roots, trace, protocol_version, log_level, max_bytes, seconds,
                     callbacks):
    """UsageError for a Client argument of the wrong kind, before anything starts
    (the transport checks its own).

    ``seconds`` and ``callbacks``: the arguments of those kinds, by name.
    """
    for name, value in sorted(seconds.items()):
        if value is not None or name != "max_time":
            if _seconds(value, name) < 0:  # a request's may be 0 or less: at once
                raise UsageError("%s is a number of seconds, 0 or more, not %s"
                                 % (name, _arg(value)))
    if (isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, float))
            or not max_bytes >= 1):
        raise UsageError("max_bytes is a positive number of bytes, not %s" % _arg(max_bytes))
    for name, value in sorted(callbacks.items()):
        if value is not None and not callable(value):
            raise UsageError("%s is a function, not %s" % (name, _arg(value)))
    if roots is not None and (isinstance(roots, (str, bytes)) or not hasattr(roots, "__iter__")):
        raise UsageError("roots is a list of paths or file:// URIs, not %s" % _arg(roots))
    try:
        if trace is not None:
            trace.write("")  # a binary, closed or read-only file fails here
    except (AttributeError, TypeError, ValueError, OSError):
        raise UsageError("trace is a text file open for writing, not %s" % _arg(trace))
    if protocol_version is not None and not _is_date(protocol_version):
        raise UsageError("protocol version %r is not a date like %s"
                         % (protocol_version, LATEST_PROTOCOL_VERSION))
    if log_level is not None and log_level not in LOG_LEVELS:
        raise UsageError("unknown log level %r; use one of %s"
                         % (log_level, ", ".join(LOG_LEVELS)))


class _Engine(object):
    """The request engine: requests to one server over its transport, each run
    in rounds to its outcome within its limits, and the waiting that serves
    the server meanwhile. A round is one call on the wire with an id of its
    own: the request itself, again with input given (an input_required
    result), with a renewed token or another version, or what its plan says
    next (a task's poll, not before it is due). Every driver moves requests
    the one way (_move): a single request (_complete), ``batch``, ``watch``
    and a session's server (through the names below).

    The Client is the engine's host, and gives it (hooks, by these names):
    ``era`` (an _Era, once settled); ``_ready(method)`` before a request
    goes; ``_recovered(request, done, error)``, the next round's _Call after
    a round failed in a way the session can mend (a token renewed, a session
    or version changed, the tools listed anew), else raising ``error``;
    ``_fulfil(method, params, key, limit)``, an answer to what the server
    asks in a result; ``_server_request(ident, method, params, limit)`` and
    ``_notified(method, params)``, what it asks and tells on its own;
    ``_warn(kind, text)`` and ``_noise(item)``, its oddities.
    """

    def __init__(self, transport, timeout, max_time, trace, on_task):
        self._transport = transport
        self.timeout = timeout
        self.max_time = max_time
        self.trace = trace
        self.on_task = on_task
        self.era = None
        self._era_meta = None  # what the era puts in every request's _meta (Client._speak)
        self._next_id = 0
        self._pending = {}  # calls in flight, by id
        self._abandoned = set()  # ids given up on: a late answer is not a stray
        self._held_over = collections.deque()  # what a wait cut short left (see _hold_over)
        self._idle_until = None  # with nothing in flight, the server is answered until then
        self._batch_members = 0  # members of a traced batch still to come
        self._unresponsive = False  # a request timed out
        self._answered_at = 0.0  # when the server last answered a request of ours
        self._receive_by = _Deadline.at_time(0.0)  # a wait's, moved as it goes (_wait)
        self._tasks = {}  # the tasks waited on, by id: Ctrl-C cancels them
        self._unclaimed = {}  # calls answered with a task, not yet looked at: by call id
        self._landed = False  # a task came back to a call in flight since a batch looked
        self.interrupted_tasks = {}  # task id -> None (cancelled) or the MCPError (see Client)
        self.interrupted_batch = []  # outcomes a batch had not handed out (see Client.batch)

    # -- its names for drivers ------------------------------------------------
    #
    # What a driver outside the engine uses (watch, and a session's server in
    # Part II, through its Client), as the drivers inside do:
    #
    #   start(method, params, timeout, on_progress, limit, detach) -> request
    #       Send its first round (``detach``: a task that comes back is its
    #       outcome, as call_tool's). ``request.id``: the round's id on the wire;
    #       ``request.done``: the round has its outcome; ``request.error``: the
    #       MCPError it failed with, if it did; ``request.limit``: the monotonic
    #       time it must be done by (``limit`` given: one it shares with others).
    #   wait(requests, until=None, first=False, stop=None)
    #       Run the transport (answers, progress, the server's own requests and
    #       notifications) until every request's round is done, or one with
    #       ``first``, or ``until`` (monotonic) passes, or ``stop()`` is true;
    #       a planned round goes out once it is due. A round past its deadline
    #       is expired. Raises what the transport raises only when ``requests``
    #       is empty (else each request fails).
    #   advance(request) -> result or None
    #       After a done round: the complete result, or None with the next
    #       round sent (``request.id`` is new), or planned (a task's poll:
    #       ``request.id`` is None until ``wait`` sends it, when it is due).
    #       Raises the request's failure.
    #   expire(request, reason)
    #       Give up on its round; the server is told (basic/utilities/cancellation),
    #       but for a task's round, which is let go (the task goes on).
    #   idle_limit(limit)
    #       The monotonic time until which what the server asks with no request
    #       in flight is answered (past it, refused at once).
    #
    # plus, of the Client, ``relay(function)`` (every notification but
    # progress to ``function(method, params)`` too: a session hands them on),
    # ``settled()`` (the era and handshake, a session's greeting), ``waker()``
    # and ``abort()``. Nothing else of the insides is for Part II.

    def start(self, method, params=None, timeout=None, on_progress=None, limit=None,
              detach=False):
        """Send the first round of a request; its handle (see the request engine)."""
        _requestable(method)
        request = _Request(method, params, timeout, on_progress, limit, detach)
        request.call = self._begin(request)
        request.limit = request.call.limit
        return request

    def wait(self, requests, until=None, first=False, stop=None):
        """Run the transport for ``requests`` (see the request engine); a
        planned round goes out once it is due."""
        while True:
            for request in requests:
                if request.call is None and not request.finished:
                    self._move(request)
            dues = [min(r.due or 0, r.limit) for r in requests
                    if r.call is None and not r.finished]
            calls = [r.call for r in requests if r.call is not None]
            if not dues:
                return self._wait(calls, until, first, stop)
            soonest = min(dues + ([until] if until is not None else []))
            self._wait(calls, soonest, first, stop or _never)
            if (until is not None and time.monotonic() >= until or stop is not None and stop()
                    or first and any(request.done for request in requests)):
                return

    def advance(self, request):
        """The complete result of ``request``, or None with its next round sent
        or planned (see the request engine). Raises the request's failure."""
        if not request.finished:
            self._step(request)
        if not request.finished:
            return None
        if isinstance(request.outcome, MCPError):
            raise request.outcome
        return request.outcome

    def expire(self, request, reason):
        """Give up on the round of ``request`` in flight (see the request engine)."""
        if request.call is not None and not request.call.done:
            self._expire(request.call, reason)

    def idle_limit(self, limit):
        """Answer what the server asks with no request in flight until ``limit``
        (monotonic), and refuse it at once after."""
        self._idle_until = limit

    # -- a request, round by round -------------------------------------------

    # The one way a request moves on, for every driver (a call, batch, the
    # session server through advance and wait): a round done is followed by
    # the next, sent at once or planned (a poll, not before ``due``), until
    # the request has its outcome.

    def _complete(self, method, params, timeout, on_progress=None, call=None, limit=None,
                  detach=False):
        """Run one logical request to its complete result, across its rounds.

        ``call`` is its first round when that is already sent; ``limit``
        (monotonic) one it shares with others (the pages of a list);
        ``detach``: a task that comes back is the outcome.
        """
        try:
            if call is None:
                call = self._start(method, params, timeout, on_progress, limit)
            if not call.done:
                self._wait([call])
            if call.error is None and call.kind == "complete":
                return call.result  # as _next_round would, at once: most have one round
        except KeyboardInterrupt:  # outside a wait too: the frame may be out already
            self._interrupted()
            raise
        request = _Request(method, params, timeout, on_progress, limit, detach)
        request.call = call
        return self._drive(request)

    def _drive(self, request):
        """Run ``request``, its round in flight or done, to its outcome."""
        try:
            while not self._move(request):
                if request.call is None:  # a poll, planned: the server is served meanwhile
                    self._wait([], until=min(request.due, request.limit), stop=_never)
                else:
                    self._wait([request.call])
        except KeyboardInterrupt:  # before the task is let go: it is cancelled
            self._interrupted()
            raise
        finally:
            if request.task is not None:
                self._tasks.pop(request.task.id, None)
        if isinstance(request.outcome, MCPError):
            raise request.outcome
        return request.outcome

    def _move(self, request):
        """Move ``request`` on as far as it goes without waiting; True once it is
        finished (``request.outcome``: its result, or the MCPError it failed with)."""
        while not request.finished:
            if request.call is None:
                now = time.monotonic()
                if now >= request.limit:  # never waiting past the time left
                    return self._finish(request, self._task_timeout(request))
                if request.due is not None and request.due > now:
                    return False
                try:
                    request.call = self._begin(request)
                except MCPError as e:
                    return self._finish(request, e)
            elif request.call.done:
                self._step(request)
            else:
                return False
        return True

    def _step(self, request):
        """After ``request``'s round is done: its outcome, or the next round sent
        or planned (``request.call`` None)."""
        try:
            outcome = self._next_round(request, request.call)
        except MCPError as e:
            return self._finish(request, e)
        if outcome is None:
            request.call = None
        elif isinstance(outcome, _Call):
            # A renewed token starts a time limit of its own (see _next_round).
            request.call, request.limit = outcome, outcome.limit
        else:
            return self._finish(request, outcome)
        return False

    def _finish(self, request, outcome):
        request.finished, request.outcome = True, outcome
        if request.task is not None:
            self._tasks.pop(request.task.id, None)
        return True

    def _begin(self, request):
        """Send a round of ``request``: the request again, or what is planned; its _Call."""
        if request.plan is None:
            return self._start(request.method, request.params, request.timeout,
                               request.on_progress, request.limit)
        method, params, timeout = request.plan
        return self._start(method, params, timeout, None, request.limit)

    def _plan(self, request, method, params=None, timeout=None, due=None):
        """Plan the next round of ``request``'s task: ``method`` on it, not before ``due``."""
        params = dict(params or {}, taskId=request.task.id)
        request.plan = (method, params, request.timeout if timeout is None else timeout)
        request.due = due
        return None

    def _next_round(self, request, done):
        """After round ``done`` of ``request``: the complete result, the next
        round's _Call (input given, a token renewed, another version), or None
        with the next round planned (a task's poll). Raises the request's
        failure. A session's server (see Sessions) runs many at once."""
        method = request.method
        request.limit = done.limit  # every round, and answering between them, within one limit
        self._unclaimed.pop(done.id, None)
        if request.task is not None:
            return self._task_round(request, done)
        try:
            result = self._result(done)
        except MCPError as e:
            return self._recovered(request, done, e)
        kind = self.era.kind(result)
        if kind == "complete":
            return result
        if kind == "task" and method == "tools/call":
            return self._task_begun(request, result, done)
        if kind not in _RESULT_TYPES or method not in _MRTR_METHODS:
            raise _unusable(method, kind, result)
        if request.rounds == MAX_INPUT_ROUNDS:  # before answering a round that would not be sent
            raise ProtocolError("server still asked for input after %d rounds"
                                % MAX_INPUT_ROUNDS, method)
        request.rounds += 1
        request.params = self._retry_params(request.params, result, done)
        return self._begin(request)

    def _retry_params(self, params, result, call):
        """The original params plus inputResponses and the untouched requestState."""
        # 2026-07-28 basic/patterns/mrtr, "Client Requirements".
        requests = result.get("inputRequests")
        if not requests and "requestState" not in result:
            raise ProtocolError("input_required result has neither inputRequests "
                                "nor requestState")
        if requests is not None and not isinstance(requests, dict):
            raise ProtocolError("input_required result has inputRequests that is not an "
                                "object: %s" % _show(requests))
        params = dict(params or {})
        params.pop("inputResponses", None)
        params.pop("requestState", None)
        if requests:
            responses = {}
            for key, request in requests.items():
                request = _dict(request)
                method = request.get("method")
                try:  # answering counts against the request's time limit
                    answer = self._fulfil(method, _dict(request.get("params")), key, call.limit)
                except _Overtime:
                    raise self._timed_out(call, call.past_limit())
                if answer is None:
                    raise ProtocolError("server asked for %s, which this client did not "
                                        "declare" % _cut(str(method), _SHOW_CHARS))
                responses[key] = answer
            params["inputResponses"] = responses
        if "requestState" in result:
            params["requestState"] = result["requestState"]
        return params

    # -- tasks ----------------------------------------------------------------
    #
    # A task is waited on as more rounds of the call that made it (2025-11-25
    # basic/utilities/tasks; the 2026-07-28 extension, extensions/tasks.md):
    # polls (tasks/get) at the server's interval, answers (tasks/update,
    # 2026) or the outcome (tasks/result, 2025), all within the call's time
    # limit. Their rounds are given up on without notifications/cancelled
    # (_expire); the task goes on unless Ctrl-C cancels it (_interrupted).

    def _task_begun(self, request, result, done):
        """A task came back for ``request``: its Task when detached, else
        the next round of waiting for it."""
        method = request.method
        if not self.era.asked_task(request.params):
            raise ProtocolError("%s answered with a task, which the call did not ask for (no "
                                "params.task)" % method, method, result=result)
        task = self.era.task_of(result)
        if not isinstance(task.get("taskId"), str) or not task["taskId"]:
            raise ProtocolError("%s answered with a task that has no taskId string: %s"
                                % (method, _show(task)), method, result=result)
        if request.detach:
            return result  # as it came: a session hands it to its client, which waits
        request.task = _Task(task["taskId"], done.cap)
        self._tasks[task["taskId"]] = request
        return self._task_seen(request, task, first=True)

    def _task_round(self, request, done):
        """After a round on ``request``'s task: the outcome, or the next round planned."""
        seen = request.task
        try:
            result = self._result(done)
        except RequestTimeout:
            raise self._task_timeout(request, done)
        except ServerError as e:
            if done.method == "tasks/result":  # the call's own outcome, as the task ended
                self._task_told(request, seen.ending or {"taskId": seen.id, "status": "failed"})
                raise ServerError(e.message, request.method, e.code, e.data)
            if done.method != "tasks/get":
                raise
            raise ServerError("task %s is not known to the server%s: %s" % (
                seen.id, "" if seen.ttl is None else " (its ttl was %gs)" % seen.ttl,
                e.message), done.method, e.code, e.data)
        if done.method == "tasks/get":
            return self._task_seen(request, result)
        if done.method == "tasks/update":  # the answers are in; look again
            return self._plan(request, "tasks/get", due=time.monotonic() + seen.interval)
        if self.era.kind(result) != "complete":  # tasks/result, as a CallToolResult
            raise ProtocolError("tasks/result answered with another task", done.method,
                                result=result)
        if "content" not in result and "taskId" in result and "status" in result:
            raise ProtocolError("tasks/result answered with the Task, not the call's result",
                                done.method, result=result)
        self._task_told(request, seen.ending or {"taskId": seen.id, "status": "completed"})
        return result

    def _task_seen(self, request, task, first=False):
        """A look at the task (its ``first`` state, or a poll's): the outcome, or
        the next round planned. The first poll goes at once: a task done at
        once is seen so; the interval spaces the polls."""
        seen, status = request.task, task.get("status")
        if status not in _TASK_STATES or task.get("taskId", seen.id) != seen.id:
            raise ProtocolError("task %s came back as %s" % (seen.id, _show(dict(
                (k, task.get(k)) for k in ("taskId", "status") if k in task))), "tasks/get",
                result=task)
        seen.ttl = self.era.ttl(task) if self.era.ttl(task) is not None else seen.ttl
        seen.interval = self.era.interval(task) or seen.interval
        step = self.era.step(status)
        if step == "fetch" and status in _TASK_ENDS:
            seen.ending = task  # told with the outcome: until then, it may be waited for again
        else:
            self._task_told(request, task)
        if step == "poll":
            return self._plan(request, "tasks/get",
                              due=None if first else time.monotonic() + seen.interval)
        if step == "fetch":  # it blocks until the task ends: no timeout but the call's
            return self._plan(request, "tasks/result", timeout=_MAX_SECONDS)
        if step == "answer":
            return self._task_answers(request, task)
        if step == "cancelled":
            raise ServerError("task %s was cancelled by the server%s" % (
                seen.id, ": " + seen.message if seen.message else ""), request.method)
        if status == "failed":
            error = _dict(task.get("error"))
            text = error.get("message")
            raise ServerError(text if isinstance(text, str) else "the task failed",
                              request.method, error.get("code"), error.get("data"))
        if not isinstance(task.get("result"), dict):
            raise ProtocolError("task %s completed without a result object" % seen.id,
                                "tasks/get", result=task)
        return task["result"]

    def _task_told(self, request, task):
        """``on_task`` hears of each new status or message of the task."""
        seen, status = request.task, task.get("status")
        message = task.get("statusMessage")
        message = message if isinstance(message, str) else None
        if (status, message) != (seen.status, seen.message):
            seen.status, seen.message = status, message
            if self.on_task is not None:
                self.on_task(dict(task))

    def _task_answers(self, request, task):
        """input_required (2026-07-28): each request not yet answered is, once,
        by the same policy as any other; the answers go in tasks/update."""
        seen, requests = request.task, task.get("inputRequests")
        if not isinstance(requests, dict):
            raise ProtocolError("task %s is input_required without an inputRequests object"
                                % seen.id, "tasks/get", result=task)
        responses = {}
        for key, asked in sorted(requests.items()):
            if key in seen.answered:
                continue
            asked = _dict(asked)
            try:  # answering counts against the call's time limit
                answer = self._fulfil(asked.get("method"), _dict(asked.get("params")), key,
                                      request.limit)
            except _Overtime:
                raise self._task_timeout(request)
            if answer is None:
                raise ProtocolError("task %s asked for %s, which this client did not declare"
                                    % (seen.id, _cut(str(asked.get("method")), _SHOW_CHARS)),
                                    "tasks/get")
            responses[key] = answer
            seen.answered.add(key)
        if not responses:  # asked again for what was answered: the server has yet to see it
            return self._plan(request, "tasks/get", due=time.monotonic() + seen.interval)
        return self._plan(request, "tasks/update", {"inputResponses": responses})

    def _task_timeout(self, request, done=None):
        """The RequestTimeout of a call that stopped waiting for its task, which goes on."""
        seen = request.task
        self._tasks.pop(seen.id, None)
        if done is not None and done.deadline < done.limit:  # one poll's own timeout
            why = "%s timed out after %gs" % (done.method, done.timeout)
        else:
            why = "timed out after %gs" % seen.cap
        error = RequestTimeout("%s waiting for task %s, which goes on" % (why, seen.id),
                               request.method, self._transport.last_words, request.timeout)
        error.task_id = seen.id
        return error

    # -- the wire ------------------------------------------------------------

    def _start(self, method, params, timeout, on_progress=None, limit=None):
        _check_request(method, params, timeout, on_progress)
        self._ready(method)
        self._next_id += 1
        # The one progress rule: a token for every tools/call (progress is how a
        # long call keeps its timeout from passing), and for any request watched.
        progress = method == "tools/call" or on_progress is not None
        call = _Call(self._next_id, method, self.timeout if timeout is None else timeout,
                     self.max_time, progress, on_progress, limit)
        message = {"jsonrpc": "2.0", "id": call.id, "method": method}
        era_meta = self._era_meta
        if progress or era_meta is not None:
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            if progress:
                # basic/utilities/progress: the token rides in _meta; ours is the request id.
                meta["progressToken"] = call.id
            if era_meta is not None:
                meta.update(era_meta)
            params["_meta"] = meta
        if params is not None:
            message["params"] = params
        try:
            # First: Ctrl-C while a big argument is encoded leaves nothing to cancel.
            self._put(call, message, _encode(message))
        except MCPError as e:
            self._pending.pop(call.id, None)
            raise _for_method(e, method)
        return call

    @_Unsplit.marked  # Ctrl-C meets a call unsent, nothing to cancel, or in flight
    def _put(self, call, message, frame):
        """Send ``call``'s request and hold the call in flight, together."""
        try:
            self._transport.time_limit(call.id, call.limit)
            self._pending[call.id] = call
            self._send(message, frame=frame)
        finally:
            if _Unsplit.later:
                _Unsplit.release()

    def _send(self, message, answer=False, frame=None):
        if frame is None:  # first: what cannot be sent is not traced as sent
            frame = _encode(message)
        if self.trace is not None:
            self._record("send", frame=message)
        self._transport.send(message, frame, answer)

    def _record(self, direction, frame=None, raw=None):
        if direction == "recv" and self._batch_members:
            self._batch_members -= 1  # a member of the batch just traced
            return
        entry = {"ts": time.time(), "dir": direction}
        if raw is None:
            entry["frame"] = frame
        else:
            entry["raw"] = raw
        try:
            self.trace.write(json.dumps(entry) + "\n")
            self.trace.flush()
        except (IOError, OSError, ValueError) as e:
            raise UsageError("cannot write the trace: %s" % (getattr(e, "strerror", None) or e))

    def _result(self, call):
        if call.error is not None:
            raise call.error
        if not isinstance(call.result, dict):
            raise ProtocolError("%s result is not a JSON object" % call.method, call.method,
                                result=call.result)
        return call.result

    def _wait(self, calls, until=None, first=False, stop=None, on_wait=None):
        """Run the transport until every call is done (or one, or ``until`` passes,
        or ``stop()`` is true; with it, the wait lasts until then even with no
        call in it). ``on_wait()`` is called before each read from the server,
        not for what an earlier read held over."""
        looked = False  # at what the server sent, in this wait
        try:
            while True:
                now = time.monotonic()
                if until is not None and now >= until:
                    return  # before expiring: the caller may still want the answers
                deadline, waiting = until, 0
                for call in calls:
                    if not call.done and now >= call.deadline:
                        call.heard(self._answered_at)
                    if not call.done and now >= call.deadline:
                        self._unresponsive = True
                        self._expire(call, call.overdue())
                    if not call.done:
                        waiting += 1
                        if deadline is None or call.deadline < deadline:
                            deadline = call.deadline
                if (not waiting and (stop is None or calls)) or (first and waiting < len(calls)):
                    return
                if stop is not None and stop():
                    if looked:
                        return
                    # Once first, without waiting: a caller stopped again and
                    # again (a session flooded by one client) would leave the
                    # server's answers to the others unread.
                    deadline = now
                looked = True
                if self._held_over:  # before anything that came after it
                    self._dispatch_until(self._held_over, calls, until, stop)
                    continue
                if on_wait is not None:
                    on_wait()
                try:
                    self._receive_by.at = deadline
                    inbox = self._transport.receive(self._receive_by)
                except MCPError as e:
                    if not calls:  # nobody to hand it to
                        raise
                    self._fail_all(e)
                    return
                if len(inbox) == 1:  # what a failed callback leaves stays for the next wait
                    self._dispatch(inbox.popleft())
                else:
                    self._dispatch_until(inbox, calls, until, stop)
        except KeyboardInterrupt:
            self._interrupted()
            raise
        except BaseException:
            # A callback (on_progress, on_log, a handler) raised: its caller
            # gets the exception, and nobody waits for these answers any more.
            for call in calls:
                if not call.done:
                    self._expire(call, "the client stopped waiting")
            raise

    def _interrupted(self):
        """Ctrl-C: every request in flight is given up, and the server told;
        every task waited on is cancelled (tasks/cancel), as far as a short
        wait for the acknowledgements allows. Answers that came and were not
        looked at yet are taken first: a task among them is cancelled too."""
        kept = collections.deque()
        for item in self._held_over:  # answers only: the server's questions stay unasked
            if type(item) is dict and "method" not in item and item.get("id") in self._pending:
                self._response(item)
            else:
                kept.append(item)
        self._held_over = kept
        for call in list(self._pending.values()):
            self._expire(call, "interrupted")
            call.error = _interruption(call.method)
        landed, self._unclaimed = self._unclaimed, {}
        tasks = list(self._tasks) + [task_id for task_id in (
            _dict(self.era.task_of(call.result)).get("taskId") for call in landed.values())
            if isinstance(task_id, str) and task_id not in self._tasks]
        self._tasks = {}
        calls = []
        for task_id in tasks:
            try:
                calls.append((task_id, self._start("tasks/cancel", {"taskId": task_id},
                                                   min(self.timeout, SHUTDOWN_GRACE))))
            except MCPError as e:
                self.interrupted_tasks[task_id] = e
        if calls:
            self._wait([call for _, call in calls])
        for task_id, call in calls:
            self.interrupted_tasks[task_id] = call.error

    def _dispatch_until(self, inbox, calls, until=None, stop=None):
        """Handle what arrived, leaving the rest once a waited call's deadline or
        time limit (or ``until``) has passed (a burst of server requests, which
        a reader thread may keep coming, cannot stretch --timeout or
        --max-time), or once every waited call is done or ``stop()`` is true
        (what follows is for the next wait, within its limit)."""
        limit = min([min(call.limit, call.deadline) for call in calls if not call.done]
                    + [_MAX_SECONDS + time.monotonic() if until is None else until])
        while inbox and time.monotonic() < limit:
            self._dispatch(inbox.popleft())
            if all(call.done for call in calls) or stop is not None and stop():
                break
        if inbox and inbox is not self._held_over:
            self._hold_over(inbox, calls)

    def _hold_over(self, inbox, calls):
        """Keep what a wait left for the next, each question from the server
        charged to the requests in flight as it came: left by a call whose time
        limit ran out, a burst is refused at once, not answered within the
        limit of whatever request comes next."""
        limit = self._charge(calls)
        for _ in range(len(inbox)):  # a reader thread may add more: those come later
            message = inbox.popleft()
            if (isinstance(message, dict) and "id" in message
                    and isinstance(message.get("method"), str)):
                message = _Asked(message, limit)
            self._held_over.append(message)

    def _charge(self, calls=()):
        """The time limit a question from the server is answered within: it asks
        on behalf of the requests in flight (``calls``, just done, among them),
        so it may take until the last of their time limits, and is refused once
        they have passed; with none in flight, until the idle limit, or for one
        request's time limit."""
        limits = [call.limit for call in itertools.chain(calls, self._pending.values())
                  if call.limit != float("inf")]  # a subscription's lasts for good
        if limits:
            return max(limits)
        if self._idle_until is not None:
            return self._idle_until
        return time.monotonic() + _time_cap(self.timeout, self.max_time)

    def _expire(self, call, reason):
        """Give up on a call; tell the server (basic/utilities/cancellation), unless
        the transport cancelled it itself."""
        held = self._transport.held_back(call.id)
        self._abandon(call)
        call.done = True
        call.error = self._timed_out(call, reason + (" (%s)" % held if held else ""))
        if call.method == "initialize":  # cancellation: initialize MUST NOT be cancelled
            return
        # A task's round is given up on, never cancelled: notifications/cancelled
        # MUST NOT be used for a task (extensions/tasks, "Task Cancellation").
        if not self._transport.cancel(call.id) and not call.method.startswith("tasks/"):
            try:
                self._send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": call.id, "reason": reason}})
            except MCPError:
                pass

    def _timed_out(self, call, reason):
        return RequestTimeout("%s %s" % (call.method, reason), call.method,
                              self._transport.last_words, call.timeout)

    def _abandon(self, call):
        """Stop waiting for a call; its answer, if it comes, is ignored."""
        if self._pending.pop(call.id, None) is not None:
            self._abandoned.add(call.id)

    def _fail_all(self, error):
        for call in self._pending.values():
            call.error = _for_method(error, call.method)
            call.done = True
        self._pending.clear()

    def _dispatch(self, message, limit=None):
        if not isinstance(message, dict):
            return self._dispatch_other(message)
        if self.trace is not None:
            self._record("recv", frame=message)
        method = message.get("method")
        if isinstance(method, str):
            if "id" not in message:
                if method == "notifications/progress":
                    self._progressed(_dict(message.get("params")))
                else:
                    self._notified(method, _dict(message.get("params")))
            elif not _is_id(message["id"]):
                # basic, "Requests": an id is a string or an integer, never null.
                self._warn("violation", "ignored the server's %s request: its id %s is not a "
                           "string or an integer" % (_cut(method, _SHOW_CHARS),
                                                     _show(message["id"])))
            else:
                self._server_request(message["id"], method, message.get("params"), limit)
        elif _is_id(message.get("id")):
            self._response(message)
        else:
            self._warn("stray", "ignored a message that is neither request nor response: %s"
                       % json.dumps(message)[:120])

    def _dispatch_other(self, item):
        """An inbox item that is not a message: noise, a request the transport
        failed, or a question held over (see _hold_over)."""
        if isinstance(item, _Asked):
            return self._dispatch(item.message, item.limit)
        if isinstance(item, _Failed):  # one request, in the transport
            call = self._pending.pop(item.ident, None)
            if call is not None:
                call.done, call.error = True, _for_method(item.error, call.method)
            elif item.ident is None:  # a notification or an answer of ours
                self._warn("server", "the server did not take our %s: %s"
                           % (item.error.method or "answer", item.error.message))
            return
        return self._noise(item)

    def _progressed(self, params):
        token = params.get("progressToken")
        call = self._pending.get(token) if _is_id(token) else None
        if call is not None and call.progress:  # only tokens we sent (utilities/progress)
            call.progressed()
            if call.on_progress is not None:
                call.on_progress(params)

    def _paused(self, spent):
        """Time spent answering the server (a person typing, a sampling command)
        does not count against the timeouts of the requests in flight; their
        time limits stay."""
        for call in self._pending.values():
            call.paused(spent)

    def _response(self, message):
        call = self._pending.pop(message["id"], None)
        if call is None:
            late = message["id"] in self._abandoned
            self._warn("stray", "ignored %s response to request id %s"
                       % ("a late" if late else "an unexpected", json.dumps(message["id"])))
            return
        call.done = True
        if self._pending:  # others still in flight: see _wait
            self._answered_at = time.monotonic()
        if "result" in message and "error" not in message:
            call.result = result = message["result"]
            call.kind = self.era.kind(result) if type(result) is dict else None
            if call.kind == "task" and call.method == "tools/call":
                self._landed = True  # a batch starts waiting on it (_move_window)
                self._unclaimed[call.id] = call  # Ctrl-C before it is: cancelled too
        elif "error" in message and "result" not in message:
            call.error = _server_error(message["error"], call.method)
        else:  # basic, "Responses": exactly one of the two
            call.error = ProtocolError("answer to %s has %s" % (
                call.method, "both result and error" if "result" in message
                else "neither result nor error"), call.method)


class Client(_Engine):
    """A session with one MCP server, over stdio or Streamable HTTP, of either
    protocol era.

    ``with Client(["uvx", "mcp-server-time"]) as c:`` starts the server, finds
    its era (``server/discover``, falling back to the ``initialize``
    handshake) and, on leaving, stops and reaps it whatever happened.
    ``Client(url="https://...")`` reaches a remote server instead; leaving
    ends its session (legacy era) and every connection and thread.

    Arguments:
      command: the server's argv (a list; never run through a shell).
      url: the server's Streamable HTTP endpoint, instead of a command.
      headers: HTTP headers for every request (a dict; e.g. Authorization).
      cacert: a file of CA certificates to trust for HTTPS instead of the
        system's; insecure: do not verify the certificate at all.
      oauth: a dict that turns on OAuth 2.1 for a url: when the server answers
        401 (or 403 insufficient_scope), the client finds its authorization
        server, gets a token and sends the request again. Keys, all optional:
        client_id, client_secret (a pre-registered client), client_metadata_url
        (a Client ID Metadata Document URL), scope (instead of discovery's),
        grant ("authorization_code", "client_credentials" or "jwt-bearer"),
        private_key_file and signing_alg ("ES256" or "RS256", for
        private_key_jwt), idp_token_endpoint, idp_client_id and idp_id_token
        (jwt-bearer), headless (read the code from the authorization
        endpoint's redirect), listen (catch the browser's redirect on
        127.0.0.1), on_authorize (``on_authorize(url, listening)``: show a
        person the URL; without listening, return what they pasted back),
        cache (a token file path; None keeps tokens for this Client only),
        on_secret (called with each token and secret obtained, to redact
        them), login (ignore cached tokens and authorize anew).
      timeout: default seconds per request without an answer or progress
        (while several are in flight, any answer restarts it for the rest).
      max_time: most seconds any request may take, progress or not
        (default: MAX_TIME_FACTOR times its timeout).
      max_bytes: largest message accepted from the server.
      env: extra environment variables for the server (command only).
      inherit_env: pass the whole environment instead of the allowlist.
      cwd: the server's working directory.
      protocol_version: pin this version (and so its era) and skip the
        probe; None (the default) finds the era and version by itself.
      session: the name of a keep-alive session of the command line
        (``mcp_invoke session start NAME ...``) to go through instead: its
        server is already running and settled, and answers the server's
        questions as that session was told to (so no command, url, env,
        roots or handlers here). Closing leaves the session running.
      remembered_version: a legacy version the server spoke before (a cache
        of the caller's): the probe is skipped and initialize offers it; a
        server that refuses it is probed as usual (era_source "remembered").
      probe_timeout: how long ``server/discover`` may stay unanswered before
        the client also tries ``initialize``; a late answer still counts.
      log_level: ask the server for log messages from this level up.
      roots: paths (or file:// URIs) offered as roots; None declares no roots.
      on_elicit: ``on_elicit(params, key)`` answers an elicitation with an
        ElicitResult dict; None declares no elicitation.
      on_sample: ``on_sample(params)`` answers sampling with a
        CreateMessageResult dict; None declares no sampling.
      sampling_tools: ``on_sample`` handles tool use (``tools`` in the request,
        ``tool_use`` in its answer), so ``sampling.tools`` is declared; without
        it a sampling request carrying tools is refused, never handed on
        (client/sampling, "Tools in Sampling").
      on_stderr: called with each chunk (bytes) the server writes to stderr.
      on_log: called with the params of each ``notifications/message``.
      on_task: called with the Task (a dict: taskId, status, statusMessage,
        ...) each time the status or message of a task waited on changes,
        the first state and the last included.
      on_warning: called as ``on_warning(kind, text)`` for recoverable oddities;
        kind is "noise" (non-JSON output skipped), "utf8" (invalid UTF-8
        replaced), "stray" (a response or message nobody waits for),
        "server" (the server refused an optional request, or a handler's
        answer could not be sent as it was), "session" (a session's server
        ended and was started again for this request) or "violation" (the server broke
        a rule the session survives: a request with an invalid id, or one a
        2026-07-28 server may not send).
      trace: a text file; every frame in both directions is written to it
        as one JSON line ``{"ts", "dir", "frame"}`` (``"raw"`` for non-JSON).
      shutdown_grace: seconds each shutdown step waits.
      strict: refuse (ProtocolError) to send a request that the server's
        declared capabilities do not cover; by default it is sent, as many
        servers forget to declare, and a "method not found" answer to it
        says which capability is missing.

    After Ctrl-C in a wait, ``interrupted_tasks`` maps each task waited on to
    None when the server acknowledged its tasks/cancel, or to the MCPError
    of a cancel refused or unanswered (the task may go on).

    After ``open()``: ``era`` ("legacy" or "modern"), ``era_source``
    ("discover", "probe fallback", "remembered" or "pinned"), ``protocol_version``,
    ``server_info``, ``capabilities``, ``instructions``, and the raw
    ``initialize_result`` (legacy) or ``discover_result`` (modern).
    ``list_changed`` names the lists ("tools", "prompts", "resources") the
    server said changed since they were last listed (see ``track_changes``).
    """

    def __init__(self, command=None, timeout=DEFAULT_TIMEOUT, max_bytes=DEFAULT_MAX_BYTES,
                 env=None, inherit_env=False, cwd=None, protocol_version=None,
                 probe_timeout=PROBE_TIMEOUT, max_time=None, log_level=None, roots=None,
                 on_elicit=None, on_sample=None, on_stderr=None, on_log=None,
                 on_warning=None, trace=None, shutdown_grace=SHUTDOWN_GRACE, strict=False,
                 url=None, headers=None, cacert=None, insecure=False, oauth=None,
                 remembered_version=None, session=None, sampling_tools=False, on_task=None):
        # The one place a transport is chosen; it checks its own arguments first.
        if session is not None:
            given = [name for name, value in (
                ("a command", command), ("a url", url), ("env", env), ("inherit_env",
                                                                      inherit_env),
                ("cwd", cwd), ("headers", headers), ("cacert", cacert), ("insecure", insecure),
                ("oauth", oauth), ("on_stderr", on_stderr), ("protocol_version",
                                                             protocol_version),
                ("remembered_version", remembered_version), ("roots", roots),
                ("on_elicit", on_elicit), ("on_sample", on_sample),
                ("sampling_tools", sampling_tools)) if value]
            if given:
                raise UsageError("%s: not with a session, which was given its server, and "
                                 "how to answer it, when it started" % ", ".join(given))
            self._transport = None  # made once the arguments are checked, below
        elif (command is None) == (url is None):
            raise UsageError("give the Client a server command or a url, not %s"
                             % ("both" if url is not None else "neither"))
        elif url is not None:
            if env is not None or inherit_env or cwd is not None or on_stderr is not None:
                raise UsageError("env, inherit_env, cwd and on_stderr are for a server "
                                 "command; a url takes headers, cacert and insecure")
            self._transport = _HttpTransport(
                url, headers, max_bytes=max_bytes, timeout=timeout, cacert=cacert,
                insecure=insecure, shutdown_grace=shutdown_grace,
                oauth=_check_oauth(oauth, headers), max_time=max_time)
        elif headers is not None or cacert is not None or insecure or oauth is not None:
            raise UsageError("headers, cacert, insecure and oauth are for a url; a server "
                             "command takes env, inherit_env and cwd")
        else:
            self._transport = _StdioTransport(
                command, env=env, inherit_env=inherit_env, cwd=cwd, max_bytes=max_bytes,
                on_stderr=on_stderr, shutdown_grace=shutdown_grace)
        _check_arguments(roots, trace, protocol_version, log_level, max_bytes,
                         dict(timeout=timeout, probe_timeout=probe_timeout,
                              shutdown_grace=shutdown_grace, max_time=max_time),
                         dict(on_elicit=on_elicit, on_sample=on_sample, on_stderr=on_stderr,
                              on_log=on_log, on_warning=on_warning, on_task=on_task))
        if session is not None:  # its greeting, within this client's own time
            self._transport = _SessionTransport(session, max_bytes,
                                                hello=min(timeout, _time_cap(timeout, max_time)))
        _Engine.__init__(self, self._transport, timeout, max_time, trace, on_task)
        self.pinned_version = protocol_version
        # A legacy version this server spoke before: initialize offers it at once.
        self.remembered_version = (remembered_version if remembered_version in
                                   LEGACY_PROTOCOL_VERSIONS else None)
        self.probe_timeout = probe_timeout
        self.log_level = log_level
        self.roots = None if roots is None else [_root(r) for r in roots]
        self.on_elicit = on_elicit
        self.on_sample = on_sample
        if sampling_tools and on_sample is None:
            raise UsageError("sampling_tools is for an on_sample that handles tool use; "
                             "there is no on_sample")
        self.sampling_tools = bool(sampling_tools)
        self.on_log = on_log
        self.on_warning = on_warning
        self.strict = bool(strict)
        self._opened = False
        self._warned = {}  # warnings given, by kind
        self._deferred = []  # server requests that came while the era was unsettled
        self._racing = False  # the probe waits for discover and initialize alike
        self._utf8_warned = False
        self._backlog_warned = False
        self._unanswered = set()  # methods a modern server asked for as requests
        self._meta = None
        self._listens = {}  # subscriptions/listen ids -> the filter acknowledged (None: not yet)
        self._wakes = 0  # how often waker()'s function was called
        self._watched = None  # the resource URIs a watch follows (None: the tool list)
        self._changes = collections.deque()  # what a watch has not yielded yet
        self.list_changed = set()  # lists ("tools", ...) changed since last listed
        self._relay = None  # a session's: what else the server notifies goes to it
        self._task_tools = {}  # tool name -> execution.taskSupport, as last listed
        self.era_source = None
        self.protocol_version = None
        self.initialize_result = None
        self.discover_result = None
        self.server_info = {}
        self.capabilities = {}
        self.instructions = None

    @property
    def capabilities(self):
        return self._capabilities

    @capabilities.setter
    def capabilities(self, value):  # and what a call reads of them each time
        self._capabilities = value
        self._tool_tasks = _is_declared(_capability(value, ("tasks", "requests", "tools",
                                                            "call")))

    # -- lifecycle ------------------------------------------------------------

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def open(self):
        """Start the server and settle the protocol era and version. Idempotent.

        Raises LaunchError/CommandNotFound if it cannot start, and any MCPError
        from the handshake or discovery; the server is stopped again on failure.
        """
        if self._opened:
            return
        self._opened = True
        try:
            self._transport.start()
            state = self._transport.negotiated()  # a session's: settled already
            if state is not None:
                self._resume(state)
            while state is None:
                try:
                    self._settle()
                    break
                except AuthError as e:  # authorized anew (OAuth): once more
                    if not self._transport.authorize(e):
                        raise
            if self.log_level is not None and not self.era.modern:  # modern: in _meta
                self._set_log_level()
        except BaseException:
            self.close()
            self.era = self.era_source = self.protocol_version = None  # not settled
            raise

    def _settle(self):
        """The era and version: probed, remembered, or as pinned."""
        pinned = self.pinned_version
        if pinned is None and self.remembered_version is not None:
            try:
                return self._handshake(self.remembered_version, "remembered")
            except (ServerError, ProtocolError):
                pass  # it speaks otherwise now: probed as if never seen
        if pinned is None:
            self._probe()
        elif _is_modern(pinned):
            self._discover(pinned, "pinned")
        else:
            self._handshake(pinned, "pinned")

    def _resume(self, state):
        """Take up the era and handshake a session settled (see Sessions)."""
        for name in _SETTLED:
            setattr(self, name, state.get(name))
        self.server_info, self.capabilities = _dict(self.server_info), _dict(self.capabilities)
        self._speak(self.era, self.protocol_version, self.era_source)

    def abort(self):
        """Kill the server at once (safe in a signal handler); ``close`` still
        reaps it. Raises nothing."""
        self._transport.abort()

    def close(self):
        """Stop and reap the server. Idempotent, bounded in time."""
        # A server that let a request time out is not waited on for long.
        self._transport.close(_LINGER if self._unresponsive else None)

    @property
    def pid(self):
        """The server's process id (also its process group id), or None."""
        return self._transport.pid

    @property
    def stderr_tail(self):
        """The last STDERR_TAIL_BYTES of the server's stderr, as text."""
        return self._transport.last_words

    @property
    def max_bytes(self):
        """The largest message accepted from the server, in bytes."""
        return self._transport.max_bytes

    @property
    def transport(self):
        """How the server is reached, for people: "stdio", or "streamable HTTP
        URL" and its session, if any (the URL's query and password left out)."""
        return self._transport.describe()

    @property
    def env_names(self):
        """The sorted names (never the values) of the environment variables the
        server was started with; None over HTTP."""
        return self._transport.env_names()

    @property
    def client_capabilities(self):
        """What this client declares: only what it was given handlers for."""
        capabilities = {}
        if self.roots is not None:
            capabilities["roots"] = {}
        if self.on_sample is not None:
            capabilities["sampling"] = {"tools": {}} if self.sampling_tools else {}
        if self.on_elicit is not None:
            capabilities["elicitation"] = {"form": {}, "url": {}}
        if self.era is not None and self.era.modern:
            # Every request may become a task; the server decides (extensions/tasks).
            capabilities["extensions"] = {_TASKS_EXTENSION: {}}
        return capabilities

    # -- the protocol era -----------------------------------------------------

    def _probe(self):
        """Find the server's era (2026-07-28 basic/transports/stdio, "Backward Compatibility").

        ``server/discover`` first: a result or a modern error means modern.
        Any other error means legacy. Silence past the probe time also sends
        ``initialize``; whichever then answers first decides, so a slow
        starter is not misjudged and a silent legacy server still works.
        """
        self._speak("modern", LATEST_PROTOCOL_VERSION)
        discover = self._start("server/discover", None, None)
        self._wait([discover], until=time.monotonic() + min(self.probe_timeout, discover.timeout))
        if discover.done and not isinstance(discover.error, RequestTimeout):
            if not self._adopt(discover, "discover"):
                self._handshake(LATEST_LEGACY_VERSION, "probe fallback")
            return
        # Both are out now: initialize speaks for the legacy era, while the
        # server's requests wait to see which answers (see _server_request).
        self._racing = True
        try:
            self._speak("legacy", LATEST_LEGACY_VERSION)
            initialize = self._start("initialize",
                                     self._initialize_params(LATEST_LEGACY_VERSION), None)
            # A late DiscoverResult still counts, for as long as initialize may take.
            discover.lasts_as_long_as(initialize)
            while True:
                self._wait([c for c in (discover, initialize) if not c.done], first=True)
                if discover.done and _is_discover_result(discover.result):
                    self._racing = False
                    self._abandon(initialize)
                    self._speak("modern", LATEST_PROTOCOL_VERSION)
                    self._adopt(discover, "discover")
                    return
                # An error to initialize says little while discover may still answer
                # (a modern server refuses initialize): it counts once discover has failed.
                if initialize.done and (initialize.error is None or discover.done):
                    self._racing = False
                    self._abandon(discover)
                    if isinstance(discover.error, RequestTimeout) and getattr(
                            initialize.error, "code", None) in _NO_HANDSHAKE:
                        raise discover.error  # a modern server, too slow for the time given
                    self._handshake(LATEST_LEGACY_VERSION, "probe fallback", initialize)
                    # It answered: a discover it let pass (a legacy server may say
                    # nothing to a method it does not know) does not cut its shutdown short.
                    self._unresponsive = False
                    return
        finally:
            self._racing = False

    def _adopt(self, discover, how):
        """Act on a discover answer; False means the server is legacy."""
        error = discover.error
        if error is None:
            result = self._result(discover)
            if not _is_discover_result(result):
                return False  # a lenient legacy server answering anything with {}
            versions = result["supportedVersions"]
            if self.protocol_version not in versions:
                version = _best_version(versions)
                if not _is_modern(version):
                    self._handshake(version, how)
                    return True
                self._speak("modern", version)
            self._use_discover(result, how)
            return True
        if not isinstance(error, ServerError) or error.code not in _MODERN_ERRORS:
            if isinstance(error, (ServerError, _BadErrorObject)):  # any error answer: legacy
                return False
            if getattr(error, "status", None) in (400, 404, 405):
                # 2026-07-28 streamable-http, "Backward Compatibility": refused over
                # HTTP with no modern error in the body, it is a legacy server.
                return False
            raise error
        if error.code != _UNSUPPORTED_VERSION:
            raise error
        version = self._other_version(error, self.protocol_version)
        if _is_modern(version):
            self._discover(version, how)
        else:
            self._handshake(version, how)
        return True

    def _discover(self, version, how):
        self._speak("modern", version)
        self._use_discover(self.request("server/discover"), how)

    def _use_discover(self, result, how):
        kind = self.era.kind(result)
        if kind != "complete":  # the probe reads it without _complete
            raise _unusable("server/discover", kind, result)
        self.discover_result = result
        meta = _dict(result.get("_meta"))
        self.server_info = _dict(meta.get("io.modelcontextprotocol/serverInfo"))
        self.capabilities = _dict(result.get("capabilities"))
        self.instructions = result.get("instructions")
        self._speak("modern", self.protocol_version, how)

    def _speak(self, era, version, how=None):
        """The one place the era and protocol version change. ``era``: "modern" or
        "legacy", what requests are shaped for; ``how`` once they are settled
        (era_source). What the server asked meanwhile is handled as the era
        now stands."""
        self.era, self.protocol_version = _ERAS[era], version
        self._era_meta = self.era.meta(self)
        if how is not None:
            self.era_source = how
            self._transport.settled(self.era, version)
        self._settle_deferred()

    def _other_version(self, error, tried):
        """The version to offer after an UnsupportedProtocolVersion error (-32022)
        to ``tried``: the best both sides speak (basic/versioning). The one rule
        for the probe, the handshake and modern requests: a version pinned by
        the caller is never swapped (ProtocolError, exit 4)."""
        if self.pinned_version is not None:
            raise _refused_pin(error, self.pinned_version)
        return _mutual_version(error, tried)

    def _initialize_params(self, version):
        return {"protocolVersion": version, "capabilities": self.client_capabilities,
                "clientInfo": _CLIENT_INFO}

    def _handshake(self, version, how, call=None):
        """initialize (``call``: one already answered), then initialized (2025-11-25
        basic/lifecycle, "Initialization"); a server refusing the version with
        -32022 is offered the best one it names, once."""
        self._speak("legacy", version)
        try:
            result = (self._result(call) if call is not None
                      else self._complete("initialize", self._initialize_params(version), None,
                                          None))
        except ServerError as e:  # a pinned version refused never gets here (_complete)
            if e.code != _UNSUPPORTED_VERSION:
                raise
            version = self._other_version(e, version)
            if _is_modern(version):  # it answered server/discover as a legacy server would
                raise
            self._speak("legacy", version)
            result = self._complete("initialize", self._initialize_params(version), None, None)
        self._finish_handshake(result, version, how)

    def _finish_handshake(self, result, offered, how):
        version = result.get("protocolVersion")
        if self.pinned_version is not None and version != offered:
            raise ProtocolError(
                "server answered initialize with protocol version %s to the %s pinned with "
                "--protocol-version" % (_cut(json.dumps(version)), offered), "initialize")
        if version not in LEGACY_PROTOCOL_VERSIONS + (offered,):
            raise ProtocolError(
                "server answered initialize with protocol version %s to our %s; the "
                "initialize handshake speaks %s" % (json.dumps(version), offered,
                                                    ", ".join(LEGACY_PROTOCOL_VERSIONS)),
                "initialize")
        self._speak("legacy", version, how)
        self.initialize_result = result
        self.server_info = _dict(result.get("serverInfo"))
        self.capabilities = _dict(result.get("capabilities"))
        self.instructions = result.get("instructions")
        self.notify("notifications/initialized")

    def _set_log_level(self):
        # 2025-11-25 server/utilities/logging: logging/setLevel, if the server logs at all.
        if "logging" not in self.capabilities:
            self._warn("server", "server does not offer logging; log level not set")
            return
        try:
            self.request("logging/setLevel", {"level": self.log_level})
        except ServerError as e:
            self._warn("server", "server refused logging/setLevel: %s" % e)

    # -- requests -------------------------------------------------------------

    def request(self, method, params=None, timeout=None, on_progress=None):
        """Send one request and wait for its complete result (a dict).

        A modern server's ``input_required`` answers are fulfilled through the
        roots/elicitation/sampling handlers and the request retried (bounded).
        Raises ServerError for a JSON-RPC error answer, RequestTimeout (after
        sending ``notifications/cancelled``), ConnectionLost, ProtocolError,
        UsageError for params JSON cannot carry (NaN), what ``open()`` raises
        on first use, and what a handler raises. The methods below are built
        on it and raise the same. A progressToken goes with every tools/call,
        and with any request given ``on_progress``, which gets each progress
        notification's params. ``initialize`` and a notification are not
        requests to send (UsageError): open() initializes, notify() notifies.
        """
        _requestable(method)
        return self._complete(method, params, timeout, on_progress)

    def notify(self, method, params=None):
        """Send one notification.

        Raises ConnectionLost (or the ProtocolError that ended the connection)
        if the server is gone, UsageError for params JSON cannot carry.
        """
        self._ensure_open()
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def ping(self, timeout=None):
        """Check the server answers; returns the empty result of the era.

        Legacy servers get ``ping`` ({} back); 2026-07-28 removed it, so modern
        ones get ``server/discover``, the cheapest request they must serve, and
        the result is 2026-07-28's empty result, ``{"resultType": "complete"}``.
        """
        self._ensure_open()
        self.request(self.era.ping, None, timeout)
        return {"resultType": "complete"} if self.era.modern else {}

    def list_all(self, method, timeout=None):
        """A list request followed through every page, as one result.

        ``method`` is tools/list, prompts/list, resources/list,
        resources/templates/list or skills/list. The result holds every page's items under
        the list's key and the last page's other fields (resultType, _meta),
        without nextCursor; its ttlMs and cacheScope are those of the whole:
        the shortest-lived page's, and "private" if any page is. Raises what
        ``request`` does,
        and ProtocolError for pages that loop, never end, or together exceed
        max_bytes.
        """
        if not isinstance(method, str) or method not in _LISTS:
            raise UsageError("list_all takes %s, not %s" % (", ".join(_LISTS), _arg(method)))
        self.list_changed.discard(_LISTS[method])  # a change from here on is in this listing
        return self._paginate(method, _LISTS[method], timeout)

    def list_tools(self, timeout=None):
        """Every tool the server offers, all pages, as a list of Tool dicts."""
        return self.list_all("tools/list", timeout)["tools"]

    def call_tool(self, name, arguments=None, timeout=None, on_progress=None, detach=False):
        """Call a tool; returns the CallToolResult dict (check its ``isError``).

        ``on_progress`` is called with the params of each progress notification
        for this call (a progressToken is always sent).

        A tool the server runs as a task (2025-11-25 basic/utilities/tasks;
        the 2026-07-28 extension io.modelcontextprotocol/tasks) is waited
        for: polled at the server's interval, input it asks for answered by
        the handlers, and its result returned as any call's. ``timeout``
        bounds each poll and ``max_time`` the whole wait, which, when it
        passes, leaves the task running: RequestTimeout with ``task_id``.
        Ctrl-C sends tasks/cancel. A task that fails raises ServerError with
        its error; one the server cancelled or forgot, ServerError too.
        ``detach``: return the Task (a dict with taskId and status) without
        waiting, when the server makes one (a tool whose taskSupport is
        "optional" is then asked to, in 2025-11-25).
        """
        params = {"name": name, "arguments": arguments if arguments is not None else {}}
        if not self._opened:
            _check_request("tools/call", params, timeout, on_progress)  # before anything starts
            self.open()
        if self._tool_tasks and self._task_support(name, detach):
            params["task"] = {}
        result = self._complete("tools/call", params, timeout, on_progress, detach=detach)
        return self.era.task_of(result) if detach and self.era.kind(result) == "task" else result

    def get_task(self, task_id, timeout=None):
        """One look at a task (tasks/get): the Task dict, as the server sent it."""
        return self.request("tasks/get", {"taskId": task_id}, timeout)

    def wait_task(self, task_id, timeout=None):
        """Wait for a task started earlier (by this process or another) as
        ``call_tool`` waits; its CallToolResult. Raises as call_tool does."""
        if not isinstance(task_id, str) or not task_id:
            raise UsageError("a task id is a non-empty string, not %s" % _arg(task_id))
        self._ensure_open()
        timeout = self.timeout if timeout is None else _seconds(timeout, "timeout")
        cap = _time_cap(timeout, self.max_time)
        request = _Request("tools/call", None, timeout, limit=time.monotonic() + cap)
        request.task = _Task(task_id, cap)
        self._tasks[task_id] = request
        self._plan(request, "tasks/get")
        return self._drive(request)

    def cancel_task(self, task_id, timeout=None):
        """Ask the server to cancel a task (tasks/cancel); its acknowledgement
        (2025-11-25: the Task). Cancelling is the server's to carry out."""
        return self.request("tasks/cancel", {"taskId": task_id}, timeout)

    def list_tasks(self, timeout=None):
        """The server's tasks (tasks/list, all pages), as a list of Task dicts.
        2026-07-28's tasks extension has no such request: ServerError."""
        self._ensure_open()
        if self.era.modern:
            raise ServerError("the server offers no tasks/list (2026-07-28 tasks have none)",
                              "tasks/list", _METHOD_NOT_FOUND)
        return self._paginate("tasks/list", "tasks", timeout)["tasks"]

    def _task_support(self, name, detach):
        """Whether a call of tool ``name`` asks for a task (2025-11-25 "Tool-Level
        Negotiation"): only where the server declares tasks.requests.tools.call,
        and the tool's execution.taskSupport is "required", or "optional" and
        the caller detaches. The tool's listing is looked up, listing first
        if it is not known. A 2026-07-28 server decides for itself."""
        if self.era.modern or not self._tool_tasks:
            return False
        if name not in self._task_tools:
            try:
                self.list_all("tools/list")
            except MCPError:
                pass  # the call says what is wrong
        support = self._task_tools.get(name)
        return support == "required" or support == "optional" and bool(detach)

    def list_resources(self, timeout=None):
        """Every resource, all pages, as a list of Resource dicts."""
        return self.list_all("resources/list", timeout)["resources"]

    def list_resource_templates(self, timeout=None):
        """Every resource template, all pages, as a list of ResourceTemplate dicts."""
        return self.list_all("resources/templates/list", timeout)["resourceTemplates"]

    def read_resource(self, uri, timeout=None):
        """Read a resource; returns the ReadResourceResult dict."""
        return self.request("resources/read", {"uri": uri}, timeout)

    def list_skills(self, timeout=None):
        """The skills the server publishes (the extension io.modelcontextprotocol/
        skills: skills/list, all pages), as a list of Skill entry dicts as the
        server gave them (unchecked: see read_skill_file). A listing may be
        partial; get_skill reaches a skill it leaves out. Raises ServerError
        (no request sent) where the server does not declare the extension,
        and what ``request`` raises."""
        self._skills_declared("skills/list")
        return self.list_all("skills/list", timeout)["skills"]

    def get_skill(self, uri, timeout=None):
        """The entry of the skill whose SKILL.md is at ``uri`` (skills/get): a
        Skill dict, unchecked. Raises ServerError (-32602) for a URI that names
        no skill of the server's, and as list_skills does."""
        if not isinstance(uri, str):
            raise UsageError("a skill's URI is a string, not %s" % _arg(uri))
        self._skills_declared("skills/get")
        skill = self.request("skills/get", {"uri": uri}, timeout).get("skill")
        if not isinstance(skill, dict):
            raise ProtocolError("skills/get answered without a skill object", "skills/get")
        if skill.get("uri") != uri:
            raise SkillRefused("skills/get for %s answered the skill %s, so it is not used"
                               % (uri, _show(skill.get("uri"))), uri)
        return skill

    def read_skill_file(self, skill, uri=None, timeout=None, allow_dynamic=False):
        """One file of a skill (``uri``; None: its SKILL.md), read with
        resources/read and verified against the entry ``skill`` (from
        list_skills or get_skill) before it is returned: its bytes.

        The entry is checked first (the extension's limits, every file inside
        the skill's directory, a file list or "dynamic"); a file the list does
        not name is never requested. The bytes must have the entry's size and
        SHA-256, and SKILL.md's front matter must equal the entry's
        ``frontmatter`` field by field. A "dynamic" skill has no digests: it
        is read only with ``allow_dynamic``, unverified but for the front
        matter. Raises SkillRefused (exit 7) for all of these, and what
        ``request`` raises. Digests are not signatures: a server that lies
        consistently is believed.
        """
        return self._read_skill_file(skill, _checked_skill(skill, allow_dynamic), uri, timeout)

    def _read_skill_file(self, skill, files, uri, timeout):
        """read_skill_file of an entry already checked: ``files`` is what
        _checked_skill gave for it (fetch_skill checks it once for all)."""
        uri = skill["uri"] if uri is None else uri
        if not isinstance(uri, str):
            raise UsageError("a skill file's URI is a string, not %s" % _arg(uri))
        if files is None:
            _skill_relative(skill["uri"], uri)  # inside the skill, or refused
            listed = None
        else:
            listed = files.get(uri)
            if listed is None:
                raise SkillRefused("%s is not a file of skill %s (its entry does not list "
                                   "it), so it is not read" % (uri, skill["uri"]),
                                   skill["uri"], uri)
        data = _skill_bytes(self.read_resource(uri, timeout), uri, skill["uri"])
        if listed is not None:
            _verify_skill_bytes(data, uri, listed, skill["uri"])
        if uri == skill["uri"]:
            _verify_front_matter(data, skill)
        return data

    def read_directory(self, uri, timeout=None):
        """The direct children of a directory resource (resources/directory/
        read, all pages), as Resource dicts; only of a server declaring the
        skills extension's ``directoryRead``. Raises ServerError (no request
        sent) otherwise, and what ``request`` raises."""
        self._ensure_open()
        if _capability(self.capabilities, _CAPABILITY_OF["resources/directory/read"]) \
                is not True:  # a client MUST NOT ask one that does not (skills.md)
            raise ServerError("the server does not declare directoryRead, so it cannot read "
                              "directories", "resources/directory/read", _METHOD_NOT_FOUND)
        return self._paginate("resources/directory/read", "resources", timeout,
                              {"uri": uri})["resources"]

    def _skills_declared(self, method):
        self._ensure_open()
        if not _is_declared(_capability(self.capabilities, _CAPABILITY_OF[method])):
            raise ServerError("the server publishes no skills (no %s extension)"
                              % _SKILLS_EXTENSION, method, _METHOD_NOT_FOUND)

    def list_prompts(self, timeout=None):
        """Every prompt, all pages, as a list of Prompt dicts."""
        return self.list_all("prompts/list", timeout)["prompts"]

    def get_prompt(self, name, arguments=None, timeout=None):
        """Get a prompt filled with ``arguments`` (str to str); the GetPromptResult dict."""
        params = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return self.request("prompts/get", params, timeout)

    def complete(self, ref, argument, value, context=None, timeout=None):
        """Complete an argument (server/utilities/completion); the CompleteResult dict.

        ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": <template>}``; ``context`` maps
        already-chosen argument names to values.
        """
        params = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return self.request("completion/complete", params, timeout)

    def adopt_tools(self, tools):
        """Take tools listed earlier (a cache of the caller's) as a tools/list
        result: the transport learns from them what it needs to call them
        (2026-07-28 x-mcp-header), so a tools/call need not list first.
        Returns the ones it can call."""
        self._ensure_open()
        return self._callable([_dict(tool) for tool in tools])

    def track_changes(self, lists=("tools",)):
        """Have the server report changes to ``lists`` ("tools", "prompts",
        "resources") for the rest of the session; ``list_changed`` then names
        each list that changed since it was last listed.

        A legacy server reports them unasked (over HTTP on the stream this
        opens); a 2026-07-28 one is asked with subscriptions/listen, which must
        be acknowledged within the timeout. Raises what ``request`` does.
        """
        self._ensure_open()
        self.era.follow(self, (), lists, None, [])

    def watch(self, uris=(), tools=False, until=None):
        """Follow changes: a generator that yields each as the server reports it,
        ``("resource", uri)`` for an update of one of ``uris`` and ``("tools",
        None)`` for a change to the tool list (``tools=True``), until ``until``
        (monotonic; None: no end) passes or the server ends the subscription.
        Each is yielded once at the start, when the subscription is in place,
        for the caller to read its first version; changes that come faster
        than they are taken are yielded once.

        Legacy era: resources/subscribe for each uri, and the tool list's
        changes come unasked; 2026-07-28: one subscriptions/listen, whose
        acknowledgment must name everything asked for (basic/patterns/
        subscriptions). Leaving the generator unsubscribes, or cancels the
        listen. Raises UsageError if the server does not declare
        resources.subscribe (uris) or tools.listChanged (tools), or declines
        what is asked, and what ``request`` raises.
        """
        if isinstance(uris, (str, bytes)) or not hasattr(uris, "__iter__"):
            raise UsageError("uris is a list of URIs, not %s" % _arg(uris))
        uris = list(uris)
        if until is not None and (isinstance(until, bool) or not isinstance(
                until, (int, float)) or until != until):
            raise UsageError("until is a time.monotonic() value, not %s" % _arg(until))
        self._ensure_open()
        for path, wanted in ((("resources", "subscribe"), uris),
                             (("tools", "listChanged"), tools)):  # flags: declared true
            if wanted and _capability(self.capabilities, path) is not True:
                raise UsageError("the server does not declare %s, so it cannot be watched"
                                 % ".".join(path))
        listen, subscribed, interrupted = None, [], False
        self._watched = set(uris) | ({None} if tools else set())  # None: the tool list
        self._changes = collections.deque()
        try:
            listen = self.era.follow(self, uris, ("tools",) if tools else (), until,
                                     subscribed)
            # First each thing watched, once the subscription is in place: its
            # first version read then, no update comes unseen.
            self._changes.extend([("resource", uri) for uri in uris]
                                 + ([("tools", None)] if tools else []))
            for change in self._changes_until(listen, until):
                yield change
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            self._watched, self._changes = None, collections.deque()
            if listen is not None:
                self._end_listen(listen)
            for uri in [] if interrupted else subscribed:
                try:  # a courtesy: the server forgets them when the session ends
                    self.request("resources/unsubscribe", {"uri": uri},
                                 min(self.timeout, _UNSUBSCRIBE_WAIT))
                except MCPError:
                    break

    def _changes_until(self, listen, until):
        """The changes a watch yields, as they come (see watch)."""
        far = time.monotonic() + _MAX_SECONDS
        while True:
            while self._changes:
                yield self._changes.popleft()
            if listen is not None and listen.done:
                self._result(listen.call)  # an error raises; a result is the server's goodbye
                return
            if until is not None and time.monotonic() >= until:
                return
            self.wait([listen] if listen is not None else [], until=until or far,
                      stop=lambda: bool(self._changes))

    def _listen(self, notifications, until=None):
        """Open a subscriptions/listen stream and wait, the timeout (or until
        ``until``) at most, for its acknowledgment (2026-07-28 basic/patterns/
        subscriptions); the request, open until _end_listen. UsageError if the
        server declines part of it."""
        infinite = float("inf")
        listen = self.start("subscriptions/listen", {"notifications": notifications}, infinite,
                            limit=infinite)
        self._listens[listen.id] = None
        wait = self.timeout if until is None else max(0.0, min(self.timeout,
                                                               until - time.monotonic()))
        self.wait([listen], until=time.monotonic() + wait,
                  stop=lambda: self._listens.get(listen.id) is not None)
        granted, ended, error = self._listens.get(listen.id), listen.done, listen.error
        if ended or granted is None:
            self._end_listen(listen)
            if error is not None:
                raise error
            raise (ProtocolError("the server ended subscriptions/listen before acknowledging "
                                 "it", "subscriptions/listen") if ended
                   else RequestTimeout("subscriptions/listen was not acknowledged within %gs"
                                       % round(wait, 1), "subscriptions/listen",
                                       self._transport.last_words, wait))
        declined = [name for name, value in sorted(notifications.items())
                    if value is True and granted.get(name) is not True]
        declined += ["resourceSubscriptions %s" % uri
                     for uri in notifications.get("resourceSubscriptions", ())
                     if uri not in _list(granted.get("resourceSubscriptions"))]
        if declined:
            self._end_listen(listen)
            raise UsageError("the server declined to report %s (subscriptions/listen "
                             "acknowledged without it)" % ", ".join(declined))
        return listen

    def _end_listen(self, listen):
        """Cancel a listen: its stream closed (HTTP) or notifications/cancelled (stdio)."""
        self._listens.pop(listen.id, None)
        self.expire(listen, "the watch ended")

    def batch(self, requests, timeout=None, on_wait=None):
        """Pipeline many requests over this session; yields outcomes in input order.

        ``requests`` is an iterable of (method, params), or (method, params,
        on_progress) to follow that request's progress. Each outcome is the
        result dict or the MCPError that request ended with; up to
        MAX_IN_FLIGHT requests are in flight at once, and each is finished
        (input_required rounds included) like ``request``; an entry that is
        not a (method, params) pair ends as UsageError. ``requests`` may also
        yield None for "none is ready yet" (a program still writing them): the
        batch goes on with those in flight, and asks for more once the
        function ``waker()`` returned is called. ``on_wait`` is called
        whenever the batch is about to wait for the server, every outcome so
        far yielded (a caller writing them flushes its output there). A
        generator: nothing is sent until it is iterated, and requests still in
        flight when it is left early are cancelled. Raises only what a
        callback or handler raises beyond MCPError, the ConnectionLost of a
        server gone while no request was in flight, and KeyboardInterrupt
        (also thrown in by a caller interrupted between two outcomes): then
        ``interrupted_batch`` holds the outcome of every request begun and
        not yet taken, in order, as far as it came (its result, or for one
        cut short an MCPError whose exit_code is 130); the outcome yielded
        last is its first again, as its caller may not have dealt with it.
        """
        window = collections.deque()
        try:
            requests = iter(requests)
        except TypeError:
            raise UsageError("requests is an iterable of (method, params), not %s"
                             % _arg(requests))
        exhausted, ready, wakes = False, True, self._wakes
        self.interrupted_batch = []

        def woken():
            return self._wakes != wakes

        def landed():  # a task came back to a line behind the head: its polls begin
            return self._landed

        def woken_or_landed():
            return self._landed or self._wakes != wakes

        try:
            while window or not exhausted:
                if not exhausted and (len(window) <= MAX_IN_FLIGHT // 2 if ready
                                      else woken()):
                    wakes = self._wakes  # before asking: a wake after it is not lost
                    exhausted, ready = self._refill(window, requests, timeout)
                if not window:
                    if exhausted:
                        break
                    self._wait([], until=time.monotonic() + _MAX_WAIT, stop=woken,
                               on_wait=on_wait)
                    continue
                head = window[0]
                if isinstance(head, _Request) and not self._move_window(window):
                    calls, until = self._waited(window)
                    self._wait(calls, until, first=True, on_wait=on_wait,
                               stop=landed if ready or exhausted else woken_or_landed)
                    continue  # the head, or a task's round, is done; a task came; or woken
                yield head.outcome if isinstance(head, _Request) else head
                window.popleft()  # taken: one interrupted while it handled it finds it kept
        except KeyboardInterrupt:  # every task waited on is cancelled; nothing is lost
            self._interrupted()
            self.interrupted_batch = [self._as_far(entry) if isinstance(entry, _Request)
                                      else entry for entry in window]
            window.clear()
            raise
        finally:  # left early (break, an exception): what is still in flight is cancelled
            for request in window:
                if isinstance(request, _Request):
                    self.expire(request, "the client stopped waiting")
                    if request.task is not None:
                        self._tasks.pop(request.task.id, None)

    def _as_far(self, request):
        """After Ctrl-C, the outcome of ``request`` as far as it came: its own;
        the result or error of a round answered and not yet looked at; or
        that it was cut short (exit code 130)."""
        call = request.call
        if request.finished:
            return request.outcome
        task_id = request.task and request.task.id
        if request.task is None and call is not None and call.done:
            if call.error is not None:
                return call.error
            if call.kind == "complete":
                return call.result
            if call.kind == "task":  # come, not yet looked at: cancelled with the others
                task_id = _dict(self.era.task_of(call.result)).get("taskId")
        return _interruption(request.method, task_id)

    def waker(self):
        """A function that ends the Client's wait for the server early, for one
        other thread to call: a ``batch`` whose requests had none ready asks
        for them again. Call it after a request is ready. The Client must be open."""
        self._ensure_open()
        wake = self._transport.waker()

        def woken():
            self._wakes += 1
            wake()
        return woken

    def relay(self, function):
        """Give ``function(method, params)`` every notification but progress too."""
        self._relay = function

    def settled(self):
        """The era and handshake as open() settled them, for a session's clients."""
        return dict((name, getattr(self, name)) for name in _SETTLED)

    def _refill(self, window, requests, timeout):
        """Start requests until the window is full or none is ready; (no more
        requests, more may be ready now).

        Refilled from half full, their frames go out in one write.
        """
        self._transport.hold()
        try:
            while len(window) < MAX_IN_FLIGHT:
                try:
                    request = next(requests)
                except StopIteration:
                    return True, True
                if request is None:
                    return False, False
                window.append(self._started(request, timeout))
            return False, True
        finally:
            self._transport.flush()

    def _started(self, entry, timeout):
        """A batch entry, started: its _Request, or the MCPError it failed with."""
        try:
            parts = tuple(entry)
        except TypeError:
            parts = ()
        if len(parts) not in (2, 3) or len(parts) == 3 and not (
                parts[2] is None or callable(parts[2])):
            return UsageError("a batch request is a (method, params) pair, or (method, params, "
                              "on_progress), not %s" % _arg(entry))
        method, params, on_progress = (parts + (None,))[:3]
        try:
            return self.start(method, params, timeout, on_progress)
        except MCPError as e:
            return e

    def _move_window(self, window):
        """Move the batch's requests on as far as they go without waiting: the
        head, and those waiting on a task (their polls go on while the lines
        before them are waited for); True once the head is finished. Other
        lines move on when they come to the head, as their answers keep
        meanwhile: a plain batch looks at its head only."""
        if self._tasks or self._landed:
            self._landed = False
            for request in itertools.islice(window, 1, None):
                if isinstance(request, _Request) and not request.finished and (
                        request.task is not None or request.call is not None
                        and request.call.done and request.call.method == "tools/call"
                        and self.era.kind(_dict(request.call.result)) == "task"):
                    self._move(request)
        return self._move(window[0])

    def _waited(self, window):
        """What a batch waits for next: (the rounds in flight of the head and
        of the requests waiting on a task, when the first planned round is due)."""
        calls, dues = [], []
        for request in window if self._tasks else itertools.islice(window, 1):
            if isinstance(request, _Request) and not request.finished and (
                    request is window[0] or request.task is not None):
                if request.call is None:
                    dues.append(min(request.due or 0, request.limit))
                elif not request.call.done:
                    calls.append(request.call)
        return calls, min(dues) if dues else None

    def _paginate(self, method, key, timeout, asked=None):
        # server/utilities/pagination: follow nextCursor. A cursor is opaque (2026-07-28:
        # nothing may be read from its value), so one seen before is followed too: a
        # looping server is held by MAX_PAGES, one message's size and one request's time.
        # ``asked``: params every page carries (resources/directory/read's uri).
        self._ensure_open()  # the handshake is not the list's: its limit starts after
        asked = asked or {}
        items, pages, params, freshness = [], 0, dict(asked), []
        timeout = self.timeout if timeout is None else timeout
        cap = _time_cap(timeout, self.max_time)
        limit, start = time.monotonic() + cap, self._transport.received

        def overdue():
            self._unresponsive = True
            error = RequestTimeout("%s took longer than its time limit of %gs over %d pages"
                                   % (method, cap, pages + 1), method,
                                   self._transport.last_words, timeout)
            if items:  # the pages before it: nothing is lost
                error.result = dict(freshness[-1], **{key: list(items)})
            return error

        for _ in range(MAX_PAGES):
            if time.monotonic() >= limit:
                raise overdue()
            try:  # every page within the one limit, as the rounds of an MRTR request
                result = self._complete(method, params or None, timeout, limit=limit)
            except RequestTimeout:
                if time.monotonic() >= limit:  # the limit ran out, not this page's timeout
                    raise overdue()
                raise
            except MCPError as e:  # with the pages before it: nothing is lost
                if e.result is not None:
                    e.result = _pages(items, e.result, key)
                elif items:  # the server went away, or timed out, past the first page
                    e.result = dict(freshness[-1], **{key: list(items)})
                raise
            page = result.get(key)
            if not isinstance(page, list):
                raise ProtocolError("%s result has no %r list" % (method, key), method,
                                    result=_pages(items, result, key))
            if method == "tools/list":
                page = self._callable(page)
            if pages and self._transport.received - start > self._transport.max_bytes:
                raise ProtocolError("%s pages came to over %d bytes together (raise "
                                    "--max-bytes to allow it)"
                                    % (method, self._transport.max_bytes), method)
            items.extend(page)
            freshness.append(result)
            cursor = result.get("nextCursor")
            if cursor is None:
                result = _freshness(freshness, dict(result))
                result.pop("nextCursor", None)  # null: the last page
                result[key] = items
                return result
            if not isinstance(cursor, str):  # shown with the pages so far
                raise ProtocolError("%s answered a nextCursor that is not a string: %s"
                                    % (method, _show(cursor)), method,
                                    result=dict(result, **{key: items}))
            pages += 1
            params = dict(asked, cursor=cursor)
        raise ProtocolError("%s returned more than %d pages" % (method, MAX_PAGES), method,
                            result=dict(result, **{key: items}))

    # -- the request machinery ------------------------------------------------

    def _ready(self, method):
        """The engine's hook (see _Engine): before a ``method`` request goes, the
        session is open, a tool call's headers known, and strict refuses what
        the server did not declare."""
        if not self._opened:
            self.open()
        if method == "tools/call" and self._transport.needs_tools():
            try:  # the headers a tool's arguments go in come from its listing
                self.list_all("tools/list")
            except MCPError:
                self._transport.vet_tools([])  # not again; the call goes without them
        if self.strict and self.undeclared(method):
            raise ProtocolError("%s, so %s is not sent in strict mode"
                                % (_not_offered(self.undeclared(method)), method), method)

    def _recovered(self, request, done, error):
        """The engine's hook (see _Engine): after round ``done`` of ``request``
        failed with ``error``, the next round's _Call where the session mends
        it, else ``error`` raised."""
        method = request.method
        if isinstance(error, AuthError):
            # 2025-11-25 basic/authorization: a refused token, renewed (or a
            # step-up for more scopes), and the request sent again, in a time
            # limit of its own: a person may have taken a while.
            if not self._transport.authorize(error):
                raise error
            request.limit = None
            return self._begin(request)
        if isinstance(error, _SessionGone):
            # 2025-11-25 transports, "Session Management": a 404 means the
            # server ended the session; start a new one, once, and ask again.
            if request.renewed or self.era.modern or method == "initialize":
                raise error
            request.renewed = True
            if self._transport.renew(done.error.session):  # else renewed already
                self._handshake(self.protocol_version, self.era_source)
            return self._begin(request)
        if not isinstance(error, ServerError):
            raise error
        if error.code == _METHOD_NOT_FOUND and self.undeclared(method):
            raise ServerError("%s: %s" % (_not_offered(self.undeclared(method)),
                                          error.message), method, error.code, error.data)
        if error.code == _HEADER_MISMATCH and method == "tools/call" and not request.relisted:
            # 2026-07-28 streamable-http, "Client Behavior": the headers came
            # from a tool list the server has changed since; list anew, and
            # send the call once more. Whoever remembers the tools is told.
            request.relisted = True
            self.list_all("tools/list", request.timeout)
            self.list_changed.add("tools")
            return self._begin(request)
        if error.code != _UNSUPPORTED_VERSION:
            raise error
        # 2026-07-28 basic/versioning: retry once with a mutually supported version.
        if self.pinned_version is None and (not self.era.modern or request.version_retried):
            raise error
        version = self._other_version(error, self.protocol_version)
        if not _is_modern(version):
            raise error
        self._speak(self.era, version, self.era_source)
        request.version_retried = True
        return self._begin(request)

    def _callable(self, tools):
        """The tools the transport can call; a warning for each left out."""
        for tool in tools:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self._task_tools[tool["name"]] = _dict(tool.get("execution")).get(
                    "taskSupport", "forbidden")
        kept, rejected = self._transport.vet_tools(tools)
        for name, why in rejected:
            self._warn("server", "left out tool %s: %s" % (_show(name), why))
        return kept

    def _ensure_open(self):
        if not self._opened:
            self.open()

    def _fulfil(self, method, params, key=None, limit=None):
        """Answer what a server asks of the client, in either era; None if not offered.

        A handler runs until ``limit`` (monotonic) at most, the time limit of
        the requests it serves; _Overtime when that passes (see _within).
        """
        if method == "roots/list" and self.roots is not None:
            return {"roots": list(self.roots)}
        if method == "sampling/createMessage" and self.on_sample is not None:
            if ("tools" in params or "toolChoice" in params) and not self.sampling_tools:
                raise _Unanswerable("server asked for sampling with tools, which this client "
                                    "did not declare (sampling.tools)")

            def respond():
                answer = _sampled(self.on_sample(params))
                content = answer.get("content")
                if not self.sampling_tools and any(
                        _dict(block).get("type") == "tool_use" for block in (
                            content if isinstance(content, list) else [content])):
                    raise UsageError("the answer to sampling/createMessage uses a tool, which "
                                     "this client did not declare (sampling.tools)")
                return answer
        elif method == "elicitation/create" and self.on_elicit is not None:
            mode = params.get("mode", "form")  # 2025-06-18 had forms only, and no mode
            if mode not in _ELICITATION_MODES:  # client/elicitation, "Error Handling"
                raise _Unanswerable("server asked for elicitation in mode %s, which this "
                                    "client did not declare" % _show(mode))

            def respond():
                return self._elicited(params, self.on_elicit(params, key))
        else:
            return None
        if limit is None:
            return respond()
        left = limit - time.monotonic()
        if left <= 0:
            raise _Overtime()
        answer = _within(left, respond)
        if time.monotonic() >= limit:  # the handler caught the alarm, or outlasted it
            raise _Overtime()
        return answer

    def undeclared(self, method):
        """The capability ``method`` needs and the server did not declare, or None
        (basic/lifecycle, "Capability Negotiation": a client uses only what was
        negotiated). The Client sends such a request all the same unless
        ``strict``; the command line does not send it at all."""
        needed = (self.era or _ERAS["legacy"]).needs(method)  # before open(): the core's
        if needed is None or _is_declared(_capability(self.capabilities, needed)):
            return None
        if needed == ("completions",) and self.protocol_version == "2024-11-05":
            return None  # completion/complete came before its capability (2025-03-26)
        return needed[-1] if needed[0] == "extensions" else ".".join(needed)

    def _modern_meta(self):
        # 2026-07-28 basic/index, "_meta": what every modern request carries.
        meta = self._meta
        if meta is None or meta[_VERSION_KEY] != self.protocol_version:
            meta = self._meta = {
                _VERSION_KEY: self.protocol_version,
                "io.modelcontextprotocol/clientInfo": _CLIENT_INFO,
                "io.modelcontextprotocol/clientCapabilities": self.client_capabilities}
            if self.log_level is not None:
                meta["io.modelcontextprotocol/logLevel"] = self.log_level
        return meta

    def _server_request(self, ident, method, params, limit=None):
        """A request from the server, by era: a legacy server's is answered, a
        modern server's never is (2026-07-28 basic/transports/stdio). While the
        era is unsettled it is held, but for a ping while the probe waits for
        discover and initialize alike: a legacy server may ping before its
        handshake, and wait for the answer (2025-11-25 basic/lifecycle); it may
        send nothing else until then."""
        if not self.era.modern and (not self._racing or method == "ping"):
            self._answer(ident, method, params, limit)
        elif self.era.modern and self.era_source is not None:
            self._unanswered_request(method)
        elif len(self._deferred) < _DEFERRED_MAX:
            self._deferred.append((ident, method, params))

    def _settle_deferred(self):
        """What was held, as the era now stands (see _server_request); answering
        all of it takes one request's time limit at most."""
        deferred, self._deferred = self._deferred, []
        limit = time.monotonic() + _time_cap(self.timeout, self.max_time)
        for ident, method, params in deferred:
            self._server_request(ident, method, params, limit)

    def _unanswered_request(self, method):
        """2026-07-28 basic/transports/stdio: the client MUST NOT write responses
        (a modern server asks through input_required results); one warning a method."""
        if method in self._unanswered or len(self._unanswered) > _NOISE_WARNINGS:
            return
        self._unanswered.add(method)
        self._warn("violation", "did not answer the server's %s request: a 2026-07-28 server "
                   "asks for input in its results, and gets no responses"
                   % _cut(method, _SHOW_CHARS))

    def _answer(self, ident, method, params, limit=None):
        """Answer a request from a legacy server: a result, or a JSON-RPC error,
        within ``limit`` (monotonic; see _charge)."""
        if self._transport.backlogged():
            # It sends requests but does not read the answers: queueing more
            # would grow without end.
            if not self._backlog_warned:
                self._backlog_warned = True
                self._warn("server", "the server is not reading its input; its requests "
                           "are no longer answered")
            return
        started = time.monotonic()
        message = {"jsonrpc": "2.0", "id": ident}
        if limit is None:
            limit = self._charge()
        try:
            result = {} if method == "ping" else self._fulfil(method, _dict(params), None, limit)
            if result is None:
                message["error"] = {"code": _METHOD_NOT_FOUND,
                                    "message": "Method not found: %s" % method}
            else:
                message["result"] = result
            frame = _encode(message)  # an answer JSON cannot carry fails here, not unsent
        except _Overtime:
            message = {"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32603, "message": "the client's time limit for its requests has passed"}}
            frame = _encode(message)
        except _Unanswerable as e:
            message = {"jsonrpc": "2.0", "id": ident, "error": {"code": e.code,
                                                                "message": e.message}}
            frame = _encode(message)
            self._warn("violation", "refused the server's %s: %s" % (method, e.message))
        except Exception as e:  # a handler's failure is the server's answer, not ours
            message.pop("result", None)
            message["error"] = {"code": -32603, "message": str(e)}
            frame = _encode(message)
            self._warn("server", "could not answer the server's %s: %s" % (method, e))
        self._paused(time.monotonic() - started)
        try:
            self._send(message, answer=True, frame=frame)
        except MCPError:
            pass  # the loop reports the lost connection

    def _notified(self, method, params):
        """The engine's hook (see _Engine): a notification, but progress."""
        if self._relay is not None:
            self._relay(method, params)  # a session's server: for its clients too
        if method == "notifications/message":
            if self.on_log is not None:
                self.on_log(params)
        elif method in _LIST_CHANGES and self._ours(params):
            kind = _LIST_CHANGES[method][0]
            self.list_changed.add(kind)
            if kind == "tools" and self._watched is not None and None in self._watched:
                self._changed(("tools", None))
        elif method == "notifications/resources/updated" and self._ours(params):
            uri = params.get("uri")
            if self._watched is not None and isinstance(uri, str) and uri in self._watched:
                self._changed(("resource", uri))
        elif method == "notifications/subscriptions/acknowledged":
            ident = _dict(params.get("_meta")).get(_SUBSCRIPTION_KEY)
            if _is_id(ident) and ident in self._listens and self._listens[ident] is None:
                self._listens[ident] = _dict(params.get("notifications"))

    def _ours(self, params):
        """A change notification of a subscription of ours: a 2026-07-28 one
        carries its subscriptionId, which stdio clients MUST check."""
        if not self.era.modern:
            return True
        ident = _dict(params.get("_meta")).get(_SUBSCRIPTION_KEY)
        return _is_id(ident) and self._listens.get(ident) is not None

    def _changed(self, change):
        if change not in self._changes:  # one of each waits: a fast server cannot pile them up
            self._changes.append(change)

    def _elicited(self, params, answer):
        """A handler's ElicitResult, made to the spec's shape and checked: an
        accepted form whose content breaks the requested schema, or is not a
        flat object of strings, numbers, booleans and lists of strings, is
        declined with a warning naming the field (client/elicitation, "Form Mode
        Security": clients SHOULD validate)."""
        if (not isinstance(answer, dict) or answer.get("action") not in _ELICIT_ACTIONS
                or not isinstance(answer.get("_meta", {}), dict)):
            raise UsageError("the answer to elicitation/create is not an ElicitResult (an "
                             "object whose action is accept, decline or cancel, and whose "
                             "_meta, if any, is an object): %s" % _show(answer))
        shaped = dict((k, answer[k]) for k in ("action", "_meta") if k in answer)
        if answer["action"] != "accept" or params.get("mode", "form") != "form":
            return shaped  # content only with an accepted form
        content = answer.get("content", {})
        problem = _schema_problem(content, _dict(params.get("requestedSchema")),
                                  where="answer", formats=True) or _flat_problem(content)
        if problem:
            self._warn("server", "declined the server's question %s: %s"
                       % (_show(params.get("message", "")), problem))
            return {"action": "decline"}
        shaped["content"] = content
        return shaped

    # -- oddities -------------------------------------------------------------

    def _warn(self, kind, text):
        # A server can repeat any oddity without end: each kind is reported
        # _NOISE_WARNINGS times, then once more to say the rest are not.
        count = self._warned[kind] = self._warned.get(kind, 0) + 1
        if count > _NOISE_WARNINGS + 1 or self.on_warning is None:
            return
        if count > _NOISE_WARNINGS:
            text = _ENOUGH.get(kind, "more warnings like the last; no longer reporting them")
        self.on_warning(kind, text)

    def _noise(self, text):
        if isinstance(text, _BadUTF8):
            return self._invalid_utf8()
        if isinstance(text, _Stray):
            return self._warn("stray", text)
        if isinstance(text, _Said):
            return self._warn("session", text)
        if isinstance(text, _Batch):  # traced whole; its members are not traced again
            if self.trace is not None:
                self._record("recv", frame=text.array)
            self._batch_members = len(text.array)
            return
        if self.trace is not None:
            self._record("recv", raw=text)
        self._warn("noise", self._transport.noise % text[:80])

    def _invalid_utf8(self):
        if not self._utf8_warned:
            self._utf8_warned = True  # first: once, even if the callback fails
            self._warn("utf8", "server sent invalid UTF-8; replaced it with U+FFFD")

def _interruption(method, task_id=None):
    """The outcome of a request cut short by Ctrl-C (exit code 130)."""
    error = MCPError("%s interrupted%s" % (method, "" if task_id is None else
                                           " waiting for task %s" % task_id), method)
    error.exit_code = _EXIT_INTERRUPTED
    return error


def _is_id(value):
    """A JSON-RPC id we could have sent: an integer or a string (not a bool)."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _server_error(error, method):
    """The MCPError for a JSON-RPC error object (basic, "Error Responses")."""
    if not isinstance(error, dict):
        return _BadErrorObject("answer to %s has an error that is not an object: %s"
                               % (method, _show(error)), method)
    code = error.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        return _BadErrorObject("answer to %s has an error without an integer code: %s"
                               % (method, _show(error)), method)
    text = error.get("message")
    if not isinstance(text, str):
        text = "" if text is None else json.dumps(text)
    text = _cut(text)
    return ServerError(text if text.strip() else "(the server gave no message)", method,
                       code, error.get("data"))


def _for_method(error, method):
    """A copy of a shared transport failure, naming the request it ended."""
    import copy  # lazy: only on a failure
    error = copy.copy(error)
    error.method = method
    return error


def _unusable(method, kind, result):
    """The ProtocolError for a result neither complete nor input required of a method
    that may ask (2026-07-28 basic/index, "ResultType"; basic/patterns/mrtr)."""
    if kind == "task":  # extensions/tasks, "Supported Methods"
        return ProtocolError("%s answered with a task, which only tools/call may" % method,
                             method, result=result)
    if kind in _RESULT_TYPES:
        return ProtocolError("%s answered input_required, which only tools/call, prompts/get "
                             "and resources/read may" % method, method, result=result)
    return ProtocolError("%s answered resultType %s, which this client does not recognise"
                         % (method, _show(kind)), method, result=result)


def _freshness(pages, merged):
    """``merged`` (the last page) with the ttlMs and cacheScope of all the
    ``pages`` together (2026-07-28 server/utilities/caching): the shortest
    ttlMs (none if a page gives none), and "private" if any page is."""
    if len(pages) > 1:
        ttls = [page.get("ttlMs") for page in pages]
        if all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in ttls):
            merged["ttlMs"] = min(ttls)
        else:
            merged.pop("ttlMs", None)
        if any(page.get("cacheScope") == "private" for page in pages):
            merged["cacheScope"] = "private"
    return merged


def _pages(items, last, key):
    """A list's pages up to one that broke the protocol: the items of those
    before it, then that page as it came."""
    if not items:
        return last
    if not isinstance(last, dict):
        return {key: items}
    merged = dict(last)
    merged[key] = items + last[key] if isinstance(last.get(key), list) else items
    return merged


def _requestable(method):
    """UsageError for a method a caller may not send as a request: initialize
    (basic/lifecycle: once, by open()) and a notification (no id, notify())."""
    if isinstance(method, str) and (method == "initialize"
                                    or method.startswith("notifications/")):
        raise UsageError("%s is not a request to send: %s" % (
            _cut(method, _SHOW_CHARS), "the client initialized the server as it opened"
            if method == "initialize" else "a notification goes without an id (notify())"))


def _not_offered(capability):
    return "the server does not offer %s (it declares no %s capability)" % (capability,
                                                                          capability)


def _sampled(answer):
    """A handler's CreateMessageResult, checked (client/sampling); UsageError if it is not one."""
    problem = None
    missing = [k for k in ("role", "content", "model") if k not in _dict(answer)]
    if not isinstance(answer, dict):
        problem = "it is not a JSON object"
    elif missing:
        problem = "it has no %s" % ", ".join(missing)
    elif answer["role"] not in ("user", "assistant"):
        problem = "its role %s is neither user nor assistant" % _show(answer["role"])
    elif not isinstance(answer["model"], str):
        problem = "its model %s is not a string" % _show(answer["model"])
    elif not isinstance(answer.get("stopReason", ""), str):
        problem = "its stopReason %s is not a string" % _show(answer["stopReason"])
    elif not isinstance(answer.get("_meta", {}), dict):
        problem = "its _meta %s is not an object" % _show(answer["_meta"])
    else:
        blocks = answer["content"] if isinstance(answer["content"], list) else [answer["content"]]
        problem = "its content has no blocks" if not blocks else next(
            (p for p in map(_block_problem, blocks) if p), None)
    if problem:
        raise UsageError("the answer to sampling/createMessage is not a CreateMessageResult: "
                         "%s" % problem)
    return answer


# What each kind of sampled content block must hold (client/sampling, the schema's
# TextContent ... ToolResultContent).
_BLOCK_FIELDS = {
    "text": (("text", str),), "image": (("data", str), ("mimeType", str)),
    "audio": (("data", str), ("mimeType", str)),
    "tool_use": (("id", str), ("name", str), ("input", dict)),
    "tool_result": (("toolUseId", str), ("content", list)),
}
_TYPE_NAMES = {str: "string", dict: "object", list: "list"}


def _block_problem(block):
    kind = _dict(block).get("type")
    if not isinstance(kind, str) or kind not in _BLOCK_FIELDS:
        return "its content holds %s, not a text, image, audio, tool_use or tool_result " \
               "block" % _show(block)
    for field, shape in _BLOCK_FIELDS[kind]:
        if not isinstance(block.get(field), shape):
            return "its %s block has no %s %s" % (kind, field, _TYPE_NAMES[shape])
    return None


def _flat_problem(content):
    """What keeps form content from the ElicitResult shape: an object of strings,
    numbers, booleans and lists of strings."""
    if not isinstance(content, dict):
        return "the answers are %s, not an object" % _show(content)
    for name, value in content.items():
        if not (isinstance(value, (str, int, float)) or isinstance(value, list)
                and all(isinstance(v, str) for v in value)):
            return "answer '%s' is %s, not a string, number, boolean or list of strings" % (
                name, _show(value))
    return None


def _is_date(version):
    """Protocol versions are dates, YYYY-MM-DD (basic/versioning)."""
    if not re.match(_VERSION_FORMAT, str(version)):
        return False
    # As time.strptime would judge it, without its cost (its first call
    # imports _strptime, calendar and locale: milliseconds of a cold start).
    year, month, day = (int(part) for part in str(version).split("-"))
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    return year > 0 and 1 <= month <= 12 and 1 <= day <= days[month - 1]


def _is_modern(version):
    """Per-request-metadata revisions are 2026-07-28 and later (basic/versioning)."""
    return version in MODERN_PROTOCOL_VERSIONS or str(version) > LATEST_LEGACY_VERSION


def _is_discover_result(result):
    return isinstance(result, dict) and isinstance(result.get("supportedVersions"), list)


def _mutual_version(error, tried):
    """The best version both sides speak, from an UnsupportedProtocolVersionError."""
    supported = _dict(error.data).get("supported")
    supported = supported if isinstance(supported, list) else []
    if supported == [tried]:
        raise ProtocolError("server refused protocol version %s, the one version it "
                            "names as supported" % tried, error.method)
    return _best_version([v for v in supported if v != tried], supported)


def _refused_pin(error, version):
    """A pinned version the server refuses: the two sides share no version (exit 4)."""
    supported = _dict(error.data).get("supported")
    named = ", ".join(str(v) for v in supported) if isinstance(supported, list) else ""
    return ProtocolError("server does not support protocol version %s, pinned with "
                         "--protocol-version; it supports %s"
                         % (version, _cut(named or "(none named)")), error.method)


def _best_version(candidates, named=None):
    """Our most preferred version among ``candidates``; ProtocolError if none."""
    for version in SUPPORTED_PROTOCOL_VERSIONS:
        if version in candidates:
            return version
    named = candidates if named is None else named
    raise ProtocolError("server supports protocol versions %s; mcp_invoke speaks %s"
                        % (_cut(", ".join(str(v) for v in named[:20]) or "(none named)")
                           + (" and %d more" % (len(named) - 20) if len(named) > 20 else ""),
                           ", ".join(SUPPORTED_PROTOCOL_VERSIONS)))


def _seconds(value, name):
    """``value`` if it is a number of seconds (0 or less: at once; infinity: no
    limit); UsageError if not, or if a float cannot hold it (10**400)."""
    try:
        if isinstance(value, bool) or float(value) != value:  # NaN; not a number
            raise TypeError()
    except (TypeError, ValueError, OverflowError):
        raise UsageError("%s is a number of seconds, not %s" % (name, _arg(value)))
    return value


def _check_request(method, params, timeout, on_progress):
    """UsageError for a request's arguments of the wrong kind, before it is sent."""
    if not isinstance(method, str):
        raise UsageError("a method name is a string, not %s" % _arg(method))
    if params is not None and (not isinstance(params, dict) or "_meta" in params
                               and not isinstance(params["_meta"], dict)):
        raise UsageError("%s params must be an object, and their _meta one too" % method)
    if timeout is not None:
        _seconds(timeout, "timeout")
    if on_progress is not None and not callable(on_progress):
        raise UsageError("on_progress is a function, not %s" % _arg(on_progress))


def _never():
    """A wait's ``stop`` that lets it last until its ``until``."""
    return False


def _time_cap(timeout, max_time):
    """Most seconds one request may take, progress or not."""
    return MAX_TIME_FACTOR * timeout if max_time is None else max_time


def _is_file_uri(text):
    return text[:7].lower() == "file://"  # schemes are case-insensitive (RFC 3986)


def _root(path):
    """A roots/list entry for a path or file:// URI (client/roots)."""
    text = os.fsdecode(path) if _os_string(path) else None  # text, bytes or a path, no NUL
    if not text or _is_file_uri(text) and len(text) == 7:
        raise UsageError("a root is a path or a file:// URI, not %s" % _arg(path))
    path = text
    if _is_file_uri(path):
        uri, name = path, path.rstrip("/").rsplit("/", 1)[-1]
    else:
        # join: an absolute path stays; on Windows one without a drive (\\x) takes
        # the working directory's, as the system takes it
        path = os.path.normpath(os.path.join(_cwd(), path))
        uri = _file_uri(path)
        name = os.path.basename(path) or path
    return {"uri": uri, "name": name}


# An absolute path as a file URI (RFC 8089), its bytes percent-encoded:
# POSIX, file:///dir/x%20y; Windows, file:///C:/dir/x%20y, and a UNC path
# \\host\share\p is file://host/share/p.
if _WINDOWS:
    def _file_uri(path):
        import urllib.parse  # lazy: only with roots
        path = path.replace("\\", "/")
        if path.startswith("//"):
            host, _, rest = path[2:].partition("/")
            return "file://%s/%s" % (urllib.parse.quote(os.fsencode(host)),
                                     urllib.parse.quote(os.fsencode(rest)))
        return "file:///" + urllib.parse.quote(os.fsencode(path), safe="/:")
else:
    def _file_uri(path):
        import urllib.parse  # lazy: only with roots
        return "file://" + urllib.parse.quote(os.fsencode(path))


def fetch_skill(client, skill, directory, server, allow_dynamic=False, timeout=None):
    """Write every file of a published skill, each verified as
    Client.read_skill_file verifies it, under ``directory``/``server``/
    SKILL-PATH/ (SKILL-PATH: the skill's URI without its scheme and
    /SKILL.md, percent-decoded); returns (that path, the number of files).

    ``skill`` is an entry (Client.list_skills, Client.get_skill). ``server``
    is the caller's own name for the server, not the one it gives itself: the
    path keeps the skill's origin (skills.md "Skill URIs"). Every name from
    the server is checked as a plain file name before anything is made. The
    skill is built beside its place and swapped in only when every file
    verified, so a failure leaves an earlier copy whole; files are never
    made executable and nothing is run. A "dynamic" skill (only with
    ``allow_dynamic``) is SKILL.md and what resources/directory/read lists,
    where the server declares it, unverified and bounded by SKILL_MAX_BYTES.
    Raises SkillRefused, UsageError for a directory that cannot be written,
    and what ``request`` raises.
    """
    files = _checked_skill(skill, allow_dynamic)
    if not isinstance(directory, str) or not directory:
        raise UsageError("the directory to write a skill to is a path, not %s" % _arg(directory))
    try:
        _plain_name(server, "the server's name")
    except SkillRefused as e:
        raise UsageError(e.message)
    parts = [server] + [
        _plain_name(segment, "skill %s" % skill["uri"]) for segment in _skill_path(skill["uri"])]
    uris = [skill["uri"]] + ([uri for uri in files if uri != skill["uri"]] if files is not None
                             else _dynamic_files(client, skill, timeout))
    places = [[_SKILL_FILE]] + [[_plain_name(name, uri) for name in _skill_relative(
        skill["uri"], uri)] for uri in uris[1:]]
    base = os.path.realpath(directory)
    try:
        os.makedirs(base, exist_ok=True)
        built = _NewDirectory(base, parts)
    except OSError as e:
        raise UsageError("cannot write to %s: %s" % (os.path.join(directory, *parts),
                                                    e.strerror or e))
    try:
        read = 0
        for uri, place in zip(uris, places):
            data = client._read_skill_file(skill, files, uri, timeout)
            read += len(data)
            if read > SKILL_MAX_BYTES:  # a dynamic skill's bound (a listed one's is checked)
                raise SkillRefused("skill %s comes to more than %d bytes; not written"
                                   % (skill["uri"], SKILL_MAX_BYTES), skill["uri"])
            try:
                built.write(place, data)
            except OSError as e:
                why = "skill %s: its file %s cannot be written as %s (%s); nothing is " \
                      "written" % (skill["uri"], uri, "/".join(place), e.strerror or e)
                if e.errno in (errno.EEXIST, errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR):
                    raise SkillRefused(why, skill["uri"], uri)  # the server's names clash
                raise UsageError(why)  # the disk's trouble: full, not writable
        try:
            built.commit()
        except OSError as e:
            raise UsageError("cannot write to %s: %s" % (os.path.join(directory, *parts),
                                                        e.strerror or e))
    except BaseException:
        built.abandon()
        raise
    return os.path.join(base, *parts), len(uris)


def _dynamic_files(client, skill, timeout):
    """The files of a dynamic skill other than SKILL.md: what resources/directory/
    read lists below its directory, where the server declares it (else none)."""
    if _capability(client.capabilities, _CAPABILITY_OF["resources/directory/read"]) is not True:
        return []
    found, folders = [], [skill["uri"][:-len(_SKILL_FILE) - 1]]
    seen = set(folders)  # a directory that lists itself, or one above, is read once
    while folders:
        for child in client.read_directory(folders.pop(0), timeout):
            uri = _dict(child).get("uri")
            if uri in seen:
                continue
            _skill_relative(skill["uri"], uri)  # inside the skill, or refused
            if child.get("mimeType") == "inode/directory":
                folders.append(uri)
                seen.add(uri)
            elif uri != skill["uri"] and uri not in found:
                found.append(uri)
            if len(found) + len(seen) >= SKILL_MAX_FILES:
                raise SkillRefused("skill %s has more than %d files; not written"
                                   % (skill["uri"], SKILL_MAX_FILES), skill["uri"])
    return found


# A file or directory name made from what a server sends: a plain name in
# one directory, the same on every system (a separator, NUL, "." or ".."
# never; on Windows, neither what it forbids in a name nor a device's name).
_NOT_IN_NAMES = re.compile(r'[/\\\x00-\x1f\x7f<>:"|?*]' if _WINDOWS else r"[/\\\x00-\x1f\x7f]")
_DEVICE_NAMES = re.compile(r"(?i)(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|\Z)")


def _plain_name(name, what):
    """``name`` if it is a plain file name (see _NOT_IN_NAMES); else SkillRefused."""
    bad = (name in ("", ".", "..") or _NOT_IN_NAMES.search(name) is not None
           or re.search(r"[\ud800-\udfff]", name) is not None
           or _WINDOWS and (name[-1] in ". " or _DEVICE_NAMES.match(name) is not None))
    if bad:
        raise SkillRefused("%s: %s is not a plain file name, so nothing is written"
                           % (what, _show(name)))
    return name


# ---------------------------------------------------------------------------
# Part II: the command line
# ---------------------------------------------------------------------------
#
# The command ``python3 mcp_invoke.py`` (or ``-m mcp_invoke``): it parses,
# calls the library through Client's public methods and its request engine
# (see Client), prints, and maps each failure to its exit code.


# ---------------------------------------------------------------------------
# Output and diagnostics: stdout, stderr, progress, --events, hidden text
# ---------------------------------------------------------------------------

def _hidden_text(text):
    """What a person would not see in ``text``: None, or a description of it,
    the ASCII that tag characters spell first (the smuggled message)."""
    if not isinstance(text, str):
        return None
    for piece in _slices(text):  # a large result: a slice at a time, ASCII skipped
        if len(piece.encode("utf-8", "surrogatepass")) != len(piece) and re.search(
                _HIDDEN, piece):
            break
    else:
        return None
    shown = re.sub(_SHOWN_AS_IS, "", text)
    spelled = "".join(chr(ord(c) - 0xE0000) for c in shown
                      if u"\U000e0020" <= c <= u"\U000e007e")
    if spelled:
        return json.dumps(spelled)
    codes = sorted(set(re.findall(_HIDDEN, shown)))
    if not codes:
        return None
    return ", ".join("U+%04X" % ord(c) for c in codes[:8]) + (" ..." if len(codes) > 8 else "")


def _hidden_in(value):
    """(where, what) for the first string in ``value`` (nested) holding hidden
    text, a description first; where is the path to it ("" for the value
    itself), what as _hidden_text says it; None if there is none."""
    if isinstance(value, dict) and _hidden_text(value.get("description")):
        return "description", _hidden_text(value["description"])
    stack = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, str):
            found = _hidden_text(item)
            if found:
                return path, found
        elif isinstance(item, (dict, list)) and depth < _PRETTY_DEPTH:
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            pairs = [("%s.%s" % (path, k) if path else str(k), k, v) for k, v in pairs]
            for where, key, _ in pairs:  # a name (a schema's property) hides text too
                if isinstance(key, str) and _hidden_text(key):
                    return where, _hidden_text(key)
            stack.extend(reversed([(where, v, depth + 1) for where, _, v in pairs]))
    return None


# How output that needs escaping is checked: (the characters, the same within
# ASCII as bytes, the function that escapes them).
_TERMINAL = (_CONTROL, _CONTROL_ASCII, _terminal_text)
_JSON = (_JSON_UNSAFE, _JSON_UNSAFE_ASCII, _json_text)


# Output encoders, built once like the wire's; --json output keeps non-ASCII text.
_COMPACT_OUT = _one_shot(json.JSONEncoder(ensure_ascii=False, separators=(",", ":")))
_PRETTY_OUT = json.JSONEncoder(ensure_ascii=False, indent=2, separators=(",", ": "))


def _to_json(value, pretty=False):
    """``value`` as JSON text for output (escaped by _json_text)."""
    return _json_text("".join(_json_chunks(value, pretty)))


def _json_chunks(value, pretty=False, large=False):
    """``value`` as JSON text, in chunks.

    ``large`` (a result, where content may be 100 MB of text): a long string
    is escaped a slice at a time, where the encoders would make a copy of it
    whole, the nesting around it walked here and the rest left to the C encoder.
    """
    pretty = pretty and not _nested_deeper_than(value, _PRETTY_DEPTH)
    if pretty:
        return _PRETTY_OUT.iterencode(value)
    return _pieces(value, _LARGE_DEPTH) if large else [_COMPACT_OUT(value)]


# Nesting walked for a long string: a result, its content list, a block, a resource.
_LARGE_DEPTH = 4
_escape_string = json.encoder.encode_basestring  # JSON string, non-ASCII kept


def _pieces(value, depth):
    if isinstance(value, str) and len(value) > _SLICE:
        yield '"'
        for piece in _slices(value):
            yield _escape_string(piece)[1:-1]
        yield '"'
    elif isinstance(value, dict) and depth:
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + _escape_string(key) + ":"
            for piece in _pieces(item, depth - 1):
                yield piece
        yield "}"
    elif isinstance(value, list) and depth:
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            for piece in _pieces(item, depth - 1):
                yield piece
        yield "]"
    else:
        yield _COMPACT_OUT(value)


def _nested_deeper_than(value, limit):
    """Whether lists and objects in ``value`` nest more than ``limit`` deep."""
    stack = [(value, 0)]
    while stack:  # a loop, not recursion: the value may nest as deep as JSON allows
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in children)
    return False


# Output is encoded and checked this many characters at a time.
_SLICE = 1 << 20


def _slices(text):
    """``text`` in slices of about _SLICE characters; a "\\r\\n" is never split."""
    if len(text) <= _SLICE:
        yield text
        return
    start = 0
    while start < len(text):
        end = start + _SLICE
        if text[end - 1:end] == "\r":
            end += 1
        yield text[start:end]
        start = end


def _escaped(piece, escape):
    """``piece`` escaped as ``escape`` says: its UTF-8 bytes when nothing needed it."""
    pattern, ascii_unsafe, function = escape
    data = piece.encode("utf-8", "surrogatepass")  # as _holds looks, with the bytes kept
    if len(data) == len(piece):  # ASCII: look at the bytes
        if len(data.translate(None, ascii_unsafe)) == len(data):
            return data
    elif not re.search(pattern, piece):  # both patterns take in lone surrogates
        return data
    return function(piece)


class _Cut(object):
    """--max-output CHARS: the first ``limit`` characters of a command's output
    go out; past them, all of it (those too) goes to a new file under
    ``directory`` (None: the temp dir), named in the line finish() returns
    (CLI.md "Agents")."""

    def __init__(self, limit, directory=None):
        self.limit = self.left = limit
        self.directory = directory
        self.shown = []  # what went out, for the file
        self.ends_line = True  # what went out ends with a newline
        self.file = self.path = None
        self.more = 0  # characters past the limit
        self.failed = None  # why the file could not be written

    def take(self, piece):
        """What of ``piece`` (escaped: text, or its UTF-8) still goes out."""
        text = piece.decode("utf-8") if isinstance(piece, bytes) else piece
        if self.file is None and len(text) <= self.left:
            self.left -= len(text)
            self.shown.append(text)
            if text:
                self.ends_line = text.endswith("\n")
            return text
        head, text = text[:self.left], text[self.left:]
        if self.file is None:
            self._open("".join(self.shown) + head)
            if head:
                self.ends_line = head.endswith("\n")
        self.left = 0
        self.more += len(text)
        if self.failed is None:
            try:
                self.file.write(text.encode("utf-8", "replace"))
            except (IOError, OSError) as e:  # a full disk: the cut line says so
                self.failed = e.strerror or str(e)
        return head

    def _open(self, shown):
        import tempfile  # lazy: only for a cut
        try:
            fd, self.path = tempfile.mkstemp(prefix="mcp_invoke-output-", suffix=".txt",
                                             dir=self.directory)
        except (IOError, OSError) as e:  # the call is made: its output, as far as it can go
            self.file, self.path = _NoFile(), None
            self.failed = "cannot make a file in %s: %s" % (
                self.directory or tempfile.gettempdir(), e.strerror or e)
            return
        self.file = os.fdopen(fd, "wb")
        try:
            self.file.write(shown.encode("utf-8", "replace"))
        except (IOError, OSError) as e:
            self.failed = e.strerror or str(e)

    def finish(self):
        if self.file is None:
            return None
        try:
            self.file.close()
        except (IOError, OSError) as e:
            self.failed = self.failed or e.strerror or str(e)
        where = ("the whole result is in %s" % self.path if self.failed is None else
                 "it could not be kept: %s" % self.failed if self.path is None else
                 "%s could not hold the whole result: %s" % (self.path, self.failed))
        return "%s[cut: %d more character%s; %s]\n" % (
            "" if self.ends_line else "\n", self.more, "" if self.more == 1 else "s", where)


class _NoFile(object):
    """Where a cut's rest goes when no file could be made for it: nowhere."""

    def write(self, data):
        pass

    def close(self):
        pass


class _Output(object):
    """stdout for results: UTF-8 whatever the locale; a closed pipe ends output quietly.

    Text goes out in slices, each encoded and checked on its own, so a
    100 MB result never has a full-size escaped or encoded copy beside it.
    """

    def __init__(self, stream):
        self.stream = stream
        self.closed = False
        self.cut = None  # a _Cut under --max-output

    def write(self, text, escape=None):
        """Write ``text``; ``escape``, _TERMINAL or _JSON, says what to escape in it."""
        if self.closed:
            return
        buffer = getattr(self.stream, "buffer", None)
        try:
            for piece in _slices(text):
                if escape is not None:
                    piece = _escaped(piece, escape)
                if self.cut is not None:
                    piece = self.cut.take(piece)
                if buffer is not None:
                    buffer.write(piece if isinstance(piece, bytes)
                                 else piece.encode("utf-8", "replace"))
                else:
                    self.stream.write(piece if isinstance(piece, str)
                                      else piece.decode("utf-8"))
        except BrokenPipeError:
            self._close()
        except (IOError, OSError) as e:
            self._fail(e)

    def end_cut(self):
        """Under --max-output, once the command has printed all it will: the
        line that says what was cut, if anything was."""
        cut, self.cut = self.cut, None
        line = cut.finish() if cut is not None else None
        if line is not None:
            self.write(line, _TERMINAL)

    def text(self, text, end="\n"):
        """Text from the server, neutralised for a terminal, then ``end``."""
        self.write(text, _TERMINAL)
        self.write(end)

    def json(self, value, pretty=False, large=False):
        """One value as JSON text on a line of its own (``large``: see _json_chunks)."""
        group, size = [], 0  # small chunks joined, a large one written as it is
        for chunk in _json_chunks(value, pretty, large):
            if size + len(chunk) >= _SLICE:
                self.write("".join(group), _JSON)
                group, size = [], 0
            group.append(chunk)
            size += len(chunk)
        group.append("\n")
        self.write("".join(group), _JSON)

    def flush(self):
        if not self.closed:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._close()
            except (IOError, OSError) as e:
                self._fail(e)

    def _fail(self, error):
        # A full disk or a device error: said once, and output stops.
        self._close()
        raise UsageError("cannot write the output: %s" % (error.strerror or error))

    def _close(self):
        # `mcp_invoke ... | head -c 1`: the reader left; later writes and the
        # interpreter's final flush must not fail, so stdout becomes /dev/null.
        self.closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass


class _Diagnostics(object):
    """Everything the CLI says on stderr: errors, warnings, logs, progress, relay."""

    def __init__(self, stream, verbose=False, quiet=False):
        self.stream = stream
        self.verbose = verbose
        self.quiet = quiet
        self.tty = _isatty(stream)
        self._progress_shown = False
        self._progress_at = 0.0
        self._relay = b""
        self.redact = None  # a _Redactor once the secrets of the run are known
        self.stopping = False  # a stop signal came: write only what stderr takes now
        self._blocked = False  # it did not, once: nothing more is tried
        self.events = _NoEvents()  # an _Events with --events: diagnostics are events too

    def _write(self, text):
        if self.redact is not None:
            text = self.redact(text)
        if self.stopping and (self._blocked or not _writable(self.stream)):
            self._blocked = True  # a stderr nobody reads must not hold the run past Ctrl-C
            return
        try:
            if self._progress_shown:
                text = "\r\x1b[K" + text
                self._progress_shown = False
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def error(self, text):
        self._write("mcp_invoke: %s\n" % _terminal_line(text))

    def failed(self, error, code=None):
        """The run failed with ``error`` (an MCPError, or the text of another end
        with its exit ``code``): its line, then what else it carries (a pin
        mismatch's diff); with --events, the last event too."""
        self.error(str(error))
        self.block(getattr(error, "detail", ()))
        self.events.error(getattr(error, "exit_code", code), str(error), error)

    def block(self, lines):
        """Lines that explain a line before them (a diff), each neutralised."""
        if not self.quiet:
            for line in lines:
                self._write(_terminal_text(line) + "\n")

    def warning(self, text, kind="cli"):
        self.events.warning(kind, text)
        if not self.quiet:
            self._write("mcp_invoke: warning: %s\n" % _terminal_line(text))

    def note(self, text):
        self.events.warning("note", text)
        if not self.quiet:
            self._write("mcp_invoke: %s\n" % _terminal_line(text))

    def prompt(self, text, marked="", after=""):
        """A question for the person at the terminal (never suppressed): text,
        then ``marked`` (bold and underlined on a terminal), then ``after``."""
        marked = _terminal_text(marked)
        if marked and self.tty:
            marked = "\x1b[1;4m%s\x1b[0m" % marked
        self._write(_terminal_text(text) + marked + _terminal_text(after))

    def debug(self, text):
        if self.verbose and not self.quiet:
            self._write("mcp_invoke: %s\n" % _terminal_line(text))

    def client_warning(self, kind, text):
        """The library's warnings; responses nobody waits for only under --verbose."""
        if self.verbose or kind != "stray":
            self.warning(text, kind)

    def log(self, params):
        """A server's notifications/message (server/utilities/logging)."""
        self.events.log(params)
        if self.quiet:
            return
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data)
        logger = params.get("logger")
        self._write("[%s] %s%s\n" % (_terminal_line(str(params.get("level", "info"))),
                                     _terminal_line(str(logger)) + ": " if logger else "",
                                     _terminal_line(text)))

    def progress(self, params, ident=None):
        """One progress line: rewritten on a terminal, else a few per second at most;
        ``ident``: (the batch line's id,), which events carry."""
        if self.events.progress(params, ident) or self.quiet:
            return
        done, total = params.get("progress"), params.get("total")
        now = time.monotonic()
        final = total is not None and done == total
        if not self.tty and not final and now - self._progress_at < 0.25:
            return
        self._progress_at = now
        text = "[progress] %s%s" % (_num(done), "/" + _num(total) if total is not None else "")
        if params.get("message"):
            text += " " + str(params["message"])
        line = _terminal_line(text)
        if self.redact is not None:  # before it is cut to the terminal's width
            line = self.redact(line)
        if self.tty:
            self._write(line[:max(10, self._width() - 1)])
            self._progress_shown = True
        else:
            self._write(line + "\n")

    def _width(self):
        # The line must fit the terminal: a wrapped line could not be rewritten.
        # A terminal that does not know its size (0 columns, a serial line) gets 80.
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            return 80

    def task(self, task_id, status, message):
        """A task's new status or message: ``[task 786512e2] STATUS: MESSAGE``
        (CLI.md "Tasks"), or an event."""
        if self.events.task(task_id, status, message) or self.quiet:
            return
        short = str(task_id) if self.redact is None else self.redact(str(task_id))
        self._write(_terminal_line("[task %s] %s%s" % (short[:8], status,  # cut, once hidden
                                                       ": " + message if message else ""))
                    + "\n")

    def relay(self, chunk):
        """--verbose: the server's stderr, live, line by line, neutralised."""
        if not self.verbose:
            return
        data = self._relay + chunk
        lines = data.split(b"\n")
        self._relay = lines.pop()
        if len(self._relay) > 4096:
            lines.append(self._relay)
            self._relay = b""
        for line in lines:
            self._write(_terminal_text(line.decode("utf-8", "replace").rstrip("\r")) + "\n")

    def finish(self):
        if self._relay:
            self._write(_terminal_text(self._relay.decode("utf-8", "replace")) + "\n")
            self._relay = b""
        if self._progress_shown:
            self._write("")


class _NoEvents(object):
    """What diagnostics tell the event stream without --events: nothing."""

    def warning(self, kind, text):
        pass

    def log(self, params):
        pass

    def progress(self, params, ident=None):
        return False  # shown on stderr instead

    def task(self, task_id, status, message):
        return False

    def error(self, code, message, error=None, ident=None):
        pass

    def finish(self):
        pass


class _Events(object):
    """--events: stdout as JSON Lines, one event a line, flushed as it happens
    (CLI.md "Watching and events"). The command's result is held until the run
    ends, so that it (or the error that ended the run) is always the last line."""

    def __init__(self, out, diag):
        self.out = out
        self.diag = diag  # its _Redactor, once the run's secrets are known, applies here too
        self.held = None  # the result event, written at the end
        self.lines = False  # a batch: its lines' events are the end (nothing follows them)

    def emit(self, event, **fields):
        line = collections.OrderedDict([("event", event)])
        line.update(fields)
        self.out.json(line)
        self.out.flush()

    def text(self, text):
        return text if self.diag.redact is None else self.diag.redact(text)

    # What the diagnostics say (see _NoEvents), as events.

    def warning(self, kind, text):
        self.emit("warning", kind=kind, text=self.text(text))

    def log(self, params):
        self.emit("log", level=params.get("level"), logger=self.value(params.get("logger")),
                  data=self.value(params.get("data")))

    def progress(self, params, ident=None):
        """True: the event carries it, and stderr shows none."""
        fields = collections.OrderedDict() if ident is None else collections.OrderedDict(
            [("id", ident[0])])
        fields.update((k, params[k]) for k in ("progress", "total", "message") if k in params)
        if isinstance(fields.get("message"), str):
            fields["message"] = self.text(fields["message"])
        self.emit("progress", **fields)
        return True

    def task(self, task_id, status, message):
        """True: the event carries it, and stderr shows none."""
        self.emit("task", id=task_id, status=status,
                  message=None if message is None else self.text(message))
        return True

    def value(self, value):
        """A server's value in a diagnostic event (a log's data), secrets redacted."""
        return _redacted(value, self.diag.redact)

    def result(self, result, ident=None):
        """A result: a batch line's at once (with its id), else held for the end."""
        if ident is not None:
            return self.emit("result", id=ident[0], result=result)
        self.held = result

    def finish(self):
        if self.held is not None:
            held, self.held = self.held, None
            self.emit("result", result=held)

    def error(self, code, message, error=None, ident=None):
        """The run's end (or a batch line's, with its id): exit status, the one-line
        message, the server's stderr tail, and what else the error carries. A
        batch's own end is said on stderr only: nothing follows its lines."""
        if ident is None and self.lines:
            return
        fields = collections.OrderedDict() if ident is None else collections.OrderedDict(
            [("id", ident[0])])
        fields.update([("exit", code), ("message", self.text(message)),
                       ("stderr_tail", self.text(getattr(error, "stderr_tail", "") or ""))])
        if isinstance(error, ServerError):
            fields.update((k, self.value(v)) for k, v in (("code", error.code),
                                                          ("data", error.data))
                          if v is not None)
        if getattr(error, "detail", None):
            fields["diff"] = [self.text(line) for line in error.detail]
        result = getattr(error, "result", None)
        if result is None and ident is None:
            result = self.held  # a result shown before the failure is still reported
        if result is not None:
            fields["result"] = result
        self.held = None
        self.emit("error", **fields)


def _redacted(value, redact):
    """A JSON value with the secrets ``redact`` (a _Redactor, or None) knows replaced."""
    if redact is None or value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return redact(value)
    shown = json.dumps(value)
    hidden = redact(shown)
    try:
        return value if hidden == shown else _json_loads(hidden)
    except ValueError:
        return hidden


def _secret_forms(secret):
    """The forms a secret may take where it is echoed: as written, as JSON writes
    it (the trace), as a terminal line shows it, and in Base64 (standard and
    URL-safe, padded or not), as servers encode credentials: whole, and inside
    a longer encoding (``Basic base64("user:" + secret)``), where it starts at
    any of three byte offsets and only the characters made of its own bytes
    alone are the same whatever comes around it."""
    import base64  # lazy: only with secrets
    raw = secret.encode("utf-8", "surrogateescape")
    coded = base64.b64encode(raw).decode("ascii")
    forms = [secret, json.dumps(secret)[1:-1], _terminal_text(secret), coded, coded.rstrip("=")]
    for shift in (0, 1, 2):  # bytes before the secret in its group of three
        inner = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        forms.append(inner[(0, 2, 3)[shift]:(shift + len(raw)) // 3 * 4])
    return tuple(forms) + tuple(f.replace("+", "-").replace("/", "_") for f in forms[3:])


class _Redactor(object):
    """Replaces secrets with ``***`` in text for stderr and the trace: header
    values and their credentials, the URL's password and query values, the
    server's environment values given; only those of 4 characters or more
    (shorter ones would garble every line and hide little)."""

    def __init__(self, secrets):
        self.forms = []
        for secret in secrets:
            self.add(secret)

    def add(self, secret):
        """One more secret (one learnt during the run: an OAuth token)."""
        forms = set(self.forms)
        forms.update(f for f in _secret_forms(secret) if len(f) >= 4)
        self.forms = sorted(forms, key=len, reverse=True)

    def __call__(self, text):
        for form in self.forms:
            if form in text:
                text = text.replace(form, "***")
        return self._edges(text) if self.forms else text

    def _edges(self, text):
        """``text`` without what is left of a secret cut short where the text was
        cut: at its start and end (a line relayed in pieces, a tail), beside
        the "..." a cut leaves (_cut, _tail_lines) and the " | " that joins a
        tail's lines (a secret written over two lines); 4 characters or more."""
        ends, starts = [len(text.rstrip("\r\n"))], [0]
        for mark in ("...", " | "):
            at = text.find(mark)
            while at >= 0 and len(ends) < 32:
                ends.append(at)
                starts.append(at + len(mark))
                at = text.find(mark, at + len(mark))
        spans = []
        for form in self.forms:
            for end in ends:  # a secret's beginning, ending here
                for k in range(min(len(form) - 1, end), 3, -1):
                    if text.startswith(form[:k], end - k):
                        spans.append((end - k, end))
                        break
            for start in starts:  # a secret's end, beginning here
                for k in range(min(len(form) - 1, len(text) - start), 3, -1):
                    if text.startswith(form[-k:], start):
                        spans.append((start, start + k))
                        break
        for start, end in sorted(spans, reverse=True):  # from the right: offsets hold
            text = text[:start] + "***" + text[end:]
        return text


class _TraceFile(object):
    """The --trace file as the Client writes it: secrets redacted, and once a
    stop signal came (``diag.stopping``), a line only if the file takes it now,
    so a pipe nobody reads cannot hold the run past Ctrl-C."""

    def __init__(self, stream, diag):
        self.stream, self.diag = stream, diag
        self.blocked = False

    def write(self, text):
        if self.diag.redact is not None:
            text = self.diag.redact(text)
        if self._takes():
            self.stream.write(text)

    def flush(self):
        if self._takes():
            self.stream.flush()

    def _takes(self):
        if self.diag.stopping and (self.blocked or not _writable(self.stream)):
            self.blocked = True  # once it did not, nothing more is tried
        return not self.blocked

    def close(self):
        if self.blocked or self.diag.stopping and not _writable(self.stream):
            _to_devnull(self.stream)  # what it still holds would block the close
        self.stream.close()


def _to_devnull(stream):
    """Point ``stream``'s file descriptor at /dev/null (what it still holds goes there)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _writable(stream, wait=0.2):
    """Whether ``stream`` takes a line within ``wait`` seconds (one that is not a
    file descriptor always does: it cannot block)."""
    import select  # lazy: only once stopping
    try:
        return bool(select.select([], [stream.fileno()], [], wait)[1])
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both
        return True


def _secrets(options, entry=None):
    """What a run must never show (see _Redactor), from the Client's options
    and the server's config entry (what its ${VAR}s brought in)."""
    found = list((entry or {}).get("secrets") or ())
    for value in (options.get("headers") or {}).values():
        found.append(value)
        found.append(value.partition(" ")[2])  # the credentials after "Bearer "
    found += list((options.get("env") or {}).values())
    oauth = options.get("oauth") or {}
    found += [oauth.get("client_secret"), oauth.get("idp_id_token")]
    url = options.get("url")
    if url:
        from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit  # lazy: HTTP
        parts = urlsplit(url)
        proxy = urlsplit(_proxy_for(parts.scheme, parts.hostname or "", os.environ) or "")
        for where in (parts, proxy):  # user:password@, sent as Basic credentials
            if where.username:
                basic = _basic(unquote(where.username), unquote(where.password or ""))
                found += [unquote(where.password or ""), where.password or "", basic,
                          basic.partition(" ")[2]]
        for piece in parts.query.replace(";", "&").split("&") if parts.query else ():
            value = piece.partition("=")[2]  # each value as sent, and decoded
            found += [value, unquote(value), unquote(value.replace("+", " ")),
                      quote(unquote(value), safe=""), quote_plus(unquote(value))]
        found += [value for _, value in parse_qsl(parts.query)]
    return [secret for secret in found if isinstance(secret, str) and len(secret) >= 4]


def _num(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ---------------------------------------------------------------------------
# Config files: JSONC, mcpServers / servers, ${VAR}
# ---------------------------------------------------------------------------

# A string (kept whole, so comment markers inside it are text), a comment, or a
# comma that only space and comments separate from the } or ] after it.
_JSONC = (r'(?s)"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/'
          r'|,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]])')


def _load_jsonc(text, source):
    """JSON with comments and trailing commas, as VS Code writes mcp.json."""
    def blank(match):
        # Spaces, not nothing, so json's line and column in errors stay true.
        part = match.group()
        return part if part.startswith('"') else re.sub(r"[^\n]", " ", part)
    try:
        return _json_loads(re.sub(_JSONC, blank, text))
    except ValueError as e:
        raise UsageError("%s: not valid JSON: %s" % (source, e))


def _config_servers(path, wait=None):
    """A config file's servers by name, and the key they sit under: "mcpServers" or "servers"."""
    data = _dict(_load_jsonc(_read_file(path, "config file " + path, "utf-8-sig", wait),
                             path))
    # Claude Desktop, Claude Code and Cursor; VS Code's mcp.json; VS Code's settings.json.
    for key, servers in (("mcpServers", data.get("mcpServers")), ("servers", data.get("servers")),
                         ("servers", _dict(data.get("mcp")).get("servers"))):
        if isinstance(servers, dict):
            return servers, key
    raise UsageError('%s: expected an object "mcpServers" or "servers" at the top level' % path)


def _default_config(cwd):
    """``.mcp.json`` in ``cwd`` (Claude Code's project file) if there is one, else None."""
    path = os.path.join(cwd, ".mcp.json")
    return path if os.path.isfile(path) else None


def _known_configs(cwd, environ):
    """The files where other clients keep their MCP servers, the project's first
    (in ``cwd``), then the user's (under the home directory and _config_home:
    XDG_CONFIG_HOME, or %APPDATA% on Windows): (path, reader)."""
    home, config = _home(environ), _config_home(environ)
    return [
        (os.path.join(cwd, ".mcp.json"), "json"),  # Claude Code, project
        (os.path.join(cwd, ".cursor", "mcp.json"), "json"),
        (os.path.join(cwd, ".vscode", "mcp.json"), "json"),  # VS Code: "servers", JSONC
        (os.path.join(cwd, ".gemini", "settings.json"), "json"),
        (os.path.join(home, ".claude.json"), "claude"),  # Claude Code, user and local
        (os.path.join(config, "Claude", "claude_desktop_config.json"), "json"),
        (os.path.join(config, "Code", "User", "mcp.json"), "json"),  # VS Code, user
        (os.path.join(home, "Library", "Application Support", "Claude",
                      "claude_desktop_config.json"), "json"),  # Claude Desktop on macOS
        (os.path.join(home, ".cursor", "mcp.json"), "json"),
        (os.path.join(home, ".codeium", "windsurf", "mcp_config.json"), "json"),
        (os.path.join(home, ".gemini", "settings.json"), "json"),
        (os.path.join(home, ".codex", "config.toml"), "codex"),
    ]


def _found_servers(cwd, environ, on_warning, only=None):
    """Every server the known config files (or ``only``, --config FILE) hold, in
    order: dicts with name, entry (as written), file and disabled. A known
    file that cannot be read is a warning; --config's is exit 2."""
    files = [(only, _reader_of(only))] if only else _known_configs(cwd, environ)
    found, seen = [], set()
    for path, reader in files:
        real = os.path.realpath(path)
        if real in seen or not only and not os.path.lexists(path):
            continue
        seen.add(real)
        if not only and not os.path.isfile(path):  # a directory, a FIFO, a symlink loop
            on_warning("%s is not a regular file; its servers are left out" % path)
            continue
        try:
            servers = _file_servers(path, reader, cwd)
        except UsageError as e:
            if only:
                raise
            on_warning("%s; its servers are left out" % e)
            continue
        for name, entry in servers:
            disabled = _dict(entry).get("disabled") is True or _dict(entry).get(
                "enabled") is False
            found.append({"name": name, "entry": entry, "file": path, "disabled": disabled})
    return found


def _reader_of(path):
    """How --config FILE is read: Codex's TOML, ~/.claude.json's projects, or JSON."""
    if path.endswith(".toml"):
        return "codex"
    return "claude" if os.path.basename(path) == ".claude.json" else "json"


def _file_servers(path, reader, cwd):
    """(name, entry) for each server in one config file, in the file's order."""
    if reader == "codex":
        data = _toml(_read_file(path, "config file " + path, wait=2.0), path)
        return [(name, _codex_entry(entry))
                for name, entry in _dict(data.get("mcp_servers")).items()]
    if reader == "claude":  # the project's entry ("local" scope) first, then the user's
        data = _dict(_load_jsonc(_read_file(path, "config file " + path, "utf-8-sig",
                                            wait=2.0), path))
        here = os.path.realpath(cwd)
        local = [servers for key, servers in sorted(_dict(data.get("projects")).items())
                 if os.path.realpath(key) == here]
        pairs = []
        for servers in [_dict(_dict(p).get("mcpServers")) for p in local] + [
                _dict(data.get("mcpServers"))]:
            pairs += list(servers.items())
        return pairs
    try:
        servers, _ = _config_servers(path, wait=2.0)
    except UsageError as e:
        if "expected an object" in str(e):  # a settings file with no servers in it
            return []
        raise
    return list(servers.items())


def _toml(text, source):
    """A TOML document: tomllib where Python has it (3.11), else the subset Codex
    writes (tables, dotted and quoted keys, strings, numbers, booleans, arrays,
    inline tables). This branch can go when the floor is 3.11."""
    try:
        import tomllib  # lazy: only for ~/.codex/config.toml
    except ImportError:
        tomllib = None
    try:
        return tomllib.loads(text) if tomllib else _TomlSubset(text, source).document()
    except RecursionError:
        raise UsageError("%s: not valid TOML: nested too deeply" % source)
    except ValueError as e:  # a \U escape past U+10FFFF, in the subset, too
        raise UsageError("%s: not valid TOML: %s" % (source, e))


class _TomlSubset(object):
    """The TOML that Codex writes, for Pythons without tomllib: UsageError on the rest."""

    _ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"',
                "\\": "\\"}

    def __init__(self, text, source):
        self.text, self.source, self.at = text, source, 0

    def fail(self, why):
        line = self.text.count("\n", 0, self.at) + 1
        raise UsageError("%s: not valid TOML (line %d): %s" % (self.source, line, why))

    def skip(self, newlines=True):
        """Past spaces and comments (and newlines, unless told not to)."""
        pattern = r"(?:[ \t\r\n]|#[^\n]*)*" if newlines else r"(?:[ \t]|#[^\n]*)*"
        self.at = re.compile(pattern).match(self.text, self.at).end()

    def document(self):
        root = table = {}
        self.declared = set()  # tables given a [header] of their own
        while True:
            self.skip()
            if self.at >= len(self.text):
                return root
            if self.text.startswith("[[", self.at):
                self.fail("arrays of tables are not read here")
            if self.text[self.at] == "[":
                self.at += 1
                keys = self.keys("]")
                self.at += 1
                if tuple(keys) in self.declared:
                    self.fail("table [%s] defined twice" % ".".join(keys))
                self.declared.add(tuple(keys))
                table = self.descend(root, keys)
            else:
                self.assign(table)
            self.skip(False)
            if self.at < len(self.text) and self.text[self.at] not in "\r\n":
                self.fail("more after a value on its line")

    def assign(self, table):
        """key = value, into ``table``; a key given twice is an error, as in TOML."""
        keys = self.keys("=")
        self.at += 1
        self.skip(False)
        table = self.descend(table, keys[:-1])
        if keys[-1] in table:
            self.fail("key %s defined twice" % ".".join(keys))
        table[keys[-1]] = self.value()

    def descend(self, table, keys):
        for key in keys:
            table = table.setdefault(key, {})
            if not isinstance(table, dict):
                self.fail("%s is not a table" % key)
        return table

    def keys(self, end):
        keys = []
        while True:
            self.skip(False)
            char = self.text[self.at:self.at + 1]
            if char in ('"', "'"):
                keys.append(self.string())
            else:
                match = re.compile(r"[A-Za-z0-9_-]+").match(self.text, self.at)
                if not match:
                    self.fail("expected a key")
                keys.append(match.group())
                self.at = match.end()
            self.skip(False)
            char = self.text[self.at:self.at + 1]
            if char == end:
                return keys
            if char != ".":
                self.fail("expected %r after a key" % end)
            self.at += 1

    def value(self):
        char = self.text[self.at:self.at + 1]
        if char in ('"', "'"):
            return self.string()
        if char == "[":
            return self.sequence("]", self.value)
        if char == "{":
            table = {}
            self.sequence("}", lambda: self.assign(table), newlines=False)
            return table
        for pattern, make in self._SCALARS:
            match = re.compile(pattern).match(self.text, self.at)
            if match:
                self.at = match.end()
                return make(match.group().replace("_", ""))
        self.fail("expected a value")

    # Dates and times stay text: only the servers' tables are read, which hold none.
    _SCALARS = (
        (r"true|false", lambda word: word == "true"),
        (r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
         r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?)?|[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?", str),
        (r"0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+", lambda word: int(word, 0)),
        (r"[+-]?(?:inf|nan)", float),
        (r"[+-]?[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9_]+)?(?![0-9A-Za-z_.:-])",
         lambda word: float(word) if re.search("[.eE]", word) else int(word)))

    def sequence(self, end, item, newlines=True):
        items = []
        self.at += 1
        while True:
            self.skip(newlines)
            if self.text[self.at:self.at + 1] == end:
                self.at += 1
                return items
            items.append(item())
            self.skip(newlines)
            char = self.text[self.at:self.at + 1]
            if char == ",":
                self.at += 1
            elif char != end:
                self.fail("expected ',' or %r" % end)

    def string(self):
        quote = self.text[self.at]
        if self.text.startswith(quote * 3, self.at):
            return self.long_string(quote)
        if quote == "'":
            end = self.text.find("'", self.at + 1)
            if end < 0 or "\n" in self.text[self.at:end]:
                self.fail("unterminated string")
            value, self.at = self.text[self.at + 1:end], end + 1
            return value
        match = re.compile(r'"((?:[^"\\\n]|\\.)*)"').match(self.text, self.at)
        if not match:
            self.fail("unterminated string")
        self.at = match.end()
        return re.sub(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", self.unescape, match.group(1))

    def long_string(self, quote):
        """A multi-line string: a newline right after the opening quotes is dropped;
        in a basic one, escapes apply and a backslash at a line's end joins lines."""
        end = self.text.find(quote * 3, self.at + 3)
        if end < 0:
            self.fail("unterminated multi-line string")
        while self.text.startswith(quote, end + 3) and end + 3 - self.at < len(self.text):
            end += 1  # up to two quotes may end the string itself
        body, self.at = self.text[self.at + 3:end], end + 3
        if body.startswith("\r\n"):
            body = body[2:]
        elif body.startswith("\n"):
            body = body[1:]
        if quote == "'":
            return body
        body = re.sub(r"\\[ \t]*\r?\n\s*", "", body)
        return re.sub(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", self.unescape, body)

    def unescape(self, match):
        code = match.group(1)
        if code[0] in "uU":
            return chr(int(code[1:], 16))
        if code not in self._ESCAPES:
            self.fail("unknown escape \\%s" % code)
        return self._ESCAPES[code]


def _codex_entry(table):
    """A Codex [mcp_servers.NAME] table in the shape of an mcpServers entry."""
    table = _dict(table)
    entry = dict((key, table[key]) for key in ("command", "args", "env", "url", "cwd")
                 if key in table)
    if table.get("enabled") is False:
        entry["disabled"] = True
    return entry


def _describe_found(found, cwd, environ):
    """servers' lines (CLI.md): NAME  transport  command or URL  (FILE) [(disabled)]."""
    home = _home(environ)
    lines = _describe_servers([(server["name"], server["entry"]) for server in found])
    return ["%s  (%s)%s" % (line, _home_relative(server["file"], home, cwd),
                            " (disabled)" if server["disabled"] else "")
            for line, server in zip(lines, found)]


def _home_relative(path, home, cwd):
    """A file as servers shows it: ~/-relative under the home directory, else to cwd."""
    path, home = os.path.abspath(path), os.path.abspath(home).rstrip(os.sep)
    if os.path.normcase(path).startswith(os.path.normcase(home) + os.sep):
        return "~" + os.sep + path[len(home) + 1:]
    try:
        return os.path.relpath(path, cwd)
    except ValueError:  # Windows: on another drive than cwd
        return path


def _found_json(found):
    """--json servers: name, transport, command, args, url, file, disabled (absent omitted)."""
    servers = []
    for server in found:
        entry = _dict(server["entry"])
        transport = _entry_transport(entry) if entry else None
        item = {"name": server["name"], "transport": transport}
        if transport == "stdio":
            item.update(command=entry.get("command"), args=_list(entry.get("args")))
        elif transport == "http":
            item["url"] = entry[_url_key(entry)]
        item.update(file=server["file"], disabled=server["disabled"])
        servers.append(dict((k, v) for k, v in item.items() if v is not None))
    return {"servers": servers}


def _pick_server(found, name):
    """The one server called ``name`` among those found (the same definition in
    several files is one); exit 2 if none, or if files define it differently."""
    named = [server for server in found if server["name"] == name]
    if not named:
        known = sorted(set(server["name"] for server in found))
        raise UsageError("no server %r in the config files found (%s)" % (
            name, ", ".join(known) if known else "none found; see 'servers'"))
    different = [server for server in named if server["entry"] != named[0]["entry"]]
    if different:
        raise UsageError("server %r is defined differently in %s; pick one with --config FILE"
                         % (name, " and ".join(sorted(set(s["file"] for s in named)))))
    return named[0]


def _entry_transport(entry):
    """"stdio" or "http" for a config entry, or None when it has neither command nor url."""
    kind = entry.get("type")
    url = entry.get(_url_key(entry))
    if kind in _HTTP_TYPES or (kind is None and url and not entry.get("command")):
        return "http" if url else None
    return "stdio" if kind in (None, "stdio") and entry.get("command") else None


def _url_key(entry):
    """Where an entry keeps its URL: Gemini CLI's httpUrl (Streamable HTTP) over
    its url (SSE), Windsurf's serverUrl, or url."""
    for key in ("httpUrl", "url", "serverUrl"):
        if entry.get(key):
            return key
    return "url"


def _config_entry(servers, name, source, environ):
    """One configured server, checked, normalised and with ${VAR} expanded from environ."""
    if name not in servers:
        known = "it has: " + ", ".join(servers) if servers else "it has no servers"
        raise UsageError("no server %r in %s; %s" % (name, source, known))
    entry, where = servers[name], "%s: server %r" % (source, name)
    if not isinstance(entry, dict):
        raise UsageError("%s is not a JSON object" % where)
    transport = _entry_transport(entry)
    if transport is None:
        raise _no_transport(entry.get("type"), where)
    # "secrets": every value a ${VAR} brought in, redacted wherever it is shown.
    config = {"name": name, "transport": transport, "command": None, "url": None,
              "headers": {}, "env": {}, "cwd": None, "secrets": []}
    field = lambda key, shape: _config_field(entry, key, shape, environ, where,
                                             config["secrets"])
    if transport == "http":
        config["url"] = field(_url_key(entry), str)
        config["headers"] = field("headers", dict)
    else:
        config["command"] = [field("command", str)] + field("args", list)
        config["env"] = field("env", dict)
        config["cwd"] = field("cwd", str)
    return config


def _no_transport(kind, where):
    """Why an entry names no server we can reach, as the error to raise."""
    return UsageError("%s %s" % (where, _unreachable(kind)))


def _unreachable(kind):
    if kind is None:
        return 'has neither "command" nor "url"'
    if kind == "stdio" or kind in _HTTP_TYPES:
        return 'has type %s but no "%s"' % (_show(kind), "command" if kind == "stdio" else "url")
    return "has unsupported type %s (expected stdio, http, sse or streamable-http)" % _show(kind)


_SHAPES = {str: "a string", list: "a list of strings", dict: "an object of strings"}


def _config_field(entry, key, shape, environ, where, found=None):
    """entry[key] checked to be a string, list or object of strings, then expanded
    (``found`` as for _expand)."""
    value = entry.get(key)
    if value is None:
        return None if shape is str else shape()
    strings = list(value.values()) if isinstance(value, dict) else value
    strings = strings if isinstance(strings, list) else [strings]
    if not isinstance(value, shape) or not all(isinstance(s, str) for s in strings):
        raise UsageError('%s: "%s" must be %s' % (where, key, _SHAPES[shape]))
    if shape is dict:
        value = dict((k, _expand(v, environ, where, found)) for k, v in value.items())
    elif shape is list:
        value = [_expand(v, environ, where, found) for v in value]
    else:
        value = _expand(value, environ, where, found)
    texts = (list(value) + list(value.values()) if shape is dict
             else value if shape is list else [value])
    for text in texts:
        if "\0" in text:  # no command, argument or variable can hold one
            raise UsageError('%s: "%s" holds a NUL character' % (where, key))
    if key == "env":
        for name in value:
            if not name or "=" in name:
                raise UsageError('%s: "env" has the name %s, which no environment variable '
                                 'can have' % (where, _show(name)))
    return value


_BRACES = r"\$\{|\}"
_MAX_NESTING = 10  # ${A:-${B:-...}}: deeper is a mistake, and costly to scan
_VARIABLE_FORM = r"(?s)(env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?\Z"


def _expand(text, environ, where, found=None):
    """${VAR}, ${env:VAR}, ${VAR:-default}; an unset VAR is an error, never a silent "".

    A default may hold variables itself (``${A:-${B}}``), expanded only when used.
    ``found``: a list given gets each variable's value, a secret wherever it went.
    """
    parts, done = [], 0
    while True:
        start = text.find("${", done)
        if start < 0:
            return "".join(parts) + text[done:]
        end, depth = None, 1  # find the brace that closes this one
        for brace in re.compile(_BRACES).finditer(text, start + 2):
            depth += 1 if brace.group() == "${" else -1
            if depth > _MAX_NESTING:
                raise UsageError("%s nests ${VAR:-default} more than %d deep"
                                 % (where, _MAX_NESTING))
            if not depth:
                end = brace.end()
                break
        if end is None:  # never closed: this "${" is text; later variables still expand
            parts.append(text[done:start + 2])
            done = start + 2
            continue
        parts.append(text[done:start])
        parts.append(_variable(text[start + 2:end - 1], environ, where, found))
        done = end


def _variable(inner, environ, where, found):
    """The value of one ${inner}."""
    form = re.match(_VARIABLE_FORM, inner)
    if not form or (not form.group(1) and form.group(2) in _VSCODE_VARIABLES):
        raise UsageError("%s uses ${%s}, which is not supported (use ${VAR}, ${env:VAR}"
                         " or ${VAR:-default})" % (where, inner))
    name, default = form.group(2), form.group(3)
    value = environ.get(name)
    if default is not None and not value:
        # As in the shell, ":-" also replaces an empty value.
        return _expand(default, environ, where, found)
    if value is None:
        raise UsageError("%s uses ${%s}, which is not set (set it or write ${%s:-default})"
                         % (where, inner, name))
    if found is not None:
        found.append(value)
    return value


def _describe_servers(servers):
    """One line per configured server (a dict, or (name, entry) pairs), unexpanded:
    name, transport, command line or URL."""
    rows = []
    for name, entry in servers.items() if isinstance(servers, dict) else servers:
        transport = _entry_transport(entry) if isinstance(entry, dict) else None
        if transport == "http":
            transport = entry.get("type") or "http"
            target = _shown_word(entry[_url_key(entry)])
        elif transport == "stdio":
            argv = [entry["command"]] + _list(entry.get("args"))
            target = " ".join(_shell_word(_shown_word(arg)) for arg in argv)
        else:  # why it cannot be used, as --server would say
            transport, target = "?", "(%s)" % (_unreachable(entry.get("type"))
                                               if isinstance(entry, dict) else "not an object")
        rows.append((name, transport, target))
    widths = [max([len(row[i]) for row in rows] or [0]) for i in (0, 1)]
    return ["%-*s  %-*s  %s" % (widths[0], name, widths[1], transport, target)
            for name, transport, target in rows]


def _shown_word(value):
    return value if isinstance(value, str) else json.dumps(value)


# ---------------------------------------------------------------------------
# Arguments and rendering: key=value, signatures, content blocks
# ---------------------------------------------------------------------------

def _parse_pairs(tokens, allow_json=True):
    """``key=value`` and ``key:=JSON`` tokens as (key, value, is_raw_json) triples."""
    pairs, seen = [], set()
    for token in tokens:
        key, sep, value = token.partition("=")
        raw = allow_json and key.endswith(":")
        if raw:
            key = key[:-1]
        if not sep or not key:
            raise UsageError("expected key=value%s, got %r"
                             % (", key:=JSON or one JSON object" if allow_json else "", token))
        if key in seen:
            raise UsageError("argument %r given twice" % key)
        seen.add(key)
        if raw:
            value = _load_json(value, "argument %r" % key)
        pairs.append((key, value, raw))
    return pairs


def _load_json(text, what):
    try:
        return _json_loads(text)
    except ValueError as e:
        raise UsageError("%s is not valid JSON: %s" % (what, e))


def _call_arguments(tokens, stdin=None, wait=DEFAULT_TIMEOUT):
    """The syntax of ``call`` arguments, read and checked before the server starts.

    The first token may be a JSON object, ``@file.json`` (a pipe given
    ``wait`` seconds) or ``-`` (stdin); ``key=value`` and ``key:=JSON`` pairs
    follow (and override it). Returns (object or None, pairs).
    """
    if not tokens or not (tokens[0] == "-" or tokens[0].startswith("@")
                          or tokens[0].lstrip().startswith("{")):
        return None, _parse_pairs(tokens)
    first, what = tokens[0], "the arguments object"
    if first == "-":
        first, what = _read_text(stdin), "the arguments object on stdin"
    elif first.startswith("@"):
        what = first[1:]
        first = _read_file(what, "arguments from " + what, wait=wait)
    value = _load_json(first, what)
    if not isinstance(value, dict):
        raise UsageError("%s must be a JSON object" % what)
    return value, _parse_pairs(tokens[1:])


def _reader(root):
    """A _SchemaCheck of ``root`` that reads it (types, properties) without checking."""
    reader = _SchemaCheck(root, "argument", False)
    reader.dialect = _dialect(_dict(root).get("$schema")) or 2020
    reader.index()
    reader.parts_left = _MAX_PARTS  # for all it is asked: a listing reads every property
    return reader


def _parts(reader, schema):
    """``schema`` and every schema it is made of in place, each once: through
    $ref, allOf, anyOf, oneOf, then, else and dependentSchemas (not if or not,
    which hold conditions). $refs can make a small schema a cycle or a huge tree,
    so the reader reads so many parts at most, over all it is asked."""
    stack, seen = [schema], set()
    while stack and reader.parts_left > 0:
        reader.parts_left -= 1
        node = reader.shape(stack.pop())
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if "$ref" in node:
            stack.append(reader.resolve(node)[0])
        for key in ("dependentSchemas", "else", "then", "oneOf", "anyOf", "allOf"):
            sub = node.get(key)
            stack.extend(reversed(_list(sub)) if key.endswith("Of") else
                         _dict(sub).values() if key == "dependentSchemas" else [sub])


def _schema_types(schema, reader):
    """The JSON types a schema admits, as a list of names (types, or those of
    its enum and const values), from all its parts."""
    types = []
    for node in _parts(reader, schema):
        kind = node.get("type")
        kinds = [kind] if isinstance(kind, str) else [k for k in _list(kind)
                                                      if isinstance(k, str)]
        if not kinds and ("enum" in node or "const" in node):
            kinds = [_json_type(v) for v in _list(node.get("enum")) or [node.get("const")]]
        types.extend(k for k in kinds if k not in types)
    return types


def _target(reader, schema):
    """``schema``, or what its $refs lead to."""
    for _ in range(_MAX_SCHEMA_DEPTH):
        schema = reader.shape(schema)
        target = reader.resolve(schema)[0] if "$ref" in _dict(schema) else None
        if not isinstance(target, dict):
            break
        schema = target
    return _dict(schema)


def _property(reader, key):
    """The schemas argument ``key`` meets, wherever the tool's schema gives its
    properties: by name, else by a matching pattern, else additionalProperties."""
    named, matched, extra = [], [], []
    for node in _parts(reader, reader.root):
        properties = _dict(node.get("properties"))
        if key in properties:
            named.append(properties[key])
            continue
        found = [sub for pattern, sub in _dict(node.get("patternProperties")).items()
                 if reader.search(pattern, key)]
        matched.extend(found)
        if not found and isinstance(node.get("additionalProperties"), dict):
            extra.append(node["additionalProperties"])
    return {"anyOf": named or matched or extra}


def _json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_INTEGER = r"-?[0-9]+\Z"
_NUMBER = r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?\Z"


def _coerce(key, text, types):
    """A ``key=value`` string as the JSON type its schema asks for."""
    if not types or "string" in types:
        return text
    for kind in types:
        if kind == "null" and text == "null":
            return None
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        try:
            if kind == "integer" and re.match(_INTEGER, text):
                return _bounded_int(text)
            if kind == "number" and re.match(_NUMBER, text):
                return _finite_float(text) if any(c in text for c in ".eE") else _bounded_int(
                    text)
        except ValueError as e:  # 5000 digits, 1e999
            raise UsageError("argument %r: %s" % (key, e))
        if kind in ("array", "object"):
            try:
                value = _json_loads(text)
            except ValueError:
                continue
            if _json_type(value) == kind:
                return value
    known = ("null", "boolean", "integer", "number", "array", "object")
    unknown = [k for k in types if k not in known]
    if unknown:
        raise UsageError("argument %r: cannot coerce to schema type %s; pass it as %s:=JSON"
                         % (key, "/".join(unknown), key))
    hint = ""
    if "array" in types or "object" in types:  # how to write one: teach the next try
        # Spelled as the README teaches JSON arguments: key:=JSON.
        hint = ("; a list is JSON: %s:=%s" % (key, _shell_word(json.dumps([text])))
                if "array" in types else "; an object is JSON: %s:=%s"
                % (key, _shell_word('{"name": "value"}')))
    raise UsageError("argument %r: expected %s, got %r%s" % (key, " or ".join(types), text,
                                                          hint))


def _coerce_arguments(pairs, schema):
    """``key=value`` pairs as a tool's arguments, typed by its inputSchema."""
    reader = _reader(_dict(schema)) if pairs else None
    arguments = {}
    for key, value, raw in pairs:
        if raw:
            arguments[key] = value
            continue
        try:  # the server's patterns may backtrack: past the time, a value stays text
            types = _within(_CHECK_SECONDS, lambda: _schema_types(_property(reader, key),
                                                                  reader))
        except _Overtime:
            types = []
        arguments[key] = _coerce(key, value, types)
    return arguments


def _first_line(text):
    for line in (_shown_word(text) if text else "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def _type_label(schema, reader, depth=0):
    schema = _target(reader, schema)
    if "enum" in schema and isinstance(schema["enum"], list):
        return "|".join(json.dumps(v) for v in schema["enum"])
    types = _schema_types(schema, reader)
    if types == ["array"] and depth < _MAX_SCHEMA_DEPTH:
        items = _type_label(schema.get("items"), reader, depth + 1)
        return (items if "|" not in items else "(%s)" % items) + "[]" if items else "array"
    return "|".join(types)


def _signature(tool, prefix=""):
    """A tool as one line: ``name(arg: type, opt?: type) - first line of description``,
    ``prefix`` (a server's, as in server__tool) before its name."""
    line = _call_form(tool, prefix)
    annotations = _dict(tool.get("annotations"))
    # Hints the server declared (server/tools, "Tool Annotations"); defaults unshown.
    line += "".join(" [%s]" % label for key, label in _HINTS if annotations.get(key) is True)
    # 2025-11-25 server/tools: execution.taskSupport, a task required or allowed.
    line += _TASK_MARKS.get(_dict(tool.get("execution")).get("taskSupport"), "")
    description = _first_line(tool.get("description"))
    return line + (" - " + description if description else "")


def _call_words(name):
    """How ``call`` names a tool on a command line: a name that begins with
    "-" would be taken for an option (CLI.md "Tools")."""
    name = _shown_word(name)
    return "call --tool=" + name if name.startswith("-") else "call " + name


def _call_form(tool, prefix=""):
    """``name(arg: type, opt?: type)``: how a tool is called, ``prefix`` (a
    server's, as in server__tool) before its name."""
    schema = _dict(tool.get("inputSchema"))
    required = _list(schema.get("required"))
    args, reader = [], _reader(schema) if schema.get("properties") else None
    for name, prop in _dict(schema.get("properties")).items():
        label = _type_label(prop, reader)
        args.append("%s%s%s" % (name, "" if name in required else "?",
                                ": " + label if label else ""))
    return "%s%s(%s)" % (prefix, _shown_word(tool.get("name")), ", ".join(args))


_TASK_MARKS = {"required": " [task]", "optional": " [task?]"}
_HINTS = (("readOnlyHint", "read-only"), ("destructiveHint", "destructive"),
          ("idempotentHint", "idempotent"), ("openWorldHint", "open-world"))


def _base64_size(data):
    data = str(data or "").strip()
    return len(data) * 3 // 4 - data[-2:].count("=")


def _render_block(block, saver=None):
    """One content block (server/tools, "Tool Result") as readable text; what
    a marker line quotes of the server's (type, MIME type, URI, name) is _flat,
    so it cannot forge a marker of its own."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return "[not a content block: %s]" % _show(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return "[%s %s, %d bytes]%s" % (kind, _flat(block.get("mimeType", "?")),
                                        _base64_size(block.get("data")),
                                        _saved(saver, block.get("data"), block.get("mimeType")))
    if kind == "resource_link":
        return "[resource link %s%s%s]" % (
            _flat(block.get("uri")), " (%s)" % _flat(block["name"]) if block.get("name") else "",
            " " + _flat(block["mimeType"]) if block.get("mimeType") else "")
    if kind == "resource":
        item = _dict(block.get("resource"))
        if "text" not in item:
            return _render_contents(item, saver)
        return "[resource %s%s]\n%s" % (_flat(item.get("uri")), " (%s)" % _flat(item["mimeType"])
                                        if item.get("mimeType") else "", item["text"])
    return "[%s content]" % _flat(kind)


def _render_contents(item, saver=None):
    """One resource content (text or blob) as readable text."""
    if "text" in item:
        return str(item["text"])
    return "[blob %s, %d bytes] %s%s" % (_flat(item.get("mimeType", "?")),
                                         _base64_size(item.get("blob")),
                                         _flat(item.get("uri", "")),
                                         _saved(saver, item.get("blob"), item.get("mimeType")))


def _saved(saver, data, mime):
    path = saver.save(data, mime) if saver is not None and data is not None else None
    return " saved to %s" % path if path else ""


# File extensions for the media types servers send most; others ask mimetypes.
_EXTENSIONS = {
    "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
    "image/svg+xml": ".svg", "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3",
    "audio/ogg": ".ogg", "audio/webm": ".webm", "application/pdf": ".pdf",
    "application/json": ".json", "text/plain": ".txt", "application/octet-stream": ".bin",
}


class _Saver(object):
    """--save-dir: binary content to files named by content hash, so reruns reuse them."""

    def __init__(self, directory, diag):
        self.directory = directory
        self.diag = diag
        self._written = set()  # a result repeating a block writes its file once

    def save(self, data, mime):
        import base64  # lazy, these three: only with --save-dir
        import binascii
        import mimetypes
        try:
            if not isinstance(data, str):
                raise ValueError("not a string")
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            self.diag.warning("not saved: %s content is not valid base64" % mime)
            return None
        mime = str(mime or "").split(";")[0].strip().lower()
        extension = _EXTENSIONS.get(mime) or mimetypes.guess_extension(mime) or ".bin"
        path = os.path.join(self.directory, _sha256()(raw).hexdigest()[:16] + extension)
        if path in self._written:
            return path
        self._written.add(path)
        try:
            _write_whole(os.path.join(os.path.realpath(self.directory), os.path.basename(path)),
                         raw, private=False, durable=False)
        except (IOError, OSError) as e:
            raise UsageError("cannot write %s: %s" % (path, e.strerror or e))
        return path

    def save_all(self, result):
        """--json with --save-dir: save every binary part, name the files on stderr."""
        items = [_dict(b) for b in _list(result.get("content"))]
        items += [_dict(b.get("resource")) for b in items if b.get("type") == "resource"]
        items += [_dict(c) for c in _list(result.get("contents"))]
        for item in items:
            data = item.get("data") if item.get("type") in ("image", "audio") else item.get("blob")
            if data is not None:
                path = self.save(data, item.get("mimeType"))
                if path:
                    self.diag.note("saved %s to %s" % (_flat(item.get("mimeType", "?")), path))


# ---------------------------------------------------------------------------
# Answering the server: elicitation and sampling
# ---------------------------------------------------------------------------

class _Elicitor(object):
    """--elicit: how the command line answers an elicitation (client/elicitation).

    Form requests follow the mode; URL requests show the URL and its host on
    a terminal and wait for the person there, and are declined without one.
    Questions name the server that asks ("Security Considerations"); the
    Client checks accepted answers against the requested schema.
    """

    def __init__(self, spec, diag, stdin, wait=DEFAULT_TIMEOUT):
        self.diag = diag
        self.stdin = stdin
        self.tty = _isatty(stdin) and diag.tty
        self.mode = spec[0] if spec else ("interactive" if self.tty else "cancel")
        self.answers = _load_answers(spec[1], wait) if self.mode == "answers" else None
        self.server = "the server"  # its name, once it is known

    def __call__(self, params, key=None):
        if self.mode in ("decline", "cancel"):
            return {"action": self.mode}
        if params.get("mode") == "url":
            return self._url(params)
        schema = _dict(params.get("requestedSchema"))
        fields = _dict(schema.get("properties"))
        required = [n for n in _list(schema.get("required")) if isinstance(n, str)
                    and n in fields]
        if self.mode == "interactive":
            return self._interactive(params, fields, required)
        if self.mode == "defaults":
            content = dict((n, f["default"]) for n, f in fields.items()
                           if isinstance(f, dict) and "default" in f)
        else:
            source = self.answers
            if key is not None and isinstance(source.get(key), dict):
                source = source[key]
            if source.get("action") in _ELICIT_ACTIONS:
                return source
            content = dict((n, source[n]) for n in fields if n in source)
        missing = [n for n in required if n not in content]
        if missing:
            self.diag.warning("declined the server's question %s: no %s for %s"
                              % (_show(params.get("message", "")), self.mode,
                                 ", ".join(missing)))
            return {"action": "decline"}
        return {"action": "accept", "content": content}

    def _url(self, params):
        """client/elicitation, "Safe URL Handling": the whole URL, then its host
        marked, with the reasons to doubt it; a doubtful one needs "yes"."""
        url = _flat(params.get("url"))
        if not self.tty:
            self.diag.warning("declined to open %s: no terminal to confirm on" % url)
            return {"action": "decline"}
        host, doubts = _url_host(params.get("url"))
        self.diag.prompt("%s asks: %s\n  URL:  %s\n" % (self.server,
                                                        _flat(params.get("message", "")), url))
        plain, domain = _domain_of(host)
        self.diag.prompt("  host: " + _flat(plain), marked=_flat(domain), after="\n")
        for doubt in doubts:  # part of the question: shown even with --quiet
            self.diag.prompt("  warning: %s\n" % _flat(doubt))
        if doubts:
            answer = self._line("Type yes once you have opened it, if you trust it "
                                "(anything else declines): ")
            return {"action": "accept" if answer == "yes" else "decline"}
        answer = self._line("Open it in your browser, then press Enter (Ctrl-D declines): ")
        return {"action": "decline" if answer is None else "accept"}

    def _interactive(self, params, fields, required):
        self.diag.prompt("%s asks: %s\n" % (self.server, _flat(params.get("message", ""))))
        content = {}
        for name, field in fields.items():
            value = self._ask(name, _dict(field), name in required)
            if value is _CANCELLED:
                return {"action": "cancel"}
            if value is not _SKIPPED:
                content[name] = value
        return self._review(_dict(params.get("requestedSchema")), fields, required, content)

    def _review(self, schema, fields, required, content):
        """The answers shown, to send, change, decline or cancel ("User
        Interaction Model": users review and may modify them before sending);
        answers the schema refuses as a whole cannot be sent."""
        names = list(fields)
        while True:
            problem = _schema_problem(content, schema, where="answer", formats=True)
            self.diag.prompt("Your answers to %s:\n%s%s" % (self.server, "".join(
                "  %d %s: %s\n" % (n, _flat(name), _flat(json.dumps(content[name]))
                                   if name in content else "(none)")
                for n, name in enumerate(names, 1)), "  problem: %s\n" % _flat(problem)
                if problem else ""))
            choice = self._line("%s[e]dit an answer, [d]ecline, [c]ancel: " % (
                "" if problem else "[A]ccept and send, "))
            choice = "c" if choice is None else choice.lower()[:1]
            if choice in ("", "a", "y") and not problem:
                return {"action": "accept", "content": content}
            if choice in ("d", "n", "c"):
                return {"action": "cancel" if choice == "c" else "decline"}
            if choice != "e" or not names:
                continue
            name = self._field(names)
            if name is None:
                return {"action": "cancel"}
            value = self._ask(name, _dict(fields[name]), name in required, content.get(name))
            if value is _CANCELLED:
                return {"action": "cancel"}
            content.pop(name, None)
            if value is not _SKIPPED:
                content[name] = value

    def _field(self, names):
        """The answer to change: the only one, or the one numbered; None on Ctrl-D."""
        while len(names) > 1:
            text = self._line("Which answer (1-%d)? " % len(names))
            if text is None:
                return None
            if text.isdigit() and 1 <= int(text) <= len(names):
                return names[int(text) - 1]
        return names[0]

    def _ask(self, name, field, required, current=None):
        """One field's answer; Enter takes the default or keeps the current
        answer, and "-" clears an optional one."""
        choices = _choices(field)
        label = "%s%s" % (_flat(field.get("title") or name), "" if required else " (optional)")
        if field.get("description"):
            label += " - %s" % _flat(field["description"])
        if choices:
            label += " [%s]" % "/".join(_flat(c) for c in choices)
        default = field.get("default") if current is None else current
        if default is not None:
            label += " (%s %s)" % ("default" if current is None else "now",
                                   _flat(json.dumps(default)))
        if current is not None and not required:
            label += " (- clears it)"
        for _ in range(5):
            text = self._line(label + ": ")
            if text is None:
                return _CANCELLED
            if text == "-" and current is not None and not required:
                return _SKIPPED
            if not text:
                if default is not None:
                    return default
                if not required:
                    return _SKIPPED
                self.diag.prompt("  an answer is needed\n")
                continue
            value, problem = _parse_answer(text, field, choices)
            if problem is None:
                return value
            self.diag.prompt("  %s\n" % _flat(problem))
        return _CANCELLED

    def _line(self, prompt):
        """What the person typed, stripped; None at the end of the input."""
        while True:
            self.diag.prompt(prompt)
            line = _read_line(self.stdin)
            if line is _TOO_LONG:
                self.diag.prompt("  that is over the input limit of %d bytes\n" % _INPUT_LIMIT)
            elif re.search(_ESCAPED_BYTES, line):
                self.diag.prompt("  that is not valid UTF-8\n")
            else:
                return line.strip() if line else None


def _ipv4(host):
    """The address a browser reads a host ending in a number as (WHATWG URL, "IPv4
    parser": 0x7f.1 is 127.0.0.1), "(no valid address)", or None for a name."""
    parts = host.split(".")
    if len(parts) > 1 and not parts[-1]:
        parts.pop()
    if not re.match(r"(?:0[xX][0-9a-fA-F]*|[0-9]+)\Z", parts[-1]):
        return None
    numbers = []
    for part in parts:
        digits, base = ((part[2:], 16) if part[:2].lower() == "0x" else
                        (part[1:], 8) if len(part) > 1 and part[0] == "0" else (part, 10))
        try:
            numbers.append(int(digits or "0", base) if len(digits) <= 20 else -1)
        except ValueError:
            numbers.append(-1)
    last = numbers.pop()
    if (len(numbers) > 3 or not all(0 <= n <= 255 for n in numbers)
            or not 0 <= last < 256 ** (4 - len(numbers))):
        return "(no valid address)"
    value = last + sum(n << 8 * (3 - i) for i, n in enumerate(numbers))
    return ".".join(str(value >> shift & 255) for shift in (24, 16, 8, 0))


# Second-level labels under which a country's names are registered (co.uk,
# com.au, ac.jp, ...): the domain there is three labels, not two.
_SECOND_LEVELS = ("ac", "co", "com", "edu", "gen", "go", "gob", "gov", "info", "int", "ltd",
                  "mil", "ne", "net", "nic", "nom", "or", "org", "plc", "sch")


def _domain_of(host):
    """``host`` as (what comes before its domain, the domain): the last two
    labels, three under a country's second level (example.co.uk), the whole
    host for an IP address or a name of one or two labels. The prompt marks
    the domain (client/elicitation, "Safe URL Handling": the domain highlighted),
    so accounts.example.com.evil.test shows evil.test apart."""
    # U+3002, U+FF0E and U+FF61 separate labels as "." does (IDNA), one for one.
    name = host.translate({0x3002: ".", 0xff0e: ".", 0xff61: "."}).rstrip(".")
    if ":" in name or re.match(r"[0-9.]+\Z", name):
        return "", host
    labels = name.split(".")
    count = 3 if len(labels) >= 3 and len(labels[-1]) == 2 and (
        labels[-2] in _SECOND_LEVELS) else 2
    if len(labels) <= count:
        return "", host
    cut = len(".".join(labels[:-count])) + 1  # the same in host: one character a dot
    return host[:cut], host[cut:]


def _url_host(url):
    """A URL's host as a browser would open it, and the reasons to doubt it."""
    import unicodedata  # lazy, these two: only for a URL elicitation
    import urllib.parse
    text = url if isinstance(url, str) else ""
    # Browsers (WHATWG URL) strip the ends, drop tabs and line breaks, and read
    # \ as /; so does this.
    text = re.sub(r"\A[\x00-\x20]+|[\x00-\x20]+\Z", "", text)
    doubts = [why for why, found in (
        ("the URL holds a backslash, which a browser reads as /", "\\" in text),
        ("the URL holds tabs or line breaks, which a browser drops", re.search("[\t\n\r]", text)))
        if found]
    text = re.sub("[\t\n\r]", "", text).replace("\\", "/")
    try:
        parts = urllib.parse.urlsplit(text)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
        return host or "(none)", ["the URL is not an http or https address with a host"]
    if "@" in parts.netloc:
        doubts.append("the URL names a user before the host (%s@), which can make "
                      "another host look like the one opened" % parts.netloc.rsplit("@", 1)[0])
    if "%" in host:
        decoded = urllib.parse.unquote(host).lower()
        doubts.append("the host %s is percent-encoded: a browser opens %s" % (host, decoded))
        host = decoded
    try:  # mapped as a browser maps it (０ is 0, 。 a dot) before any reading
        ascii_host = host.encode("idna").decode("ascii")
        shown = ascii_host.encode("ascii").decode("idna")
    except UnicodeError:
        ascii_host, shown = host, "(not a valid host name)"
    address = _ipv4(ascii_host)
    if address is not None and address != host:
        doubts.append("the host %s is a number: %s" % (host, "a browser opens the address "
                      + address if address[0] != "(" else "no valid address"))
        return address, doubts
    if ascii_host != host:
        doubts.append("the host %s is not plain ASCII: a browser opens %s, which may imitate "
                      "another name" % (host, ascii_host))
    elif any(label.startswith("xn--") for label in host.split(".")):
        doubts.append("the host %s is Punycode (xn--); it reads as %s, which may imitate "
                      "another name" % (host, shown))
    for label in shown.split("."):  # a name in one script per label is the usual kind
        scripts = set(unicodedata.name(c, "?").split(" ")[0] for c in label if c.isalpha())
        if len(scripts) > 1:
            doubts.append("the host %s mixes scripts (%s), which may imitate another name"
                          % (shown, ", ".join(sorted(scripts)).lower()))
            break
    return host, doubts


_CANCELLED = object()
_SKIPPED = object()


def _load_answers(path, wait):
    what = "--elicit answers " + path
    answers = _load_json(_read_file(path, what, wait=wait), what)
    if not isinstance(answers, dict):
        raise UsageError("--elicit answers %s must hold a JSON object" % path)
    return answers


def _choices(field):
    """The allowed values of an elicitation field: enum, titled oneOf, or array items."""
    if field.get("type") == "array":
        field = _dict(field.get("items"))
        field = dict(field, enum=field.get("enum") or [
            _dict(o).get("const") for o in _list(field.get("anyOf") or field.get("oneOf"))])
    if isinstance(field.get("enum"), list):
        return field["enum"]
    return [_dict(o).get("const") for o in _list(field.get("oneOf"))]


def _parse_answer(text, field, choices):
    """A typed answer and None, or None and what is wrong with it."""
    kind = field.get("type")
    kinds = [k for k in ([kind] if isinstance(kind, str) else _list(kind))
             if isinstance(k, str) and k != "null"]  # an ElicitResult holds no null
    if "array" in kinds:
        values = [v.strip() for v in text.split(",") if v.strip()]
        wrong = [v for v in values if choices and v not in choices]
        return (None, "not one of the choices: %s" % ", ".join(wrong)) if wrong else (values, None)
    if choices:  # the value itself, of whatever type: "2" picks 2 from [1, 2]
        picked = [c for c in choices if text == (c if isinstance(c, str) else json.dumps(c))]
        if not picked:
            return None, "choose one of: %s" % ", ".join(_shown_word(c) for c in choices)
        value = picked[0]
    else:
        value = next((v for v in (_typed(text, k) for k in kinds or ["string"])
                      if v is not _NOT_TYPED), _NOT_TYPED)
        if value is _NOT_TYPED:
            return None, " or ".join(_EXPECTED.get(k, "a " + k) for k in kinds)
    problem = _schema_problem(value, field, where="answer", formats=True)
    return (None, problem) if problem else (value, None)


_NOT_TYPED = object()
# What to type for each JSON type that is not text.
_EXPECTED = {"boolean": "answer yes or no", "integer": "expected an integer",
             "number": "expected a number"}


def _typed(text, kind):
    """``text`` as a value of JSON type ``kind``, or _NOT_TYPED."""
    try:
        if kind == "boolean" and text.lower() in ("y", "yes", "true", "1", "n", "no", "false",
                                                  "0"):
            return text.lower() in ("y", "yes", "true", "1")
        if kind in ("integer", "number") and re.match(_INTEGER, text):
            return _bounded_int(text)
        if kind == "number" and re.match(_NUMBER, text):
            return _finite_float(text)
    except ValueError:  # 5000 digits, 1e999: JSON cannot carry it
        return _NOT_TYPED
    return text if kind == "string" else _NOT_TYPED


def _sampler(command_line, timeout):
    """--sampling-command CMD: sampling answered by a command (client/sampling).

    The request params go to its stdin as JSON; its stdout is the result.
    """
    if command_line is None:
        return None
    try:
        argv = _shell_split(command_line)
    except ValueError as e:
        raise UsageError("--sampling-command: %s" % e)
    if not argv:
        raise UsageError("--sampling-command is empty")
    # Checked before the server starts; exit 2, as 127 and 126 name the server's command.
    if _which(argv[0]) is None:
        raise UsageError("--sampling-command: %s is %s" % (
            argv[0], "not executable" if os.sep in argv[0] and os.path.isfile(argv[0])
            else "not found"))

    def sample(params):
        return _run_json_command(argv, params, timeout, "sampling command")
    return sample


def _run_json_command(argv, payload, timeout, what):
    """Run argv with payload as JSON on stdin; its stdout parsed as a JSON object.

    Its stdout is a file, not a pipe: the answer is complete when the command
    exits, whatever it left running, and what it left running is killed.
    """
    import subprocess  # lazy: only with --sampling-command
    import tempfile
    with tempfile.TemporaryFile() as out:
        proc = None
        try:
            proc = _spawn(argv, stdin=subprocess.PIPE, stdout=out)
            proc.communicate(json.dumps(payload).encode("utf-8"), timeout)
        except OSError as e:  # our configuration, not the server: usage
            raise UsageError("cannot run %s %s: %s" % (what, argv[0], e.strerror or e))
        except subprocess.TimeoutExpired:
            raise RequestTimeout("%s timed out after %gs" % (what, timeout), timeout=timeout)
        finally:
            if proc is not None:  # its group: the command and what it started
                _end_group(proc)
                proc.wait()
        out.seek(0)
        data = out.read(DEFAULT_MAX_BYTES)
    if proc.returncode != 0:
        raise UsageError("%s %s %s" % (what, argv[0], _exit_status(proc.returncode)))
    try:
        result = _json_loads(data.decode("utf-8"))
    except ValueError:
        result = None
    if not isinstance(result, dict):
        raise UsageError("%s %s did not print a JSON object" % (what, argv[0]))
    return result


# ---------------------------------------------------------------------------
# Tasks: tools that run long, waited on and kept for later
# ---------------------------------------------------------------------------

class _TaskStore(object):
    """The tasks this file started and has not seen end (CLI.md "Tasks"):
    $XDG_STATE_HOME/mcp_invoke/tasks.json, 0600 in a 0700 directory, an entry
    per task with its server's key, the tool, its ttl and when it was first
    seen, so that ``task wait ID`` works from a new process. An entry goes
    when its task is seen to end, is cancelled, or its ttl has passed. Every
    change is made under the directory's lock: runs side by side lose none."""

    def __init__(self, environ, server, warn):
        self.directory = _state_home(environ)
        self.path = os.path.join(self.directory, "tasks.json")
        self.server = server  # the server's key (_EraCache.key)
        self._warn = warn
        self._said = set()  # each warning once: a run reads the store at every poll
        self.failed = False  # a change could not be written (said once)

    def warn(self, text):
        if text not in self._said:
            self._said.add(text)
            self._warn(text)

    def _load(self):
        try:
            data = _json_loads((_read_kept(self.path, self.warn) or b"{}").decode("utf-8"))
        except ValueError:
            self.warn("%s is not JSON, so the task ids kept in it are lost; it is written "
                      "anew" % self.path)
            data = {}
        now = time.time()
        return [entry for entry in _list(_dict(data).get("tasks")) if isinstance(entry, dict)
                and isinstance(entry.get("id"), str) and isinstance(entry.get("server"), str)
                and isinstance(entry.get("since"), (int, float))
                and not (isinstance(entry.get("ttl"), (int, float))
                         and entry["since"] + entry["ttl"] < now)]

    def entries(self):
        """This server's tasks, oldest first."""
        return [entry for entry in self._load() if entry["server"] == self.server]

    def find(self, task_id):
        return next((e for e in self.entries() if e["id"] == task_id), None)

    def _change(self, task_id, entry):
        """Put ``entry`` in place of this server's entry of ``task_id`` (None: drop it)."""
        try:
            _private_dir(self.directory, narrow=False)
            with _locked(self.directory):
                tasks = self._load()
                old = [e for e in tasks if e["id"] == task_id and e["server"] == self.server]
                if entry is None and not old:
                    return
                tasks = [e for e in tasks if e not in old] + ([dict(old[0] if old else {},
                                                                   **entry)] if entry else [])
                _write_whole(self.path, _to_json({"tasks": tasks}) + "\n")
        except OSError as e:
            if not self.failed:  # once: every poll would say it again
                self.warn("cannot keep task %s in %s: %s" % (task_id, self.path,
                                                               e.strerror or e))
            self.failed = True

    def keep(self, task_id, tool, status, ttl):
        entry = {"id": task_id, "server": self.server, "status": status, "ttl": ttl}
        if self.find(task_id) is None:
            entry.update(tool=tool or "-", since=time.time())
        self._change(task_id, entry)

    def drop(self, task_id):
        self._change(task_id, None)


class _Tasks(object):
    """What a run does with the tasks its requests wait on (the Client's
    on_task): each new status and message on stderr, or as an event, once,
    and the store kept up to date."""

    def __init__(self, diag, store=None):
        self.diag = diag
        self.store = store  # a _TaskStore; None where the server has no key (a session)
        self.tool = None  # the tool being called, for the store
        self.failed = False  # a task said failed: its result is an error (_show_call_result)

    def seen(self, task):
        task_id, status = task.get("taskId"), task.get("status")
        message = task.get("statusMessage")
        message = message if isinstance(message, str) else None
        self.diag.task(task_id, status, message)
        self.failed = self.failed or status == "failed"
        if self.store is None:
            return
        if status in _TASK_ENDS:
            self.store.drop(task_id)
        else:
            self.keep(task)

    def keep(self, task):
        ttl = task.get("ttlMs", task.get("ttl"))  # the 2026-07-28 name, or 2025-11-25's
        ttl = ttl / 1000.0 if isinstance(ttl, (int, float)) and not isinstance(
            ttl, bool) and ttl >= 0 else None
        if self.store is not None:
            self.store.keep(task["taskId"], self.tool, task.get("status"), ttl)

    def timed_out(self, error):
        """A call's RequestTimeout waiting for its task, as the command line says it."""
        task_id = error.task_id
        message = re.sub(r"^(.*?timed out after \S+)", lambda m: m.group(1) + (
            " (--timeout)" if m.group(1).startswith("tasks/") else " (--max-time)"),
                         error.message)
        word = _shell_word(_flat(str(task_id)))
        said = RequestTimeout("%s: task wait %s waits again, task cancel %s stops it"
                              % (message, word, word), None, error.stderr_tail,
                              error.timeout)
        said.task_id = task_id  # it says what to do next itself (see _taught)
        return said

    def interrupted(self, client):
        """Ctrl-C: each task waited on, cancelled (the Client sent tasks/cancel),
        or not, and then kept (CLI.md "Tasks")."""
        for task_id, error in sorted(client.interrupted_tasks.items()):
            if error is None:
                if self.store is not None:
                    self.store.drop(task_id)
                self.diag.error("interrupted: task %s cancelled" % _flat(task_id))
            else:
                self.diag.error("interrupted: task %s may go on (tasks/cancel: %s); task "
                                "cancel %s stops it" % (_flat(task_id), error.message,
                                                        _shell_word(_flat(str(task_id)))))


def _task_line(task):
    """``ID STATUS MESSAGE``, as task get prints a task."""
    message = task.get("statusMessage")
    return " ".join(_flat(str(part)) for part in (
        task.get("taskId"), task.get("status"), message if isinstance(message, str) else "")
        if part).rstrip()


def _age(seconds, words=False):
    """``12m`` (a column), or ``12 min`` (in a sentence)."""
    seconds = max(0, int(seconds))
    for unit, word, size in (("d", "d", 86400), ("h", "h", 3600), ("m", "min", 60),
                             ("s", "s", 1)):
        if seconds >= size or size == 1:
            return "%d%s" % (seconds // size, " " + word if words else unit)


def _cmd_task(client, args, ctx):
    """task get|wait|cancel ID (task list needs no server: _task_list)."""
    action, task_id = args.args[0], args.args[1]
    tasks = ctx.tasks
    entry = tasks.store.find(task_id) if tasks.store is not None else None
    try:
        if action == "get":
            task = client.get_task(task_id)
            if tasks.store is not None and task.get("status") in _TASK_ENDS:
                tasks.store.drop(task_id)
            return ctx.mode.answer(task, [_task_line(task)])
        if action == "cancel":
            ack = client.cancel_task(task_id)
            if tasks.store is not None:
                tasks.store.drop(task_id)
            return ctx.mode.answer(ack, [_task_line(ack)] if "status" in ack else [])
        tasks.tool, tasks.failed = (entry.get("tool") if entry else None), False
        return _show_call_result(client.wait_task(task_id), None, args, ctx,
                                 "task %s" % task_id)
    except ServerError as e:
        if e.method == "tasks/get" and e.code == _INVALID_PARAMS and tasks.store is not None:
            tasks.store.drop(task_id)  # not known to the server: nothing left to wait for
        if entry is not None and isinstance(entry.get("ttl"), (int, float)):
            raise ServerError("%s (kept here since %s ago, with a ttl of %gs)" % (
                e.message, _age(time.time() - entry["since"]), entry["ttl"]), e.method,
                e.code, e.data)
        raise


def _task_list(args, ctx, store):
    """task list: the kept tasks of the chosen server, no server started."""
    entries = store.entries() if store is not None else []
    now = time.time()
    shown = [{"taskId": e["id"], "tool": e.get("tool"), "status": e.get("status"),
              "age": int(now - e["since"]), "ttl": e.get("ttl")} for e in entries]
    return ctx.mode.answer({"tasks": shown}, [
        "%s %s %s %s" % (_flat(e["taskId"]), _flat(str(e["tool"])), _flat(str(e["status"])),
                         _age(e["age"])) for e in shown])


# ---------------------------------------------------------------------------
# Replay: a stdio server that answers from a --trace file
# ---------------------------------------------------------------------------

def _cmd_replay(args, ctx):
    """replay FILE: serve, on stdin and stdout, what a --trace FILE recorded: each
    request gets the recorded answer to the same method and params (ids and
    _meta aside; initialize by its method alone), in recorded order when it
    repeats, after the notifications and requests the server sent before it."""
    exchanges = _recorded(args.args[0])
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in iter(stdin.readline, b""):
        try:
            message = _json_loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue  # notifications, and answers to the server's requests
        frames = _replayed(exchanges, message)
        try:
            stdout.write(b"".join(_encode(frame) for frame in frames))
            stdout.flush()
        except (IOError, OSError):
            return 0  # the client went away
    return 0


def _recorded(path):
    """A trace's exchanges: [request key, the answer, what came before it, used]."""
    exchanges, open_requests, before = [], collections.OrderedDict(), []
    for number, line in enumerate(_read_file(path, "replay " + path).splitlines(), 1):
        try:
            entry = _json_loads(line)
        except ValueError:
            raise UsageError("replay %s: line %d is not JSON: is it a --trace file?"
                             % (path, number))
        frame = _dict(entry).get("frame")
        if not isinstance(frame, dict):
            continue  # raw noise, or a batch
        if entry.get("dir") == "send" and "method" in frame and "id" in frame:
            exchange = [_replay_key(frame), None, before, 0]
            before = []
            exchanges.append(exchange)
            open_requests[json.dumps(frame["id"])] = exchange
        elif entry.get("dir") == "recv" and "method" not in frame and "id" in frame:
            exchange = open_requests.pop(json.dumps(frame["id"]), None)
            if exchange is not None:
                exchange[1] = frame
        elif entry.get("dir") == "recv":  # the server's notification or request: it
            # goes before the answer to the request in flight (the last sent), else the next
            if open_requests:
                list(open_requests.values())[-1][2].append(frame)
            else:
                before.append(frame)
    answered = [e for e in exchanges if e[1] is not None]
    if not answered:
        raise UsageError("replay %s: no request with its answer in it" % path)
    return answered


def _replay_key(request):
    params = dict(_dict(request.get("params")))
    params.pop("_meta", None)
    method = request.get("method")
    return json.dumps([method, {} if method == "initialize" else params], sort_keys=True)


def _replayed(exchanges, request):
    """The frames that answer one request: the recorded ones, or an error naming
    the nearest request recorded."""
    key = _replay_key(request)
    matching = [e for e in exchanges if e[0] == key]
    if not matching:
        import difflib  # lazy: only for a request never recorded
        near = difflib.get_close_matches(key, [e[0] for e in exchanges], 1, 0.0)
        return [{"jsonrpc": "2.0", "id": request["id"], "error": {
            "code": _METHOD_NOT_FOUND if not any(json.loads(e[0])[0] == request["method"]
                                                 for e in exchanges) else -32602,
            "message": "replay: nothing recorded answers %s; the nearest recorded request: "
                       "%s" % (_cut(key, 300), _cut(near[0], 300) if near else "none")}}]
    exchange = next((e for e in matching if not e[3]), matching[-1])  # in order, then the last
    exchange[3] += 1
    token = _dict(_dict(request.get("params")).get("_meta")).get("progressToken")
    frames = []
    for frame in exchange[2] if exchange[3] == 1 else []:
        if frame.get("method") == "notifications/progress" and token is not None:
            frame = dict(frame, params=dict(_dict(frame.get("params")), progressToken=token))
        frames.append(frame)
    return frames + [dict(exchange[1], id=request["id"])]


# ---------------------------------------------------------------------------
# Sessions: a server kept alive between runs, behind a Unix socket
# ---------------------------------------------------------------------------
#
# ``session start NAME`` forks a process of its own (a new session, out of
# the caller's terminal and pipes, writing to NAME.log) that opens one
# Client and serves its socket: a thread moves bytes on the sockets, the
# main thread drives the Client and runs every client's requests at once,
# each client's ids mapped to the Client's. The server's questions are
# answered with the policies given at start; what else it notifies goes to
# the clients. Clients are Client(session=NAME), through _SessionTransport.

_IDLE = 1800.0  # seconds a session waits for a request before it ends (--idle)
_STATUS_WAIT = 2.0  # how long session list and stop wait for a session to answer
_MAX_PEERS = 256  # clients at once; more are told the session is full
# Connections yet to give the session's key (where the endpoint asks for one):
# at most this many wait, each with one line of at most _KEY_LINE bytes.
_UNKEYED_PEERS = 32
_KEY_LINE = 1024
# Connections past _MAX_PEERS that are greeted all the same, for what only
# speaks to the session (session stop, session list); past these, closed.
_CONTROL_PEERS = 16
# A client's messages waiting for the server or in flight there, before it is
# read no more; and all clients' together: a client that floods the session
# holds it to this much, and the others are still served.
_PEER_INBOX = 1024
_SESSION_BACKLOG = 4 * _PEER_INBOX
_PEER_SLACK = 1024 * 1024  # bytes queued for a client past --max-bytes: it does not read
_LOG_MAX = 16 * 1024 * 1024  # characters a session's log takes before it stops growing
# How long a stopped session may take: its server's shutdown (three steps of
# the grace at most), then its clients hung up.
_STOP_WAIT = 3 * SHUTDOWN_GRACE + 2.0


def _cmd_session(args, ctx, server):
    """session start NAME ... | session list | session stop NAME|--all."""
    action = args.args[0]
    if action == "start":
        return _session_start(args, ctx, server)
    given = [flag for flag, value in (("--", server), ("--url", args.url), ("--server",
                                                                            args.server),
                                      ("--config", args.config), ("--session", args.session))
             if value]
    if given:
        raise UsageError("session %s takes no server (%s)" % (action, ", ".join(given)))
    if action == "list":
        return _session_list(ctx)
    if not args.all_servers:
        return _session_stop(args.args[1], ctx)
    failed = None
    for name in _session_names(_session_dir(os.environ)):
        try:  # each one: one that fails is a warning, the others are stopped all the same
            _session_stop(name, ctx)
        except UsageError as e:  # stale, removed
            ctx.diag.warning(str(e))
        except MCPError as e:
            ctx.diag.warning("session %s: %s" % (name, e))
            failed = failed or e.exit_code
    return failed or 0


def _session_names(directory):
    """The names of the endpoints in the sessions directory, sorted."""
    try:
        entries = sorted(os.listdir(directory))
    except OSError:
        return []
    names, size = [], len(_ENDPOINT_SUFFIX)
    for entry in entries:
        try:
            info = os.lstat(os.path.join(directory, entry))
        except OSError:
            continue
        if (entry.endswith(_ENDPOINT_SUFFIX) and re.match(_SESSION_NAME, entry[:-size])
                and _is_endpoint(info) and not _is_link(info)):
            names.append(entry[:-size])
    return names


def _session_statuses(directory, ctx):
    """(name, status) of each session running; stale sockets are removed."""
    statuses = []
    for name in _session_names(directory):
        try:
            statuses.append((name, _session_ask(name, {"session": "status"})))
        except UsageError as e:  # stale, removed
            ctx.diag.warning(str(e))
        except MCPError as e:
            ctx.diag.warning("session %s: %s" % (name, e))
    return statuses


def _session_ask(name, question):
    """Ask session ``name`` one question; its answer (a dict)."""
    transport = _SessionTransport(name, hello=_STATUS_WAIT)
    transport.start()
    try:
        transport.send(question, _encode(question))
        deadline = _Deadline(_STATUS_WAIT, "session %s did not answer within %gs"
                             % (name, _STATUS_WAIT))
        while True:
            inbox = transport.receive(deadline)
            if not inbox:
                raise ConnectionLost(deadline.why)
            answer = inbox.popleft()
            if isinstance(answer, dict) and answer.get("session") == "status":
                return answer
    finally:
        transport.close(0)


def _session_list(ctx):
    sessions = [dict(name=name, pid=status.get("pid"), server=status.get("server"),
                     started=status.get("started"), up=status.get("up"),
                     calls=status.get("calls"), idle=status.get("idle"),
                     restarts=status.get("restarts"))
                for name, status in _session_statuses(_session_dir(os.environ), ctx)]
    return ctx.mode.answer({"sessions": sessions}, ("%s  pid %s  up %s  idle %s  calls %s  %s" % (
        s["name"], s["pid"], _duration(_number(s["up"])), _duration(_number(s["idle"])),
        s["calls"], s["server"]) for s in sessions))


def _number(value):
    return value if _is_number(value) else 0


def _duration(seconds):
    """12s, 40m, 3h, 2d: the largest unit that fits."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return "%d%s" % (seconds // size, unit)
    return "%ds" % seconds


def _session_stop(name, ctx):
    """Stop session ``name`` and wait until it has ended: asked, its server is
    shut down in the spec's order; one that does not end in time gets SIGTERM
    (it closes its server as it ends), then SIGKILL, with its server's group."""
    transport = _SessionTransport(name, hello=_STOP_WAIT)
    transport.start()
    state = _dict(transport.negotiated())
    try:
        transport.send({"session": "stop"}, _encode({"session": "stop"}))
        for signum in (None,) + _SESSION_KILLS:
            if signum is not None:
                ctx.diag.warning("session %s did not stop within %gs; sending it %s"
                                 % (name, _STOP_WAIT, signal.Signals(signum).name))
                _signal_session(state, signum)
            if _hung_up(transport, _Deadline(_STOP_WAIT)):
                break
        else:
            raise RequestTimeout("session %s did not stop: it still answers after SIGTERM and "
                                 "SIGKILL (is its socket another program's?)" % name,
                                 timeout=_STOP_WAIT)
    finally:
        transport.close(0)
    _remove_stale(transport.path)  # what a SIGKILL left
    return ctx.lines(["stopped %s" % name])


def _hung_up(transport, deadline):
    """True once the session's end closes the connection, before ``deadline``."""
    try:
        while not deadline.passed():
            transport.receive(deadline).clear()
    except ConnectionLost:
        return True
    return False


def _session_start(args, ctx, server):
    """Start session ``NAME`` in the background: the server runs and is settled
    before this returns, or the start fails as a direct call would."""
    name = args.args[1]
    path = _session_path(name, os.environ, create=True)
    if not _session_child():  # its starter asked already: the listen under the lock decides
        try:
            _session_ask(name, {"session": "status"})
        except UsageError:
            pass  # none (a stale endpoint was removed)
        except MCPError:  # it does not answer yet
            raise UsageError("session %s is starting, or not answering; see session list"
                             % name)
        else:
            raise UsageError("session %s is already running; stop it first (session stop "
                             "%s)" % (name, name))
    if args.elicit and args.elicit[0] == "interactive":
        raise UsageError("--elicit interactive needs a terminal, which a session has not; "
                         "give defaults, answers FILE, decline or cancel")
    per_call = [flag for flag, value in (
        ("--pin", args.pin), ("--allow-tools", args.allow_tools), ("--deny-tools",
                                                                    args.deny_tools),
        ("--read-only", args.read_only), ("--save-dir", args.save_dir),
        ("--no-validate", args.no_validate)) if value]
    if per_call:
        raise UsageError("%s: for each call through the session (with --session NAME), not "
                         "for session start" % ", ".join(per_call))
    entry = _server_entry(args, server)
    options = _client_options(args, entry, ctx.diag)
    secrets = _secrets(options, entry)
    ctx.diag.redact = _Redactor(secrets)
    log = os.path.join(_state_dir(os.environ), name + ".log")
    log_fd = _open_log(log)
    trace = _open_trace(args.trace, ctx.diag)
    options.update(roots=_roots(args.root, ctx.diag), on_elicit=_Elicitor(args.elicit, ctx.diag,
                                                                          None),
                   on_sample=_sampler(args.sampling_command, args.timeout), trace=trace,
                   sampling_tools=args.sampling_tools)
    idle = args.idle or _IDLE
    shown = ctx.diag.redact(" ".join(options["command"]) if options.get("command")
                            else _shown_url(options["url"]))  # its query may hold a secret
    ready = _detach(lambda tell: _session_main(name, path, log_fd, options, secrets, idle,
                                               shown, tell),
                    keep=[log_fd] + ([] if trace is None else [trace.stream.fileno()]),
                    argv=ctx.argv)
    os.close(log_fd)  # the session's now, as is the trace
    if trace is not None:
        trace.close()
    try:
        pid = _session_ready(ready, name, args, ctx.started)
    except BaseException:
        _unlink(log)  # a failed start leaves nothing behind (its error says why)
        try:  # nor the endpoint of one stopped outright (Windows: terminated)
            _remove_stale(path)
        except (OSError, UsageError):
            pass
        raise
    return ctx.mode.answer({"name": name, "pid": pid, "socket": path, "log": log},
                           ["started %s (pid %d)" % (name, pid)])


def _open_log(path):
    """A session's log, truncated: never through a symlink, and only in a
    directory no one else may write (who could, could swap the log for a link)."""
    if not _yours(os.lstat(os.path.dirname(path))):
        raise UsageError("%s is not a directory of this user's that only it may write; "
                         "fix its mode (chmod 700) or set XDG_STATE_HOME"
                         % os.path.dirname(path))
    try:
        fd = _open_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600, follow=False)
    except OSError as e:
        raise UsageError("cannot write the session's log %s: %s" % (
            path, "it is a symlink" if e.errno == errno.ELOOP else e.strerror or e))
    if os.fstat(fd).st_mode & 0o170000 != 0o100000:
        os.close(fd)
        raise UsageError("the session's log %s is not a regular file" % path)
    os.ftruncate(fd, 0)
    return fd


def _state_dir(environ):
    """The state directory (see _state_home), made 0700 if need be."""
    path = _state_home(environ)
    try:
        _private_dir(path, narrow=False)  # one others may write is refused, not fixed
    except OSError as e:
        raise UsageError("cannot make %s: %s" % (path, e.strerror or e))
    return path


# Starting a session, and stopping one that does not answer. POSIX: forked
# twice (a new session, reparented at once: nobody's zombie), telling its
# starter through a pipe; SIGTERM, then SIGKILL with its server's group.
# Windows, which cannot fork: this file run again, with the same command
# line, as a detached process (no console, a process group of its own, out
# of the caller's Job object where that may be left), telling its starter
# through its stdout; os.kill is TerminateProcess there, and the session's
# server goes with it (its Job object closes with the session's handle).
if _WINDOWS:
    _SESSION_CHILD = "MCP_INVOKE_SESSION_CHILD"
    _SESSION_KILLS = (signal.SIGTERM,)

    def _session_child():
        """Whether this process is a session its starter ran (see _detach)."""
        return os.environ.get(_SESSION_CHILD) == "1"

    def _detach(run, keep=(), argv=()):
        """Run ``run(tell)`` in a process of its own; the read end of what
        ``tell`` says. In that process, run here, and end."""
        if os.environ.pop(_SESSION_CHILD, None) == "1":
            told = os.dup(1)
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 1)
            os.close(null)
            code = 1
            try:
                code = run(lambda value: _tell(told, value))
            except BaseException:
                import traceback  # lazy: a bug, into the session's log
                traceback.print_exc()
            finally:
                os._exit(code)
        import subprocess  # lazy: sessions only
        if _SOURCE is None:
            raise UsageError("session start needs this file by path (no __file__)")
        env = dict(os.environ)
        env[_SESSION_CHILD] = "1"
        flags = 0x8 | subprocess.CREATE_NEW_PROCESS_GROUP  # DETACHED_PROCESS
        for breakaway in (0x01000000, 0):  # CREATE_BREAKAWAY_FROM_JOB, where allowed
            try:
                proc = subprocess.Popen([sys.executable, _SOURCE] + list(argv),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env,
                                        creationflags=flags | breakaway)
                break
            except OSError:
                if not breakaway:
                    raise
        return _pumped(proc.stdout)

    def _pumped(pipe):
        """A channel's read end that gives what ``pipe`` gives (a thread copies it)."""
        import threading  # lazy: sessions on Windows only
        end, far = _channel()
        far.setblocking(True)
        threading.Thread(target=_ServerPipes._from_pipe, args=(pipe, far), daemon=True).start()
        return end

    def _signal_session(state, signum):
        """Send the session process ``signum``: its end, and its server's."""
        pid = state.get("session_pid")
        if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
            try:
                os.kill(pid, signum)
            except OSError:
                pass

    def _stop_self():
        signal.raise_signal(signal.SIGTERM)  # handled in the main thread, as a signal is
else:
    _SESSION_KILLS = (signal.SIGTERM, signal.SIGKILL)

    def _session_child():
        return False  # a fork is the session: it runs no command line

    def _detach(run, keep=(), argv=()):
        """Run ``run(tell)`` in a process of its own: a new session, reparented at
        once (nobody's zombie), its stdio and every other descriptor but ``keep``
        released. ``tell`` writes a JSON line to the pipe returned."""
        read_fd, write_fd = os.pipe()
        first = os.fork()
        if first == 0:
            try:
                os.close(read_fd)
                os.setsid()
                if os.fork() == 0:
                    code = 1
                    try:
                        _release_fds(set(keep) | {write_fd})
                        code = run(lambda value: _tell(write_fd, value))
                    except BaseException:
                        import traceback  # lazy: a bug, into the session's log
                        traceback.print_exc()
                    finally:
                        os._exit(code)
            finally:
                os._exit(0)
        os.close(write_fd)
        os.waitpid(first, 0)
        return read_fd

    def _signal_session(state, signum):
        """Send the session process ``signum``; SIGKILL takes its server's group too."""
        targets = [(os.kill, state.get("session_pid"))]
        if signum == signal.SIGKILL:
            targets.append((_killpg, state.get("pid")))
        for send, pid in targets:
            if isinstance(pid, int) and not isinstance(pid, bool) and pid > 1:
                try:
                    send(pid, signum)
                except OSError:
                    pass

    def _stop_self():
        os.kill(os.getpid(), signal.SIGTERM)


def _release_fds(keep):
    """Close every descriptor above stderr but ``keep``; stdin from /dev/null."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.close(null)
    try:
        limit = min(os.sysconf("SC_OPEN_MAX"), 65536)
    except (ValueError, OSError):
        limit = 1024
    low = 3
    for fd in sorted(keep) + [max(limit, max(keep) + 1 if keep else 3)]:
        os.closerange(low, fd)  # the gap below each one kept
        low = fd + 1


def _tell(fd, value):
    try:
        os.write(fd, json.dumps(value).encode("ascii") + b"\n")
    except OSError:
        pass  # the starter is gone: nobody to tell


class _Restopped(object):
    """A starting session, as main's ``started`` holds it: a second stop
    signal tells it again to stop, and it then kills its server at once."""

    def __init__(self, pid):
        self.pid = pid

    def abort(self):
        try:
            os.kill(self.pid, signal.SIGTERM)
        except OSError:
            pass  # gone already

    def close(self):
        pass


def _session_ready(fd, name, args, started):
    """What the starting session tells: its pid, then ready or the error it
    failed with, raised here. Ctrl-C, or a session that says nothing in time,
    stops it; meanwhile it is in ``started`` (main's), for a second signal."""
    import select  # lazy: sessions only
    words, pid, done, stopper = b"", None, None, None
    seconds = _time_cap(args.timeout, args.max_time) + _STOP_WAIT
    deadline = _Deadline(seconds, "session %s did not start within %gs"
                         % (name, round(seconds, 1)))
    try:
        while done is None:
            left = deadline.left()
            if left <= 0:
                raise RequestTimeout(deadline.why)
            if not select.select([fd], [], [], min(left, _WAIT_STEP))[0]:
                continue
            data = _read_end(fd, _READ_SIZE)
            if not data:
                raise ConnectionLost("session %s ended as it started; see its log" % name)
            words += data
            *lines, words = words.split(b"\n")
            for line in lines:
                said = _dict(json.loads(line.decode("ascii")))
                pid = said.get("pid", pid)
                done = said if ("ready" in said or "error" in said) else done
            if isinstance(pid, int) and stopper is None:
                stopper = _Restopped(pid)
                started.append(stopper)
        if "error" in done:
            raise _error_from(done["error"])
        return pid
    except BaseException:
        if pid is not None and done is None:
            _stop_starting(fd, pid)
        raise
    finally:
        _close_end(fd)
        if stopper is not None:
            started.remove(stopper)


def _stop_starting(fd, pid):
    """A session that did not get to start: SIGTERM (on POSIX it closes its
    server), then SIGKILL if it is not gone when its pipe should have closed."""
    import select  # lazy: sessions only
    for signum in _SESSION_KILLS:
        try:
            os.kill(pid, signum)
        except OSError:
            return
        deadline = _Deadline(_STOP_WAIT)
        while not deadline.passed():
            if select.select([fd], [], [], deadline.left())[0] and not _read_end(fd, 4096):
                return


def _session_main(name, path, log_fd, options, secrets, idle, shown, tell):
    """The session process: the log as stdout and stderr, the socket bound, the
    server opened, then served until stopped, idle, or the server ends."""
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    sys.stdout = sys.stderr = _Log(open(2, "w", encoding="utf-8", errors="replace",
                                        buffering=1, closefd=False))
    diag = _Diagnostics(sys.stderr, verbose=True)
    diag.redact = _Redactor(secrets)
    options.update(on_log=diag.log, on_warning=diag.client_warning)
    if options.get("oauth") is not None:  # tokens learnt here are this process's secrets
        options["oauth"]["on_secret"] = diag.redact.add
    if "command" in options:
        options["on_stderr"] = diag.relay
    options["on_elicit"].diag = diag
    if options["trace"] is not None:
        options["trace"].diag = diag
    tell({"pid": os.getpid()})
    server = listener = bound = None
    stopping, opening = [], [None]  # opening: the Client last made, open or opening

    def current():
        return server.client if server is not None and server.client else opening[0]

    def opened():
        """The server started (again): a Client open on it."""
        client = opening[0] = Client(**options)
        try:
            client.open()
        except BaseException:
            client.close()
            raise
        return client

    def on_signal(signum, frame):
        if stopping:
            if current() is not None:
                current().abort()
            return
        stopping.append(signum)
        _Unsplit.deliver(KeyboardInterrupt(), frame)

    for signum in _STOP_SIGNALS:  # each stops the session as session stop does
        signal.signal(signum, on_signal)
    failed = None  # told once nothing of the session is left: its socket, its server
    try:
        listener, bound, key = _session_listener(name, path)
        server = _SessionServer(name, opened(), listener, idle, shown, diag.redact,
                                restart=opened, note=diag.note, key=key)
        tell({"ready": True})
        diag.note("session %s: serving %s (pid %d)" % (name, shown, os.getpid()))
        why = server.serve()
    except MCPError as e:
        failed, why = e, str(e)
    except KeyboardInterrupt:
        failed = ConnectionLost("session %s was stopped as it started" % name)
        why = "stopped by a signal"
    finally:
        if listener is not None:
            _unlink_own(path, bound)
        if current() is not None:
            current().close()
        if server is not None:
            server.hang_up()  # the pump closes the listener
        elif listener is not None:
            listener.close()
    if failed is not None and server is None:
        tell({"error": _error_data(failed)})
    diag.note("session %s ended: %s" % (name, why))
    return 0


class _Log(object):
    """A session's log: what it and its server say, up to _LOG_MAX characters,
    then one line that says the rest is left out (a session may run for days)."""

    def __init__(self, stream):
        self.stream, self.written = stream, 0

    def write(self, text):
        if self.written < _LOG_MAX:
            self.written += len(text)
            self.stream.write(text if self.written < _LOG_MAX else
                              text + "\n[the log is full: what follows is left out]\n")

    def flush(self):
        self.stream.flush()

    def isatty(self):
        return False


# The session's listening end (see _reach_session for the client's): POSIX,
# a Unix socket bound 0600; Windows, a loopback socket whose port and key go
# into the endpoint file, written whole.
if _WINDOWS:
    def _bind_session(path):
        """A listening socket for the session at ``path``: (socket, what
        _unlink_own knows it by, the key its clients must give)."""
        import socket  # lazy: sessions only
        import binascii
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.bind(("127.0.0.1", 0))
            listener.listen(_MAX_PEERS)
            key = binascii.hexlify(os.urandom(32)).decode("ascii")
            _write_whole(path, _to_json({"port": listener.getsockname()[1], "key": key,
                                         "pid": os.getpid()}) + "\n", narrow=False)
            return listener, os.stat(path).st_ino, key
        except BaseException:
            listener.close()
            raise
else:
    def _bind_session(path):
        import socket  # lazy: sessions only
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o177)
        try:
            listener.bind(path)
            listener.listen(_MAX_PEERS)
            return listener, os.stat(path).st_ino, None
        except BaseException:
            listener.close()
            raise
        finally:
            os.umask(mask)


def _session_listener(name, path):
    """The session's endpoint, listening at once, under the directory's lock:
    of two starts of one name, one gets it; a stale endpoint is replaced.
    (socket, its inode, the clients' key: see _bind_session); UsageError if a
    session listens there."""
    with _locked(os.path.dirname(path)):
        if _listening(path):
            raise UsageError("session %s is already running; stop it first (session stop "
                             "%s)" % (name, name))
        _unlink_endpoint(path)
        try:
            return _bind_session(path)
        except OSError as e:
            raise UsageError("cannot make the %s %s: %s" % (_ENDPOINT_KIND.split(" ", 1)[1],
                                                           path, e.strerror or e))


def _unlink_own(path, inode):
    """Remove the endpoint if it is still the one this session bound."""
    try:
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    except OSError:
        pass


class _Peer(object):
    """A client of a session: its socket, what it sent (framed), what goes to it."""

    def __init__(self, sock, max_bytes):
        self.sock = sock
        self.framer = _Framer(max_bytes)
        self.out = collections.deque()
        self.out_pos = 0
        self.queued = 0  # bytes in ``out``
        self.jobs = {}  # its request ids -> their _Job
        self.limits = {}  # its request ids -> seconds each may take, until it is sent
        self.subscribed = set()  # the resource URIs it subscribed to (legacy era)
        self.waiting = 0  # its messages in the session's inbox (see _PEER_INBOX)
        self.closed = False
        self.control = False  # past _MAX_PEERS: the session speaks with it, no more
        self.keyed = True  # it gave the session's key, or none is asked for
        self.since = time.monotonic()


class _Job(object):
    """A client's request, run by the session: whose, its id there, the progress
    token it sent, and the rounds of it so far."""

    __slots__ = ("peer", "ident", "token", "request")

    def __init__(self, peer, ident, token):
        self.peer, self.ident, self.token = peer, ident, token
        self.request = None  # the Client's (see its request engine), once started


class _SessionServer(object):
    """One Client serving many clients over a listening Unix socket.

    The main thread (``serve``) drives the Client; a thread (``_pump``) accepts,
    reads and writes the sockets. They hand over through ``inbox`` (what the
    clients sent; the Client's wait is woken for it) and each peer's ``out``
    (what goes to it; the pump is poked for it), both under ``lock``.

    A server that ends is started again (``restart()``, an open Client) for
    the next request that comes, which is told so (2026-07-28
    basic/transports/stdio: a server that exits unexpectedly SHOULD be
    restarted); what was in flight fails, and clients following a resource
    are told it is lost. Until then ``client`` is None.
    """

    def __init__(self, name, client, listener, idle, shown, redact=None, restart=None,
                 note=None, key=None):
        import selectors  # lazy: sessions only
        import threading
        self.name, self.client, self.listener = name, client, listener
        self.key = key  # what each client must say first, where the endpoint asks for it
        self.redact = redact  # the session's secrets, kept from its clients as from a terminal
        self.idle, self.shown = idle, shown
        self.restart, self.note = restart, note or (lambda text: None)
        self.restarts = 0
        self.reviving = False  # the main thread is starting the server again
        self.stale = (0, None)  # (inbox items, the error): queued as a restart failed
        self.ended = None  # why the server ended, while it is down
        self.stateful = False  # it spoke the handshake era: what it held went with it
        self.lock = threading.Lock()
        self.inbox = collections.deque()  # (peer, message), or (peer, None): it hung up
        self.peers = set()
        self.jobs = {}  # the Client's call id -> _Job
        self.subscribed = {}  # resource URI -> clients subscribed to it (legacy era)
        self.calls = 0
        self.started = time.time()
        self.up_since = self.idle_since = time.monotonic()
        self.ending = None  # why the session ends, once it does
        self.closing = False  # the pump's last round: flush, hang up, end
        # The pump wakes the main thread: the Client's wait, or while the server
        # is down, this event; the Client's waker is swapped under its own lock.
        self.arrived = threading.Event()
        self.wake_lock = threading.Lock()
        self.waker = None
        self.poke = _WakePipe()  # wakes the pump
        self.max_bytes = client.max_bytes
        self._serving(client)
        self.selectors = selectors
        self.thread = threading.Thread(target=self._pump, name="mcp_invoke session")
        self.thread.daemon = True
        self.thread.start()

    def _serving(self, client):
        """``client`` is the one requests go to: its greeting for new clients,
        its notifications relayed, its wait woken by the pump."""
        state = client.settled()
        state.update(transport=client.transport, env_names=client.env_names,
                     pid=client.pid, session_pid=os.getpid())
        self.state = state
        self.hello = _encode({"session": "hello", "state": state})
        client.relay(self._notice)
        with self.wake_lock:
            self.client, self.waker = client, client.waker()

    def wake(self):
        """From the pump: something came for the main thread."""
        with self.wake_lock:
            self.arrived.set()
            if self.waker is not None:
                self.waker()

    # -- the main thread: the Client ------------------------------------------

    def serve(self):
        """Run the clients' requests until the session ends; why it did."""
        while True:
            self.arrived.clear()  # before the inbox is looked at: nothing is missed
            for _ in range(len(self.inbox)):  # what came meanwhile waits for the next
                self._take(*self.inbox.popleft())  # round, after the server's answers
            if self.ending is not None:
                return self.ending
            client = self.client
            if client is None:  # the server ended: started again for the next request
                left = self.idle_since + self.idle - time.monotonic()
                if left <= 0:
                    return "idle for %gs after the server ended (%s)" % (self.idle, self.ended)
                self.arrived.wait(min(left, _MAX_WAIT))
                continue
            requests = [job.request for job in self.jobs.values()]
            # Idle: nothing in flight, and nobody following a resource.
            until = (None if requests else time.monotonic() + _MAX_SECONDS if self.subscribed
                     else self.idle_since + self.idle)
            if until is not None and time.monotonic() >= until:
                return "idle for %gs" % self.idle
            try:
                client.wait(requests, until=until, first=bool(requests),
                            stop=lambda: bool(self.inbox))
            except MCPError as e:  # the server is gone, and nothing was in flight
                if self.restart is None:
                    return self._lost(e)
                self._down(e)
                continue
            for job in [job for job in self.jobs.values() if job.request.done]:
                self._finish(job)

    def _down(self, error):
        """The server ended: what was in flight fails with ``error``, those
        following a resource are told, and the Client is closed; the next
        request starts the server again."""
        for job in list(self.jobs.values()):
            self._drop(job)
            self._failed(job, error)
        following = [peer for peer in list(self.peers) if peer.subscribed]
        for peer in following:
            peer.subscribed.clear()
        self.subscribed.clear()
        if following:
            frame = _encode(self._public({"session": "lost", "error": _error_data(error)}))
            for peer in following:
                self._to(peer, frame)
        client, self.ended = self.client, str(error)
        self.stateful = client.era == "legacy"
        with self.wake_lock:
            self.client, self.waker = None, None
        client.close()
        self.idle_since = time.monotonic()
        self.note("session %s: the server ended: %s; it is restarted for the next request"
                  % (self.name, self.ended))

    def _revive(self):
        """The server started again, as it was started first; what the client
        whose request it is for is told. MCPError if it cannot be."""
        self.reviving = True
        try:
            client = self.restart()
        finally:
            self.reviving = False
        self.restarts += 1
        self._serving(client)
        text = "session %s: the server had ended (%s) and was restarted (pid %s)%s" % (
            self.name, _cut(self.ended, _SHOW_CHARS), client.pid,
            "; the state it held is gone (a handshake-era server: its session began anew)"
            if self.stateful else "")
        self.ended = None
        self.note(text)
        return text

    def _take(self, peer, message):
        with self.lock:
            peer.waiting -= 1
            self._resume(peer)
        if self.stale[0]:
            self.stale = (self.stale[0] - 1, self.stale[1])
        if message is None:  # it hung up: what it asked is cancelled
            for job in list(peer.jobs.values()):
                self._drop(job)
                self.client.expire(job.request, "the client went away")
            for uri in list(peer.subscribed):  # what it watched, no longer for it
                self._unsubscribe(peer, {"uri": uri})
            return
        if peer.closed and "id" in message and isinstance(message.get("method"), str):
            return  # it went before this was sent: nobody to answer, nothing to cancel
        if message.get("session") == "stop":
            self.ending = "stopped (session stop)"
            return
        if message.get("session") == "limit" and _is_id(message.get("id")):
            seconds = message.get("seconds")
            if (isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
                    and 0 <= seconds <= _MAX_SECONDS and len(peer.limits) < 4096):
                peer.limits[message["id"]] = float(seconds)
            return
        method, params = message.get("method"), message.get("params")
        if not isinstance(method, str):
            return  # an answer: the session answers the server itself
        if peer.control and "id" in message:
            return self._to(peer, {"session": "failed", "id": message["id"], "error": _error_data(
                ConnectionLost("session %s is full: it serves %d clients at once; try again "
                               "when one has finished" % (self.name, _MAX_PEERS), method))})
        if "id" not in message:
            # The session speaks for itself to the server (initialized, its roots);
            # of a client's notifications only a cancellation means anything.
            if method == "notifications/cancelled":
                self._cancel(peer, _dict(params))
            return
        if method == "initialize" or method.startswith("notifications/"):
            # basic/lifecycle: initialized once, by the session; a notification
            # with an id is no request of the client's to pass on
            return self._to(peer, {"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32600, "message": "the session has initialized the server"
                if method == "initialize" else "%s is a notification, not a request"
                % _cut(method, _SHOW_CHARS)}})
        if method == "resources/unsubscribe" and not self._unsubscribe(peer, params):
            return self._to(peer, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
        if method == "resources/subscribe":
            self._subscribe(peer, params)
        self._begin(peer, message["id"], method, params)

    def _begin(self, peer, ident, method, params):
        if not _is_id(ident) or ident in peer.jobs:
            return self._to(peer, {"jsonrpc": "2.0", "id": ident if _is_id(ident) else None,
                                   "error": {"code": -32600, "message": "invalid request id"}})
        token = None
        meta = _dict(params).get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and "progressToken" in meta:  # the client's; ours goes
            meta = dict(meta)
            token = meta.pop("progressToken")
            params = dict(params, _meta=meta)
        job = _Job(peer, ident, token)
        on_progress = None if token is None else (lambda p: self._progress(job, p))
        # The client keeps its own time, and cancels what it stops waiting for;
        # its time limit, a little later, bounds what is answered for it here.
        seconds = peer.limits.pop(ident, None)
        seconds = float("inf") if seconds is None else seconds + _LINGER
        self.calls += 1
        for attempt in (1, 2):  # a server found gone is started again, once
            if self.client is None and not self._server_for(peer, job):
                return
            try:
                # A task goes back to the client as it came: the client waits for it.
                job.request = self.client.start(method, params, seconds, on_progress,
                                                time.monotonic() + seconds, detach=True)
                break
            except ConnectionLost as e:
                if self.restart is None or self.client is None or attempt == 2:
                    return self._failed(job, e)
                self._down(e)
            except MCPError as e:
                return self._failed(job, e)
        self.jobs[job.request.id] = peer.jobs[ident] = job

    def _server_for(self, peer, job):
        """The server started again for ``job``, its client told so; False where
        it is not: its client has gone (nothing is started for it), or it came
        while a restart failed, or this one fails (it fails with that)."""
        with self.lock:
            gone = peer.closed
        if gone:
            return False
        if self.stale[0]:
            self._failed(job, self.stale[1])
            return False
        try:
            self._to(peer, {"session": "notice", "text": self._revive()})
        except MCPError as e:  # tried again by a request that comes later
            e.message = ("the server had ended (%s) and could not be restarted: %s"
                         % (_cut(self.ended, _SHOW_CHARS), e.message))
            self.note("session %s: %s" % (self.name, e.message))
            self.stale = (len(self.inbox), e)
            self._failed(job, e)
            return False
        return True

    def _subscribe(self, peer, params):
        uri = _dict(params).get("uri")
        if isinstance(uri, str) and uri not in peer.subscribed:
            peer.subscribed.add(uri)
            self.subscribed[uri] = self.subscribed.get(uri, 0) + 1

    def _unsubscribe(self, peer, params):
        """A client's unsubscribe: True if it goes to the server, as the last
        client following the URI leaves it (2025-11-25 server/resources,
        "Subscriptions": one subscription per session, shared by its clients)."""
        uri = _dict(params).get("uri")
        if not isinstance(uri, str) or uri not in peer.subscribed:
            return True
        peer.subscribed.discard(uri)
        self.subscribed[uri] -= 1
        if self.subscribed[uri]:
            return False
        del self.subscribed[uri]
        if not self.subscribed:  # followed no more: idle from now
            self.idle_since = time.monotonic()
        return True

    def _cancel(self, peer, params):
        ident = params.get("requestId")
        job = peer.jobs.get(ident) if _is_id(ident) else None
        if job is not None and not job.request.done:
            self._drop(job)
            reason = params.get("reason")
            self.client.expire(job.request, reason if isinstance(reason, str) else "cancelled")

    def _drop(self, job):
        self.jobs.pop(job.request.id, None)
        job.peer.jobs.pop(job.ident, None)
        with self.lock:
            self._resume(job.peer)
        if not self.jobs:
            now = self.idle_since = time.monotonic()
            # What the server asks with no request in flight is answered within
            # the time limit of the last one that was, as a direct call would
            # have; past it, refused at once (a burst cannot hold the session).
            client = self.client
            client.idle_limit(min(job.request.limit,
                                  now + _time_cap(client.timeout, client.max_time)))

    def _finish(self, job):
        """A round of ``job`` is done: its answer goes to its client, or the next round."""
        self._drop(job)
        error = job.request.error
        try:
            if isinstance(error, ServerError) and error.code != _UNSUPPORTED_VERSION:
                raise error  # the server's own, as it said it
            outcome = self.client.advance(job.request)
        except ServerError as e:
            error = {"code": e.code, "message": e.message}
            if e.data is not None:
                error["data"] = e.data
            return self._to(job.peer, {"jsonrpc": "2.0", "id": job.ident, "error": error})
        except MCPError as e:
            return self._failed(job, e)
        except Exception as e:  # a handler failed: the request did, not the session
            return self._failed(job, MCPError("answering the server failed: %s" % e))
        if outcome is None:  # its next round is in flight
            self.jobs[job.request.id] = job.peer.jobs[job.ident] = job
        else:
            self._to(job.peer, {"jsonrpc": "2.0", "id": job.ident, "result": outcome})

    def _failed(self, job, error):
        self._to(job.peer, {"session": "failed", "id": job.ident, "error": _error_data(error)})

    def _progress(self, job, params):
        self._to(job.peer, {"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": dict(params, progressToken=job.token)})

    def _notice(self, method, params):
        """A notification of the server's: to the client whose subscription it
        is under that client's id, else to every client."""
        meta = _dict(params.get("_meta"))
        ident = meta.get(_SUBSCRIPTION_KEY)
        job = self.jobs.get(ident) if _is_id(ident) else None
        if job is not None:
            meta = dict(meta)
            meta[_SUBSCRIPTION_KEY] = job.ident
            return self._to(job.peer, {"jsonrpc": "2.0", "method": method,
                                       "params": dict(params, _meta=meta)})
        frame = _encode(self._public({"jsonrpc": "2.0", "method": method, "params": params}))
        with self.lock:
            peers = list(self.peers)
        for peer in peers:
            self._to(peer, frame)

    def _public(self, message):
        """``message`` with the session's secrets redacted, as a direct call's
        stderr, errors and events show them; a result is the caller's data."""
        if self.redact is None or "result" in message and "jsonrpc" in message:
            return message
        return _redacted(message, self.redact)

    def _lost(self, error):
        """The server is gone: every client is told so, with its last words."""
        frame = _encode(self._public({"session": "lost", "error": _error_data(error)}))
        with self.lock:
            peers = list(self.peers)
        for peer in peers:
            self._to(peer, frame)
        return "the server ended: %s" % error

    def _to(self, peer, message):
        try:
            frame = message if isinstance(message, bytes) else _encode(self._public(message))
        except UsageError as e:
            frame = _encode({"session": "failed", "id": message.get("id"),
                             "error": _error_data(e)})
        with self.lock:
            if peer.closed:
                return
            peer.out.append(frame)
            peer.queued += len(frame)
            if peer.queued > self.max_bytes + _PEER_SLACK:
                peer.closed = True  # it does not read: it is dropped, not waited for
        self._poke()

    def _poke(self):
        self.poke.wake()

    def status(self):
        now = time.monotonic()
        return {"session": "status", "name": self.name, "pid": os.getpid(),
                "server": self.shown, "started": self.started, "calls": self.calls,
                "restarts": self.restarts,
                "up": round(now - self.up_since, 3),
                "idle": 0 if self.jobs else round(now - self.idle_since, 3)}

    def hang_up(self):
        """The pump's last round: what is queued goes out (briefly)."""
        with self.lock:
            self.closing = True
        self._poke()
        self.thread.join(_STOP_WAIT)
        self.poke.close()

    # -- the pump thread: the sockets -----------------------------------------

    def _pump(self):
        selectors = self.selectors
        sel = (selectors.PollSelector() if hasattr(selectors, "PollSelector")
               else selectors.SelectSelector())
        sel.register(self.listener, selectors.EVENT_READ, "listener")
        sel.register(self.poke.fds[0], selectors.EVENT_READ, "poke")
        drain_until = None
        try:
            while True:
                with self.lock:
                    closing = self.closing
                    waiting = self._arrange(sel)
                if closing:
                    drain_until = drain_until or _Deadline(_LINGER)
                    if not waiting or drain_until.passed():
                        return
                for key, mask in sel.select(_QUIET_CHECK if drain_until is None
                                            else drain_until.left()):
                    if key.data == "listener":
                        self._accept(sel)
                    elif key.data == "poke":
                        self.poke.drain()
                    else:
                        if mask & selectors.EVENT_WRITE:
                            self._write(key.data)
                        if mask & selectors.EVENT_READ and not key.data.closed:
                            self._read(key.data)
        finally:  # the clients' sockets close as the process ends: a client that
            sel.close()  # sees its end (session stop) sees the session gone
            self.listener.close()

    def _arrange(self, sel):
        """Each peer watched for what it needs (under the lock); the dropped ones
        closed. Whether any still has output queued."""
        waiting = False
        for peer in list(self.peers):
            if not peer.keyed and time.monotonic() - peer.since > _SESSION_HELLO:
                peer.closed = True  # no key in time: its place is not held
            if peer.closed:
                self.peers.discard(peer)
                if sel.get_map().get(peer.sock) is not None:
                    sel.unregister(peer.sock)
                peer.sock.close()
                peer.waiting += 1
                self.inbox.append((peer, None))
                self.wake()
                continue
            # A client that sends faster than the server answers waits (is not read).
            events = ((self.selectors.EVENT_READ if self._readable(peer) else 0) |
                      (self.selectors.EVENT_WRITE if peer.out else 0))
            waiting = waiting or bool(peer.out)
            registered = sel.get_map().get(peer.sock)
            if registered is None and events:
                sel.register(peer.sock, events, peer)
            elif registered is not None and not events:
                sel.unregister(peer.sock)
            elif registered is not None and registered.events != events:
                sel.modify(peer.sock, events, peer)
        return waiting

    def _resume(self, peer):
        """After one of ``peer``'s messages is taken or answered (under the lock):
        a client held back at a bound may be read again."""
        if (peer.waiting + len(peer.jobs) == _PEER_INBOX - 1
                or len(self.inbox) + len(self.jobs) == _SESSION_BACKLOG - 1):
            self._poke()

    def _readable(self, peer):
        """Whether ``peer`` may be read (under the lock): what it has waiting or in
        flight, and what all have, are within their bounds."""
        return (peer.waiting + len(peer.jobs) < _PEER_INBOX
                and len(self.inbox) + len(self.jobs) < _SESSION_BACKLOG)

    def _accept(self, sel):
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        keyed = len([p for p in self.peers if p.keyed])
        if keyed >= _MAX_PEERS + _CONTROL_PEERS or self.closing:
            return sock.close()
        sock.setblocking(False)
        # One that must give a key first says one short line, and is not yet
        # counted among the clients; those waiting are few, the oldest let go.
        peer = _Peer(sock, _KEY_LINE if self.key is not None else self.max_bytes)
        peer.control = keyed >= _MAX_PEERS
        peer.keyed = self.key is None
        if peer.keyed:
            peer.out.append(self.hello)
        else:
            waiting = [p for p in self.peers if not p.keyed and not p.closed]
            if len(waiting) >= _UNKEYED_PEERS:
                min(waiting, key=lambda p: p.since).closed = True
        with self.lock:
            self.peers.add(peer)
        sel.register(sock, self.selectors.EVENT_READ | self.selectors.EVENT_WRITE, peer)

    def _read(self, peer):
        try:
            data = peer.sock.recv(_READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        try:
            messages = peer.framer.feed(data) if data else None
        except ProtocolError:
            messages = None  # a line over the session's --max-bytes: hung up on
        with self.lock:
            if messages is None:
                peer.closed = True
                return
            for message in messages:
                if not peer.keyed:  # the key first, or nothing (see _bind_session)
                    proof = self._keyed(message)
                    if proof is None:
                        peer.closed = True
                        return
                    peer.keyed, peer.framer.max_bytes = True, self.max_bytes
                    peer.control = len([p for p in self.peers if p.keyed]) > _MAX_PEERS
                    peer.out.append(_encode({"session": "hello", "state": self.state,
                                             "proof": proof}))
                    continue
                if not isinstance(message, dict):
                    continue
                if message.get("session") == "status":
                    frame = _encode(self.status())
                    peer.out.append(frame)
                    peer.queued += len(frame)
                else:
                    if message.get("session") == "stop" and self.reviving:
                        # The main thread is starting the server again: a stop
                        # cuts that short, as SIGTERM (session stop's own) does.
                        _stop_self()
                    peer.waiting += 1
                    self.inbox.append((peer, message))
        self.wake()

    def _keyed(self, message):
        """The session's proof for a client that proved it holds the key; else None."""
        message = _dict(message)
        nonce, mac = message.get("nonce"), message.get("mac")
        if (message.get("session") != "key" or not isinstance(nonce, str)
                or not isinstance(mac, str) or not 16 <= len(nonce) <= 64):
            return None
        if not _same_secret(mac, _session_mac(self.key, "client", nonce)):
            return None
        return _session_mac(self.key, "session", nonce)

    def _write(self, peer):
        with self.lock:
            while peer.out:
                try:
                    n = peer.sock.send(memoryview(peer.out[0])[peer.out_pos:])
                except BlockingIOError:
                    return
                except OSError:
                    peer.closed = True
                    return
                peer.out_pos += n
                if peer.out_pos < len(peer.out[0]):
                    return
                peer.queued -= len(peer.out.popleft())
                peer.out_pos = 0


# ---------------------------------------------------------------------------
# Shell: commands typed against one open server
# ---------------------------------------------------------------------------
#
# ``shell`` opens the server once (or goes through --session NAME) and reads
# commands the way the command line takes them, each run by the same code a
# command line runs, each failure its one line. On a terminal: the prompt,
# readline's editing, completion and history; elsewhere, lines from stdin.

_PROMPT = "mcp> "
# What a line may not run: they read stdin, start or end things, or need no server.
_NOT_IN_SHELL = ("shell", "batch", "session", "replay", "servers", "completion", "auth",
                 "install")
# The options a line may give (the rest are the shell's, given when it started).
_LINE_OPTIONS = ("--json", "--tools", "--count", "--no-validate", "--tool")
_HISTORY_LINES = 1000


def _cmd_shell(client, args, ctx):
    """shell: read a command a line, run it on the open client; Ctrl-C cancels the
    running request, Ctrl-D (or exit) leaves."""
    import signal as signals
    editor = _LineEditor(client, ctx) if _isatty(ctx.stdin) else None
    previous = signals.getsignal(signals.SIGINT)
    try:  # Ctrl-C interrupts one command, never the shell
        signals.signal(signals.SIGINT, signals.default_int_handler)
    except ValueError:
        previous = None  # not the main thread
    status = 0  # the shell's, at its end: its last command's, as sh has it
    try:
        while True:
            try:
                line = editor.read() if editor is not None else _read_line(ctx.stdin)
                if line is _TOO_LONG:
                    ctx.diag.error("a line is over the input limit of %d bytes" % _INPUT_LIMIT)
                    status = UsageError.exit_code
                    continue
            except _Signalled:
                raise  # SIGTERM, SIGHUP: the shell ends
            except KeyboardInterrupt:
                ctx.out.write("\n")
                continue
            except EOFError:
                line = ""
            if editor is None and not line:
                return status
            if editor is not None and line is None:
                ctx.out.write("\n")
                return status
            if line.strip() in ("exit", "quit"):
                return status
            if line.strip():
                status = _shell_line(client, args, ctx, line, editor)
    finally:
        if previous is not None:
            signals.signal(signals.SIGINT, previous)
        if editor is not None:
            editor.save()


def _shell_line(client, args, ctx, line, editor):
    """Run one line as the command line would; its failure is one line on stderr,
    and the shell goes on (but for a server that is gone)."""
    ctx.out.flush()
    try:
        line_args = _line_args(args, line)
        if line_args is None:
            return ctx.lines(_shell_help())
        if line_args.command == "call":
            line_args.arguments = _call_arguments(line_args.args[1:], ctx.stdin,
                                                  line_args.timeout)
        line_ctx = _Context(ctx.out, ctx.diag, ctx.pretty, ctx.stdin, ctx.saver,
                            line_args.json, ctx.policy)
        line_ctx.pinned, line_ctx.pin_path = ctx.pinned, ctx.pin_path
        line_ctx.tool_cache = ctx.tool_cache
        status = _run_command(client, line_args, line_ctx, ctx.elicitor)  # its failure:
        if editor is not None and line_args.command == "tools":  # said already
            editor.forget()  # listed afresh: completion follows
        return status
    except _Signalled:
        raise
    except KeyboardInterrupt:
        ctx.diag.error("interrupted")
        return _EXIT_INTERRUPTED
    except ConnectionLost:
        raise  # the server is gone: the shell ends with it
    except MCPError as e:
        ctx.diag.failed(e)
        return e.exit_code
    finally:
        ctx.out.flush()


def _line_args(args, line):
    """A line's command, parsed with the shell's own options; None for help."""
    try:
        tokens = _shell_split(line)
    except ValueError as e:
        raise UsageError("cannot read the line: %s" % e)
    if tokens[:1] in (["help"], ["?"]):
        return None
    _check_utf8(tokens)
    parser = _build_parser()
    valued = _valued(parser)
    ours, server = _split_argv(tokens, valued)
    if server or "--" in tokens:
        raise UsageError("a line takes no server (--): the shell's was given when it started")
    cut = ours.index("--")
    options, words = ours[:cut], ours[cut + 1:]
    for option in options:
        if option.startswith("-") and option.split("=")[0] not in _LINE_OPTIONS:
            raise UsageError("%s is an option of the shell, given when it starts; a line "
                             "takes %s" % (option, ", ".join(_LINE_OPTIONS)))
    if words and words[0] in _NOT_IN_SHELL:
        raise UsageError("%s is not a command of the shell (help lists those that are)"
                         % words[0])
    line_args = parser.parse_args(args.options + options + ["--"] + words)
    _check_args(line_args, parser)
    return line_args


def _shell_help():
    lines, shown = ["commands (as on the command line; help, exit; Ctrl-C cancels, Ctrl-D "
                    "leaves):"], True
    for name, command in _COMMANDS.items():
        for usage, text in command.help if name not in _NOT_IN_SHELL else ():
            shown = "--all" not in usage if usage else shown  # many servers: not here
            if shown:
                lines.append(("  %-26s %s" % (usage, text)).rstrip() if len(usage) <= 26
                             else "  " + usage)
    return lines


class _LineEditor(object):
    """readline on a terminal: the prompt, history in the state directory, and
    completion of commands, tool and prompt names, argument names and URIs
    (listed from the server once, when first completed). Without readline,
    input() with the prompt."""

    def __init__(self, client, ctx):
        self.client, self.ctx = client, ctx
        self.known = {}  # what completion listed: method -> items
        self.history = None
        try:
            import readline  # lazy: the shell on a terminal only; absent on some builds
        except ImportError:  # Windows' console edits the line and keeps its history itself
            self.readline = None
            ctx.diag.note("no completion in this shell: this Python has no readline module")
            return
        self.readline = readline
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self.complete)
        readline.parse_and_bind("bind ^I rl_complete" if "libedit" in (readline.__doc__ or "")
                                else "tab: complete")
        try:
            self.history = os.path.join(_state_dir(os.environ), "history")
            readline.set_history_length(_HISTORY_LINES)
            if os.path.exists(self.history):
                readline.read_history_file(self.history)
        except (UsageError, OSError) as e:
            self.ctx.diag.warning("no shell history: %s" % (getattr(e, "strerror", None) or e))
            self.history = None

    def read(self):
        """The next line; None at the end (Ctrl-D)."""
        try:
            return input(_PROMPT)
        except EOFError:
            return None

    def save(self):
        if self.readline is None or self.history is None:
            return
        try:
            self.readline.write_history_file(self.history)
            os.chmod(self.history, 0o600)
        except OSError as e:
            self.ctx.diag.warning("history not saved: %s" % (e.strerror or e))

    def forget(self):
        self.known.clear()

    def complete(self, text, state):
        try:
            if state == 0:  # a word whole is followed by a space, a name= by its value
                # Server text reaches the terminal as every listing shows it.
                shown = [_terminal_text(c) for c in self.candidates() if isinstance(c, str)]
                self.matches = [c if c.endswith("=") else c + " "
                                for c in shown if c.startswith(text)]
            return self.matches[state] if state < len(self.matches) else None
        except Exception:  # readline swallows what a completer raises; say nothing
            return None

    def candidates(self):
        before = self.readline.get_line_buffer()[:self.readline.get_begidx()].split()
        if not before:
            return sorted(n for n in _COMMANDS if n not in _NOT_IN_SHELL) + ["exit", "help"]
        command = before[0]
        if command in ("call", "schema") and len(before) == 1:
            return [t.get("name") for t in self.listed("tools/list", "tools")]
        if command == "call":
            tool = [t for t in self.listed("tools/list", "tools") if t.get("name") == before[1]]
            properties = _dict(_dict(tool[0].get("inputSchema")).get("properties")) if tool else {}
            return [name + "=" for name in properties]
        if command == "prompt" and len(before) == 1:
            return [p.get("name") for p in self.listed("prompts/list", "prompts")]
        if command == "prompt":
            prompt = [p for p in self.listed("prompts/list", "prompts")
                      if p.get("name") == before[1]]
            return [_dict(a).get("name", "") + "=" for a in
                    (_list(prompt[0].get("arguments")) if prompt else [])]
        if command in ("read", "watch"):
            return [r.get("uri") for r in self.listed("resources/list", "resources")]
        return []

    def listed(self, method, key):
        if method not in self.known:
            try:
                items = self.client.list_all(method)[key]
            except (MCPError, KeyboardInterrupt):
                items = []
            self.known[method] = [item for item in items if isinstance(item, dict)
                                  and isinstance(item.get(key == "resources" and "uri"
                                                          or "name"), str)]
        return self.known[method]


# ---------------------------------------------------------------------------
# Agents: search, skill, the launcher
# ---------------------------------------------------------------------------

# search ranks with BM25 (k1, b as usual), each field of a tool weighted: a
# word in its name says most about what it does (CLI.md "Agents").
_BM25_K1, _BM25_B = 1.2, 0.75
_SEARCH_FIELDS = (("name", 3.0), ("title", 2.0), ("arguments", 1.5), ("description", 1.0))
_SEARCH_COUNT = 10
# What search reads of one tool: the first characters of each field, the first
# argument names. A description longer than a few pages says no more about what
# a tool does, and a hostile one of megabytes would hold every search up.
_SEARCH_FIELD_CHARS = 16384
_SEARCH_ARGUMENTS = 256


def _words(text):
    """The words of ``text`` (its first _SEARCH_FIELD_CHARS characters),
    lowercase: split at anything but letters and digits (``_``, ``-``, ``.``,
    ``/``, spaces) and where a lowercase letter meets an uppercase one
    (getUser: get, user)."""
    if not isinstance(text, str):
        return []
    text = text[:_SEARCH_FIELD_CHARS]
    return re.findall(r"[^\W_]+", re.sub(r"([a-z])(?=[A-Z])", r"\1 ", text).lower())


def _stem(word):
    """A word without its plural ending, for search: directories and
    directory, issues and issue, match alike."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _search_fields(tool):
    """A tool's words (stems) by field, for search."""
    schema = _dict(tool.get("inputSchema"))
    keys = itertools.islice(_dict(schema.get("properties")), _SEARCH_ARGUMENTS)
    fields = {"name": _words(tool.get("name")), "title": _words(tool.get("title")),
              "description": _words(tool.get("description")),
              "arguments": [word for key in keys for word in _words(key)]}
    return dict((name, [_stem(word) for word in words]) for name, words in fields.items())


def _ranked(tools, query, deadline=None):
    """[(score, number of query words matched, tool)] for each tool matching a
    word of ``query``, best first: those matching every word, by score, then
    the rest by score (and by how many they match). A query word matches a
    word of the tool that it begins (search: "issue" finds create_issues).
    RequestTimeout once ``deadline`` (a _Deadline, if given) passes."""
    fields, hits = [], []
    for tool in tools:
        if deadline is not None and deadline.passed():
            raise RequestTimeout("search: %s, ranking %d tools" % (deadline.why, len(tools)),
                                 "search")
        fields.append(_search_fields(tool))
        hits.append([[sum(1 for word in fields[-1][name] if word.startswith(q))
                      for name, _ in _SEARCH_FIELDS] for q in query])
    if not tools:
        return []
    average = dict((name, max(1.0, sum(len(f[name]) for f in fields) / float(len(fields))))
                   for name, _ in _SEARCH_FIELDS)
    found = [sum(1 for counts in tool_hits if any(counts)) for tool_hits in hits]
    import math  # lazy: only for search
    having = [sum(1 for tool_hits in hits if any(tool_hits[j])) for j in range(len(query))]
    idf = [math.log(1 + (len(tools) - n + 0.5) / (n + 0.5)) for n in having]
    ranked = []
    for i, tool in enumerate(tools):
        if not found[i]:
            continue
        score = 0.0
        for j in range(len(query)):
            for (name, weight), tf in zip(_SEARCH_FIELDS, hits[i][j]):
                if tf:
                    norm = 1 - _BM25_B + _BM25_B * len(fields[i][name]) / average[name]
                    score += idf[j] * weight * tf * (_BM25_K1 + 1) / (tf + _BM25_K1 * norm)
        ranked.append((found[i] == len(query), score, found[i], -i, tool))
    ranked.sort(key=lambda entry: entry[:4], reverse=True)
    return [(score, count, tool) for _, score, count, _, tool in ranked]


_SEARCH_WORDS = 32


def _search_deadline(args):
    """The whole search's, from the run's start (its servers' start and
    listing within it): --max-time, or as long as one request may take."""
    limit = args.max_time or _time_cap(args.timeout, None)
    spent = time.monotonic() - getattr(args, "started", time.monotonic())
    return _Deadline(max(0.0, limit - spent), "it took longer than its time limit of %gs "
                     "(--max-time)" % limit)


def _search_query(args):
    query = []
    for word in (_stem(word) for text in args.args for word in _words(text)):
        if word not in query:
            query.append(word)
    if len(query) > _SEARCH_WORDS:
        raise UsageError("search takes at most %d words, not %d" % (_SEARCH_WORDS, len(query)))
    if not query:
        raise UsageError("search takes words to look for (letters or digits), not %s"
                         % " ".join(repr(text) for text in args.args))
    return query


def _searched(args, ctx, tools, servers, namespaced, own=None, skills=()):
    """search's output: ``tools`` [(server name or None, tool)] ranked, the
    best --count of them, as tools prints them; exit 3 if none matches.
    ``namespaced``: their names are server__tool. ``skills`` [(server name or
    None, skill entry)] are ranked among them by name and description, and
    shown as skill:NAME (skill:server__NAME)."""
    query = _search_query(args)
    own = dict(own or {})
    for server, skill in skills:
        front = _dict(_dict(skill).get("frontmatter"))
        shown = {"name": "skill:%s%s" % (server + _SEPARATOR if namespaced else "",
                                         _shown_word(front.get("name", ""))),
                 "description": front.get("description"), "uri": _dict(skill).get("uri")}
        own[id(shown)] = shown["name"]
        tools = list(tools) + [(server, shown)]
    ranked = _ranked([tool for _, tool in tools], query, args.deadline)  # stems, as fields
    if not ranked:
        raise ServerError("no tool matches %r among %d tool%s of %d server%s" % (
            " ".join(args.args), len(tools), "" if len(tools) == 1 else "s", servers,
            "" if servers == 1 else "s"))
    server_of = dict((id(tool), server) for server, tool in tools)
    ctx.hidden_items("tool", "name", [tool for _, _, tool in ranked[:args.count or
                                                                   _SEARCH_COUNT]])
    shown, entries = [], []
    for score, _, tool in ranked[:args.count or _SEARCH_COUNT]:
        server = server_of[id(tool)]
        name = tool.get("name")
        if namespaced or id(tool) in own:  # shown as server__tool; its own name
            name = own[id(tool)]
        entry = collections.OrderedDict([("server", server), ("name", name),
                                         ("score", round(score, 3))])
        entry.update((key, value) for key, value in tool.items() if key != "name")
        entries.append(entry)
        shown.append(tool)
    return ctx.mode.listing({"tools": entries}, shown, lambda tool: (
        "%s - %s" % (_shown_word(tool["name"]), _first_line(tool["description"]))
        if "uri" in tool and _shown_word(tool["name"]).startswith("skill:")
        else _signature(tool)))


def _cmd_search(client, args, ctx):
    """search WORD... on one server: its tools (from the tool-list cache, as
    call finds them, when it holds them)."""
    _search_query(args)  # a query of no words: exit 2 before the listing
    args.deadline = _search_deadline(args)
    cache = ctx.tool_cache if ctx.pinned is None and not ctx.policy.active else None
    tools = cache.tools(client) if cache is not None else None
    if tools is None:
        result = ctx.listing(client, "tools/list")
        tools = [_dict(tool) for tool in result["tools"]]
        if cache is not None:
            cache.keep(client, result)
    tools = [tool for tool in tools if ctx.policy.shows(tool)]
    skills = []
    if _is_declared(_capability(client.capabilities, ("extensions", _SKILLS_EXTENSION))):
        try:
            skills = [(args.server, skill) for skill in client.list_skills()]
        except MCPError as e:  # the tools are still searched
            ctx.diag.warning("the server's skills are not searched: %s" % e)
    return _searched(args, ctx, [(args.server, tool) for tool in tools], 1, False,
                     skills=skills)


def _cmd_search_many(args, ctx, server):
    """search WORD... across the configured servers (or --server A,B): listed
    as tools --all lists them, from the tool-list cache where it holds them."""
    _search_query(args)
    args.deadline = _search_deadline(args)
    names, found = _chosen_servers(args, ctx, "search")
    own = {}  # id of each tool as shown -> its own name
    tools = _tools_of(args, ctx, found, names, cached=True, own=own, hidden=False)
    return _searched(args, ctx, tools, len(names), True, own)


# -- skill ------------------------------------------------------------------

# The Agent Skills format: front matter of name and description (limits of
# the format), then Markdown. Sizes are estimated in tokens as characters / 4.
_SKILL_NAME_CHARS = 64
_SKILL_DESCRIPTION_CHARS = 1024
_CHARS_PER_TOKEN = 4
_SKILL_HASH = "tools-sha256: "


def _skill_name(name):
    """A server's name as a skill's: lowercase letters, digits and hyphens."""
    name = re.sub(r"[^a-z0-9]+", "-", _shown_word(name or "").lower()).strip("-")
    return name[:_SKILL_NAME_CHARS].rstrip("-") or "mcp-server"


def _skill_line(text):
    """Server text for a skill: one line, terminal-safe, hidden characters as <U+XXXX>."""
    text = " ".join(_shown_word(text or "").split())
    return _terminal_text(text)


def _tools_hash(tools):
    """The pin hash of a tool list: one SHA-256 over each tool's (CLI.md "Agents")."""
    entries = _pin_entries(_PINNED[0], tools)
    return _digest(dict((name, entry["sha256"]) for name, entry in entries.items()))


def _fence(lines):
    """A Markdown code fence no line of ``lines`` can close."""
    longest = max([len(run) for line in lines for run in re.findall("`+", line)] + [0])
    return "`" * max(3, longest + 1)


def _launcher_name(warn):
    """The name of a launcher `install` put on PATH for this file, if there is one."""
    for path in _launchers(os.environ, warn):
        name = os.path.basename(path)
        for command in (os.path.splitext(name)[0], name):  # Windows: mcp-invoke.cmd too
            found = _which(command)
            if found is not None and os.path.normcase(found) == os.path.normcase(path) and (
                    _launcher_source(path) == _SOURCE):
                return command
    return None


# The options a skill's command carries, as given (none holds a secret: a
# variable's name at most); and those it leaves out, which may hold one.
_SKILL_CARRIES = (("--inherit-env", "inherit_env"), ("--insecure", "insecure"),
                  ("--bearer-env", "bearer_env"), ("--cacert", "cacert"),
                  ("--protocol-version", "protocol_version"),
                  ("--oauth-client-id", "oauth_client_id"),
                  ("--oauth-client-secret-env", "oauth_client_secret_env"),
                  ("--oauth-client-metadata-url", "oauth_client_metadata_url"),
                  ("--oauth-grant", "oauth_grant"), ("--oauth-scope", "oauth_scope"),
                  ("--oauth-private-key-file", "oauth_private_key_file"),
                  ("--oauth-signing-alg", "oauth_signing_alg"),
                  ("--oauth-idp-token-endpoint", "oauth_idp_token_endpoint"),
                  ("--oauth-idp-client-id", "oauth_idp_client_id"),
                  ("--oauth-idp-id-token-env", "oauth_idp_id_token_env"))
_SKILL_LEAVES_OUT = (("--header", "header"), ("--oauth-client-secret", "oauth_client_secret"),
                     ("--oauth-idp-id-token", "oauth_idp_id_token"))


def _skill_command(args, server, entry, diag):
    """The command line that reaches the server, as the skill names it: the
    words before a command's, and those after them (a server's argv); from
    any directory. Options that may hold a secret are left out, with a
    warning; a word that cannot be shown on one line is refused."""
    launcher = _launcher_name(diag.warning)
    words = [launcher] if launcher else [_PYTHON_WORD, _SOURCE]
    after = []
    if args.session is not None:
        words += ["--session", args.session]
    elif server:  # relative paths in it, as they are here
        words += ["--cwd", os.path.abspath(args.cwd or _cwd())]
        after = ["--"] + list(server)
    elif entry is not None and entry.get("file") is not None:  # where it was found
        words += ["--config", os.path.abspath(entry["file"]), "--server", entry["name"]]
        if args.cwd or entry.get("cwd") is None:  # its relative paths, as they are here
            words += ["--cwd", os.path.abspath(args.cwd or _cwd())]
    elif args.url is not None:
        words += ["--url", args.url]
    left_out = []
    if args.session is None:
        for flag, name in _SKILL_CARRIES:
            value = getattr(args, name, None)
            if value:
                words += [flag] if value is True else [flag, value]
        for value in args.env:
            if "=" in value:
                left_out.append("--env %s=..." % value.split("=", 1)[0])
            else:
                words += ["--env", value]
        left_out += [flag for flag, name in _SKILL_LEAVES_OUT if getattr(args, name, None)]
    if left_out:
        diag.warning("the skill's command leaves out %s, which may hold a secret: the agent "
                     "needs it too (a config file's server, written with skill --server NAME, "
                     "carries it)" % ", ".join(left_out))
    for word in words + after:
        if re.search(u"[\x00-\x1f\x7f-\x9f\u2028\u2029]", word) or (
                _terminal_text(word) != word):
            raise UsageError("skill: the command that reaches the server holds %s, which a "
                             "skill cannot show as one line" % _show(word))
    return words, after


def _skill(ctx, name, info, instructions, tools, command):
    """A skill's text (name, and the pieces of the command line: before and
    after a command's own words) and the size of the tool definitions it
    stands for, in characters."""
    skill = _skill_name(name)
    shown = [tool for tool in map(_dict, tools) if ctx.policy.shows(tool)]
    lines = [_skill_line(_signature(tool)) for tool in shown]
    before, after = (" ".join(_shell_word(word) for word in part) for part in command)
    after = " " + after if after else ""
    about = _skill_line(instructions).split(". ")[0] if instructions else ""
    names = [_skill_line(tool.get("name")) for tool in shown]
    description = "Call the tools of the MCP server %s from the shell%s. " % (
        _skill_line(name or info.get("name")), ": " + about.rstrip(".") if about else "")
    description += "Use this skill to find, read and call them"
    listed = ""
    for i, tool_name in enumerate(names):
        more = " (%d more)" % (len(names) - i - 1) if i < len(names) - 1 else ""
        candidate = listed + (", " if listed else "; its tools: ") + tool_name
        if len(description) + len(candidate) + len(more) + 1 > _SKILL_DESCRIPTION_CHARS:
            listed += " and %d more" % (len(names) - i)
            break
        listed = candidate
    description = (description + listed + ".")[:_SKILL_DESCRIPTION_CHARS]
    example = next((tool for tool in shown if re.match(r"[A-Za-z0-9_.-]+\Z",
                                                       _shown_word(tool.get("name")))), None)
    call = "%s %s" % (before, _call_words(example.get("name")) if example else "call TOOL")
    if example is not None:
        schema = _dict(example.get("inputSchema"))
        required = [key for key in _list(schema.get("required")) if isinstance(key, str)
                    and re.match(r"[A-Za-z0-9_]+\Z", key)]
        call += "".join(" %s=..." % key for key in required)
    fence = _fence(lines)
    text = "\n".join([
        "---",
        "name: " + json.dumps(skill),
        "description: " + json.dumps(description, ensure_ascii=False),
        "---",
        "",
        "# %s" % skill,
        "",
        "The MCP server %s, from the shell. Each command below starts the server (or"
        % json.dumps(skill),
        "reaches it), does one thing, and stops it; the server is:",
        "",
        "    %s ...%s" % (before, after),
        "",
        "## Its tools",
        "",
        "One line each: the name, the arguments (`?`: optional) and their types, the",
        "hints the server declared, the first line of the description.",
        "",
        fence + "text",
    ] + lines + [
        fence,
        "",
        "## Find a tool, read its schema",
        "",
        "    %s search WORD...%s" % (before, after),
        "    %s schema TOOL%s" % (before, after),
        "",
        "`schema` prints the tool's line, then its input schema and its output schema",
        "as JSON: what the arguments must be, and what the result holds.",
        "",
        "## Call a tool",
        "",
        "    %s%s" % (call, after),
        "    %s call TOOL '{\"key\": \"value\", \"count\": 2}'%s" % (before, after),
        "",
    ] + ([
        "A tool whose name begins with `-` is named with `--tool=`: `call --tool=-x ARGS...`.",
        "",
    ] if any(_shown_word(tool.get("name")).startswith("-") for tool in shown) else []) + [
        "`key=value` is typed by the tool's schema (a number, a boolean, a list as",
        "JSON); `key:=JSON` is sent as the JSON it is; a JSON object (or `@file.json`,",
        "or `-` for stdin) gives all the arguments at once. The result's text is",
        "printed; add `--max-output 4000` to print at most that many characters (the",
        "rest goes to a file the last line names), or `--json` for the whole result.",
        "",
        "## Exit codes",
        "",
        "- 0: done; 1: the tool ran and returned an error (its text is printed).",
        "- 2: bad arguments or options; the message says what, and for a call ends",
        "  with how the tool is called. Fix the call and run it again.",
        "- 3: the server answered with an error: an unknown tool (near names are",
        "  suggested), or arguments it would not take.",
        "- 4: the server broke the protocol; 5: the connection was lost; 6: not",
        "  authorized; 124: timed out; 126 or 127: the server could not be started.",
        "- 7: refused by the trust policy, or the tools changed since this skill was",
        "  written: write it again (`skill`).",
        "",
        _SKILL_HASH + _tools_hash(tools),
        ""])
    definitions = len(_json_text(json.dumps(tools, ensure_ascii=False)))
    return skill, text, definitions


def _skill_files(directory):
    """The skills in ``directory``: its SKILL.md, or each of its directories'."""
    own = os.path.join(directory, _SKILL_FILE)
    if os.path.isfile(own):
        return [own]
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        raise UsageError("skill --check %s: %s" % (directory, e.strerror or e))
    found = [os.path.join(directory, name, _SKILL_FILE) for name in names
             if os.path.isfile(os.path.join(directory, name, _SKILL_FILE))]
    if not found:
        raise UsageError("skill --check %s: no %s in it or in its directories"
                         % (directory, _SKILL_FILE))
    return found


def _skill_facts(path):
    """(name, tools-sha256) of a skill file; UsageError if it has none."""
    # CR LF too: a skill checked out on Windows (git's autocrlf) is the same skill.
    text = _read_file(path, "skill " + path, wait=2.0).replace("\r\n", "\n")
    found = re.match(r"---\nname: (\"[a-z0-9-]*\")\n", text)
    digest = [line[len(_SKILL_HASH):] for line in text.splitlines()
              if line.startswith(_SKILL_HASH)]
    if not found or len(digest) != 1 or not re.match(r"[0-9a-f]{64}\Z", digest[0]):
        raise UsageError("%s is not a skill mcp_invoke wrote (no name, or no single %sline)"
                         % (path, _SKILL_HASH))
    return json.loads(found.group(1)), digest[0]


def _skill_outcome(args, ctx, client, name, command):
    # name: the configured server's, or None (the server's own, from initialize)
    """One server's skill: written (--out), printed, or checked (--check);
    (lines for stdout, an MCPError for a stale skill or None)."""
    tools = client.list_tools()
    skill, text, definitions = _skill(ctx, name or client.server_info.get("name"),
                                      client.server_info, client.instructions, tools, command)
    if args.skill_check is not None:
        files = _skill_files(args.skill_check)
        facts = [(path, _skill_facts(path)) for path in files]
        mine = [(path, digest) for path, (named, digest) in facts if named == skill]
        if not mine and len(files) == 1 and name is None:
            mine = [(files[0], facts[0][1][1])]
        if not mine:
            raise UsageError("skill --check %s: no skill of server %s in it (%s)" % (
                args.skill_check, skill, ", ".join(named for _, (named, _) in facts)))
        path, digest = mine[0]
        now = _tools_hash(tools)
        if digest != now:
            return [], _Refused("pin mismatch: the tools changed since %s was written (its "
                                "tools-sha256 %s, the server's now %s); write it again with "
                                "skill" % (path, digest[:12], now[:12]))
        return ["skill up to date: %s (its %d tools unchanged)" % (path, len(tools))], None
    ctx.diag.note("skill %s: %d characters, about %d tokens, for %d tools whose definitions "
                  "are %d characters, about %d tokens (a token taken as %d characters)" % (
                      skill, len(text), len(text) // _CHARS_PER_TOKEN, len(tools),
                      definitions, definitions // _CHARS_PER_TOKEN, _CHARS_PER_TOKEN))
    if ctx.diag.redact is not None:  # a secret the server echoes: kept out, as from a pin
        text = ctx.diag.redact(text)
    if args.skill_out is None:
        ctx.out.write(text)
        return [], None
    path = os.path.join(args.skill_out, skill, _SKILL_FILE)
    real = os.path.join(os.path.realpath(args.skill_out), skill, _SKILL_FILE)
    try:
        _private_dir(os.path.dirname(real), narrow=False)
        _write_whole(real, text, private=False)
    except (IOError, OSError) as e:
        raise UsageError("skill: cannot write %s: %s" % (path, e.strerror or e))
    return [path], None


def _cmd_skill(client, args, ctx):
    """skill: a skill that teaches an agent to use this server through this
    file (--out DIR: written to DIR/NAME/SKILL.md; --check DIR: compared)."""
    entry = getattr(args, "entry", None)
    name = entry.get("name") if entry is not None else None
    command = _skill_command(args, getattr(args, "server_argv", None), entry, ctx.diag)
    lines, stale = _skill_outcome(args, ctx, client, name, command)
    if stale is not None:
        raise stale
    return ctx.lines(lines) if lines else 0


def _checked_servers(args, ctx):
    """skill --check DIR with no server named: the configured servers that
    DIR has skills of (by the skill's name), and what _found_servers found."""
    found = _found_servers(_cwd(), os.environ, ctx.diag.warning, args.config)
    by_skill = dict((_skill_name(name), name) for name in _server_names(found))
    names = []
    for path in _skill_files(args.skill_check):
        skill = _skill_facts(path)[0]
        if skill in by_skill:
            names.append(by_skill[skill])
        else:
            ctx.diag.warning("%s is the skill of %s, which no config file names; check it "
                             "with the server's options" % (path, skill))
    if not names:
        raise UsageError("skill --check %s: none of its skills is of a configured server; "
                         "give the server's options (-- COMMAND, --url, --server NAME)"
                         % args.skill_check)
    return names, found


def _cmd_skill_many(args, ctx, server):
    """skill --all / --server A,B: each server's, at once, to --out DIR (or checked)."""
    if server or args.url or args.session:
        raise UsageError("skill %s is for configured servers; it takes no %s" % (
            "--all" if args.all_servers else "--server A,B",
            "--" if server else "--url" if args.url else "--session"))
    if args.skill_out is None and args.skill_check is None:
        raise UsageError("skills of several servers are written to DIR/NAME/SKILL.md: give "
                         "--out DIR (or --check DIR)")
    if args.skill_check is not None and not args.all_servers and args.server is None:
        names, found = _checked_servers(args, ctx)
    else:
        names, found = _chosen_servers(args, ctx, "write skills for")
    skills = [_skill_name(name) for name in names]
    for i, skill in enumerate(skills):  # one directory each: never two writers in one
        if skill in skills[:i]:
            raise UsageError("servers %r and %r both make the skill %s; write them one at a "
                             "time (skill --server NAME --out DIR)"
                             % (names[skills.index(skill)], names[i], skill))
    entries = _clients_of(args, ctx, found, names)
    commands = [_skill_command(args, None, entry, ctx.diag) if entry is not None else None
                for _, entry in entries]

    def one(i, client):
        with client:
            return _skill_outcome(args, ctx, client, names[i], commands[i])
    outcomes = _at_once([client for client, _ in entries], one)
    lines, failed = [], []
    for name, outcome in zip(names, outcomes):
        if isinstance(outcome, MCPError):
            failed.append(outcome)
            ctx.diag.warning("server %r: %s" % (name, outcome))
            continue
        lines += outcome[0]
        if outcome[1] is not None:
            failed.append(outcome[1])
            ctx.diag.error(str(outcome[1]))
    ctx.lines(lines)
    return max([e.exit_code for e in failed] or [0])


# -- install: the launcher ---------------------------------------------------

_SOURCE = os.path.abspath(__file__) if "__file__" in globals() else None
_LAUNCHER_MARK = "# Written by `mcp_invoke.py install`"
_LAUNCHER = '''#!%(python)s -ES
%(mark)s, which writes over it: mcp_invoke from its cached
# bytecode. Run install again after moving the file it runs:
source = %(source)s
import marshal, os, sys
try:
    stat = os.stat(source)
except OSError as e:
    name = os.path.basename(sys.argv[0])  # on Windows, NAME.launcher.py beside NAME.cmd
    name = name[:-len(".launcher.py")] if name.endswith(".launcher.py") else name
    os.write(2, ("%%s: cannot run %%s: %%s; run mcp_invoke.py install again from where it is "
                 "now\\n" %% (name, source, e.strerror)).encode("utf-8", "backslashreplace"))
    sys.exit(127)
stamp = ("%%s %%d %%d %%d %%d\\n" %% (sys.version, stat.st_ino, stat.st_size, stat.st_mtime_ns,
                                  stat.st_ctime_ns)).encode()
caches = %(caches)r
def mine(path, kind=0o100000):  # trusted only if no one else could have written it
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return ((os.name == "nt" or info.st_uid == os.getuid() and not info.st_mode & 0o022)
            and info.st_mode & 0o170000 == kind)
code = None
for cache in caches:
    try:
        if not (mine(os.path.dirname(cache), 0o040000) and mine(cache)):
            continue
        with open(cache, "rb") as f:
            data = f.read()
        if data.startswith(stamp):
            code = marshal.loads(data[len(stamp):])
            if type(code) is type(compile("", "", "exec")):
                break
            code = None
    except (OSError, ValueError, EOFError, TypeError):
        pass
if code is None:
    with open(source, "rb") as f:
        code = compile(f.read(), source, "exec", dont_inherit=True)
    for cache in caches:
        try:
            os.makedirs(os.path.dirname(cache), 0o700, exist_ok=True)
            if not mine(os.path.dirname(cache), 0o040000):
                continue
            new = "%%s.%%d.new" %% (cache, os.getpid())
            fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_BINARY", 0), 0o600)
            with open(fd, "wb") as f:
                f.write(stamp + marshal.dumps(code))
            os.replace(new, cache)
            break
        except OSError:
            pass
sys.argv[0] = source
main = type(sys)("__main__")
main.__file__, main.__builtins__ = source, __builtins__
sys.modules["__main__"] = main
exec(code, main.__dict__)
'''


def _launchers(environ, warn=None):
    """The launchers `install` wrote, as it recorded them."""
    try:
        paths = _json_loads((_read_kept(os.path.join(_state_home(environ), "launchers.json"),
                                        warn) or b"[]").decode("utf-8"))
    except ValueError:
        return []
    return [path for path in _list(paths) if isinstance(path, str)]


def _written_by_install(path):
    """Whether the file ``path`` is one install wrote: its second line is the mark."""
    lines = (_read_kept(path, owned=False) or b"")[:512].split(b"\n")
    mark = _LAUNCHER_MARK.encode("ascii") + b","
    return len(lines) > 1 and (lines[1].startswith(mark) or lines[1].startswith(b"rem " + mark))


def _launcher_source(path):
    """The file a launcher of ours runs, or None for any other file."""
    runner = _runner_of(path)
    head = (_read_kept(runner, owned=False) or b"")[:8192].decode(
        "utf-8", "replace").splitlines() if runner is not None else []
    if len(head) < 4 or not head[1].startswith(_LAUNCHER_MARK + ",") or not (
            head[3].startswith("source = ")):
        return None
    try:
        source = json.loads(head[3][len("source = "):])
    except ValueError:
        return None
    return source if isinstance(source, str) else None


# The launcher as each system runs it. POSIX: one file, the runner itself,
# found on PATH and started by its #! line. Windows: NAME.cmd, which cmd.exe
# and PowerShell find on PATH with PATHEXT, and the runner beside it as
# NAME.launcher.py; a .cmd is read in the OEM code page, so it names the
# runner through %~dp0 (its own directory, whatever the characters in it)
# and this Python in that code page, or by its short (8.3) name.
if _WINDOWS:
    _PATH_HINT = "add it to your user PATH (Settings, \"Edit environment variables\")"
    _CMD_LAUNCHER = ("@echo off\r\nrem %(mark)s, which writes over it: runs "
                     "%(runner)s beside it.\r\n\"%(python)s\" -ES \"%%~dp0%(runner)s\" %%*\r\n")

    def _bin_home(environ):
        local = environ.get("LOCALAPPDATA")
        return os.path.join(local if local and os.path.isabs(local) else
                            os.path.join(_home(environ), "AppData", "Local"),
                            "Programs", "mcp-invoke")

    def _launcher_files(directory, name, runner_text):
        """[(path, bytes, mode)]: what install writes, the launcher last."""
        import ctypes  # lazy: install on Windows only
        runner = name + ".launcher.py"
        python = sys.executable
        codepage = "cp%d" % ctypes.windll.kernel32.GetOEMCP()
        try:
            python.encode(codepage)
        except (UnicodeError, LookupError):
            short = ctypes.create_unicode_buffer(32768)
            if ctypes.windll.kernel32.GetShortPathNameW(python, short, 32768):
                python = short.value
        text = _CMD_LAUNCHER % dict(mark=_LAUNCHER_MARK, runner=runner,
                                    python=python.replace("%", "%%"))
        try:
            data = text.encode(codepage)
        except (UnicodeError, LookupError):
            raise UsageError("install: the path of this Python, %r, cannot be written in the "
                             "console's code page (%s), and it has no short name"
                             % (sys.executable, codepage))
        return [(os.path.join(directory, runner), runner_text.encode("utf-8"), None),
                (os.path.join(directory, name + ".cmd"), data, None)]

    def _launcher_path(directory, name):
        return os.path.join(directory, name + ".cmd")

    def _runner_of(path):
        """The runner of the launcher ``path``: beside it, where ``path`` is a
        .cmd of ours; else None."""
        base, extension = os.path.splitext(path)
        head = (_read_kept(path, owned=False) or b"")[:512].split(b"\n")
        if extension.lower() != ".cmd" or len(head) < 2 or not head[1].startswith(
                b"rem " + _LAUNCHER_MARK.encode("ascii") + b","):
            return None
        return base + ".launcher.py"
else:
    _PATH_HINT = "add it (export PATH=\"%(directory)s:$PATH\")"

    def _bin_home(environ):
        return os.path.join(_home(environ), ".local", "bin")

    def _launcher_files(directory, name, runner_text):
        if re.search(r"\s", sys.executable):  # a #! line ends at the first blank
            raise UsageError("install: the path of this Python, %r, has a blank in it, which "
                             "a launcher's first line cannot hold" % sys.executable)
        return [(os.path.join(directory, name), runner_text.encode("utf-8"), 0o755)]

    def _launcher_path(directory, name):
        return os.path.join(directory, name)

    def _runner_of(path):
        return path


def _cmd_install(args, ctx):
    """install [--bin DIR] [--name NAME]: a launcher that runs this file from
    cached bytecode (CLI.md "Agents", "Windows")."""
    if args.bin is not None and not args.bin.strip():
        raise UsageError("install --bin %r: a directory, not blanks (leave --bin out for %s)"
                         % (args.bin, _bin_home(os.environ)))
    directory = os.path.abspath(args.bin or _bin_home(os.environ))
    name = "mcp-invoke" if args.name is None else args.name
    if not re.match(r"[A-Za-z0-9._+-]+\Z", name) or name in (".", ".."):
        raise UsageError("install --name %r: a file name of letters, digits, '.', '_', '+' "
                         "and '-'" % name)
    if _SOURCE is None or not sys.executable:
        raise UsageError("install needs this file and its Python by path (%s)" % (
            "no __file__" if _SOURCE is None else "sys.executable is empty"))
    path = _launcher_path(directory, name)
    tag = sys.implementation.cache_tag or "python"
    cached = os.path.join(_cache_home(os.environ), "launcher-%s.%s.bin" % (
        _digest(_SOURCE)[:16], tag))
    # Beside the file first, where its user alone may write there (on Windows,
    # where that cannot be told, the user's own cache only).
    caches = (cached,) if _WINDOWS else (os.path.join(
        os.path.dirname(_SOURCE), "__pycache__", "mcp_invoke.launcher.%s.bin" % tag), cached)
    text = _LAUNCHER % dict(python=sys.executable, mark=_LAUNCHER_MARK,
                            source=json.dumps(_SOURCE), caches=caches)
    files = _launcher_files(directory, name, text)
    for file_path, _, _ in files:
        if os.path.lexists(file_path) and not _written_by_install(file_path):
            raise UsageError("install: %s exists and is not a launcher install wrote; it is "
                             "left alone (remove it, or give --name or --bin)" % file_path)
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory)
        for file_path, data, mode in files:
            _write_whole(_named(file_path), data, private=False, mode=mode)
    except (IOError, OSError) as e:
        raise UsageError("install: cannot write %s: %s" % (path, e.strerror or e))
    launchers = [p for p in _launchers(os.environ, ctx.diag.warning)
                 if p != path and os.path.exists(p)]
    try:
        _write_whole(os.path.join(_state_home(os.environ), "launchers.json"),
                     json.dumps(launchers + [path]))
    except (IOError, OSError):
        pass  # skill then names this file itself
    on_path = os.path.normcase(directory) in [
        os.path.normcase(os.path.abspath(p))
        for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    if not on_path:
        ctx.diag.note("%s is not on PATH: %s, or give --bin a directory that is"
                      % (directory, _PATH_HINT % dict(directory=directory)))
    return ctx.mode.answer({"path": path, "on_path": on_path}, [path])


# ---------------------------------------------------------------------------
# Skills a server publishes: skills, skills get (CLI.md "Skills a server publishes")
# ---------------------------------------------------------------------------

# Words of a server command that name how it runs, not what: the server's
# name is the first word after them (python3 -m pkg, uvx pkg, npx -y pkg).
_RUNNERS = frozenset(["python", "python3", "py", "node", "deno", "bun", "bunx", "npx", "uvx",
                      "uv", "pipx", "run", "exec", "sh", "bash", "cmd", "docker", "pnpm",
                      "yarn", "dlx", "tool", "x", "-m"])


def _server_label(args):
    """The name this client gives the server (never the one it gives itself,
    skills.md "Security Considerations"): the config's or the session's name,
    else one made from the URL's host or the command's first telling word."""
    if args.entry is not None and args.entry.get("name"):
        return args.entry["name"]
    if args.session:
        return args.session
    if args.url:
        from urllib.parse import urlsplit  # lazy: only a skill's origin needs it
        word, whole = urlsplit(args.url).hostname or "server", [args.url]
    else:
        here = os.path.abspath(args.cwd or _cwd())
        whole = [os.path.join(here, w) if not os.path.isabs(w) and os.path.exists(
            os.path.join(here, w)) else w for w in args.server_argv or ()]  # a file: which one
        words = [os.path.basename(w.replace("\\", "/")) for w in whole]
        named = [w for w in words if w.lower().split(".")[0].rstrip("0123456789.")
                 not in _RUNNERS and not w.startswith("-")]
        word = os.path.splitext((named or words or ["server"])[0])[0]
    # and a hash of the whole URL or command line: two servers that one word
    # would name alike (npx @a/foo, npx @b/foo) keep their skills apart
    digest = _sha256()("\0".join(whole).encode("utf-8", "surrogateescape")).hexdigest()
    word = re.sub(r"[^A-Za-z0-9_.-]+", "-", word.split("@")[0]).strip("-.")[:40] or "server"
    return "%s-%s" % (word, digest[:8])


def _size_text(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return "%.1f %s" % (size / float(scale), unit)
    return "%d B" % size


def _skill_lines(skill, prefix=""):
    """A skill in a listing: NAME  DESCRIPTION  [N files, SIZE], then its URI."""
    if not isinstance(skill, dict):
        return ["%s[not an object: %s]" % (prefix, _show(skill))]
    front, files = _dict(skill.get("frontmatter")), skill.get("resources")
    if isinstance(files, list):
        sizes = [f.get("size") for f in files if isinstance(f, dict)]
        total = sum(n for n in sizes if isinstance(n, int) and not isinstance(n, bool))
        facts = "[%d files, %s]" % (len(files), _size_text(total))
    else:
        facts = "[dynamic]" if files == "dynamic" else "[no file list]"
    asks = front.get("allowed-tools")
    if asks:
        facts += "  [asks for tools: %s]" % (" ".join(map(_shown_word, asks))
                                            if isinstance(asks, list) else _shown_word(asks))
    return ["%s%s  %s  %s" % (prefix, _shown_word(front.get("name", "")),
                              _first_line(front.get("description")), facts),
            "    " + _shown_word(skill.get("uri", ""))]


def _publishing(client, label):
    """ServerError (exit 3), nothing sent, for a server without the extension."""
    if not _is_declared(_capability(client.capabilities, ("extensions", _SKILLS_EXTENSION))):
        raise ServerError("%s publishes no skills (no %s extension)" % (
            _show(label) if _NOT_IN_NAMES.search(label) else label, _SKILLS_EXTENSION))


def _cmd_skills(client, args, ctx):
    """skills: the server's skills; skills get NAME|URI [FILE] [--out DIR]."""
    label = _server_label(args)
    _publishing(client, label)
    if not args.args:
        skills = client.list_skills()
        _pinned_skills(ctx, skills, True)
        ctx.hidden_items("skill", "uri", skills)
        lines = [line for skill in skills for line in _skill_lines(skill)]
        return ctx.mode.answer({"skills": skills}, lines)
    if args.args[0] != "get" or len(args.args) == 1:
        raise UsageError("skills takes nothing (the list), or get and a skill's NAME or URI, "
                         "then a FILE of it or --out DIR")
    if len(args.args) > 3:
        raise UsageError("skills get takes a skill's NAME or URI and at most one FILE")
    if args.skill_out is not None and len(args.args) == 3:
        raise UsageError("skills get --out DIR writes every file of the skill; it takes no "
                         "FILE")
    try:
        skill = _skill_named(client, args.args[1])
        _pinned_skills(ctx, [skill], False)
        return _skill_got(client, args, ctx, label, skill)
    except MCPError as e:
        e.result = None  # a listing's pages before it failed are not this command's output
        raise


def _pinned_skills(ctx, skills, whole):
    """Under --pin, skills as listed now against the pin (``whole``: the
    whole listing; else each one given must be pinned as it is): _Refused
    (exit 7) if they differ. A pin made before skills were pinned has none."""
    if ctx.pinned is not None and "skills" in ctx.pinned:
        problem = _listing_problem(ctx.pinned, "skills/list", {"skills": skills}, whole)
        if problem is not None:
            raise problem


def _cmd_skills_many(args, ctx, server):
    """skills --all / --server A,B: the skills of every server that publishes
    any, as server__name; one without the extension is left out without a
    word, one that fails is a warning (exit 0 if any listed)."""
    if server or args.url or args.session:
        raise UsageError("skills %s lists configured servers; it takes no %s" % (
            "--all" if args.all_servers else "--server A,B",
            "--" if server else "--url" if args.url else "--session"))
    if args.args:
        raise UsageError("skills get reads one server's skill: name it with --server NAME")
    names, found = _chosen_servers(args, ctx, "list")
    entries = _clients_of(args, ctx, found, names)

    def list_one(i, client):
        with client:
            declared = _capability(client.capabilities, ("extensions", _SKILLS_EXTENSION))
            return client.list_skills() if _is_declared(declared) else []
    outcomes = _at_once([client for client, _ in entries], list_one)
    skills, lines, failures = [], [], []
    for name, outcome in zip(names, outcomes):
        if isinstance(outcome, MCPError):
            failures.append((name, outcome))
            continue
        for skill in outcome:
            ctx.hidden("skill %s%s%r" % (name, _SEPARATOR, _dict(skill).get("uri")), skill)
            skills.append(dict(_dict(skill), server=name))
            lines += _skill_lines(skill, name + _SEPARATOR)
    if failures and len(failures) == len(names):
        for name, error in failures[1:]:
            ctx.diag.warning("server %r: %s" % (name, error))
        error = failures[0][1]
        error.message = "server %r: %s" % (failures[0][0], error.message)
        raise error
    for name, error in failures:
        ctx.diag.warning("server %r: %s" % (name, error))
    return ctx.mode.answer({"skills": skills}, lines)


def _skill_named(client, wanted):
    """The entry of the skill ``wanted`` names: a URI, asked of the server with
    skills/get (its own word, listed or not: a listing may be partial), or a
    name no two listed skills share."""
    if "://" in wanted:
        return client.get_skill(wanted)
    found = [s for s in map(_dict, client.list_skills())
             if _dict(s.get("frontmatter")).get("name") == wanted]
    if len(found) > 1:
        raise UsageError("%d skills are named %s; pick one by URI: %s" % (
            len(found), _show(wanted), ", ".join(_show(s.get("uri")) for s in found)))
    if not found:
        raise ServerError("the server publishes no skill named %s (skills lists them)"
                          % _show(wanted), "skills/list")
    return found[0]


def _skill_got(client, args, ctx, label, skill):
    """A skill read and verified: SKILL.md (or FILE) on stdout, or all of it to --out DIR."""
    dynamic = skill.get("resources") == "dynamic"
    how = "unverified: dynamic" if dynamic else "verified"
    uri = skill.get("uri")
    if args.skill_out is not None:
        path, count = fetch_skill(client, skill, args.skill_out, label, args.allow_dynamic)
        ctx.diag.note("skill %s from %s (%s): %d files, %s" % (
            _shown_word(_dict(skill.get("frontmatter")).get("name")), label, uri, count, how))
        return ctx.mode.answer({"server": label, "skill": skill, "path": path}, [path])
    files = _checked_skill(skill, args.allow_dynamic)  # refused before any read
    wanted = uri if len(args.args) < 3 else _skill_file(skill, files, args.args[2])
    data = client.read_skill_file(skill, wanted, None, args.allow_dynamic)
    ctx.diag.note("skill %s from %s (%s): %s, %s" % (
        _shown_word(skill["frontmatter"]["name"]), label, uri,
        "SKILL.md" if wanted == uri else wanted, how))
    value = {"server": label, "skill": skill, "uri": wanted, "size": len(data),
             "digest": "sha256:" + _sha256()(data).hexdigest()}
    try:
        value["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        import base64  # lazy: a skill file that is not text
        value["blob"] = base64.b64encode(data).decode("ascii")
    if "text" in value:  # as read prints it, control characters neutralised
        text = value["text"]
        return ctx.mode.answer(value, lambda: ctx.out.text(text, "" if text.endswith("\n")
                                                           else "\n"))
    return ctx.mode.answer(value, ["[blob, %d bytes] %s (not text: --json or --out DIR gives "
                                   "its bytes)" % (len(data), wanted)])


def _skill_file(skill, files, wanted):
    """The URI of a skill's FILE: a URI, or a path relative to the skill's directory."""
    if "://" in wanted:
        return wanted
    return skill["uri"][:-len(_SKILL_FILE)] + "/".join(
        _quoted_segment(part) for part in wanted.replace("\\", "/").split("/"))


def _quoted_segment(part):
    from urllib.parse import quote  # lazy: only a skill's FILE needs it
    return quote(part, safe="!$&'()*+,;=:@-._~")


# ---------------------------------------------------------------------------
# Commands and the parser
# ---------------------------------------------------------------------------

def _cmd_tools(client, args, ctx):
    result = ctx.listing(client, "tools/list")
    if ctx.tool_cache is not None and ctx.pinned is None and not ctx.policy.active:
        ctx.tool_cache.keep(client, result)  # for a search to come (CLI.md "Agents")
    result["tools"] = [t for t in result["tools"] if ctx.policy.shows(t)]
    ctx.hidden_items("tool", "name", result["tools"])
    return ctx.mode.listing(result, result["tools"], _signature)


def _cmd_call(client, args, ctx):
    name = args.args[0]
    _declared(client, "tools/call")
    tool = _find_tool(client, name, ctx)
    ctx.policy.check(tool, name)
    try:
        arguments = _call_checked(tool, args, ctx)
    except UsageError:
        if not ctx.from_cache:
            raise
        ctx.tool_cache.drop()  # the schema may have changed since it was listed
        tool = _find_tool(client, name, ctx, cached=False)
        arguments = _call_checked(tool, args, ctx)
    ctx.tasks.tool, ctx.tasks.failed = name, False
    result = client.call_tool(name, arguments, on_progress=ctx.diag.progress,
                              detach=args.detach)
    if args.detach and "taskId" in result and "content" not in result:  # a Task
        ctx.diag.finish()
        ctx.tasks.keep(result)
        created = {"task": result} if client.era == "legacy" else result  # as it came
        return ctx.mode.answer(created, [_flat(result["taskId"])])
    return _show_call_result(result, tool, args, ctx, "tool %r" % name)


def _show_call_result(result, tool, args, ctx, what):
    """A tool's result, as call prints it (``what``: "tool 'NAME'", or a task)."""
    ctx.diag.finish()
    ctx.hidden("the result of %s" % what, result)
    problem = _call_result_problem(result)
    if problem:
        ctx.mode.malformed(result, problem)
    ctx.mode.result(result)
    failed, ctx.tasks.failed = ctx.tasks.failed, False
    if result.get("isError") or failed:
        # failed: "the associated request did not complete successfully"
        # (2025-11-25 basic/utilities/tasks, "Task Status"), whatever the
        # result, which is printed as it came, says.
        ctx.diag.error("%s returned an error" % what)
        return _EXIT_TOOL_ERROR
    problem = _output_problem(tool, result) if tool is not None else None
    if problem and args.strict:
        raise ProtocolError(problem)
    if problem:
        ctx.diag.warning(problem + " (--strict makes this exit 4)")
    return 0


def _call_result_problem(result):
    """What makes a tools/call result one the spec does not allow (exit 4, on
    every path that shows one: call, batch), or None."""
    if "content" in result and not isinstance(result["content"], list):
        return "tools/call result has content that is not a list"
    return None


def _call_checked(tool, args, ctx):
    """call's arguments, typed by the tool's inputSchema and checked against it.
    A UsageError ends with the tool's call form (CLI.md "Agents"): the next
    try needs nothing else."""
    base, pairs = args.arguments
    schema = _dict(tool.get("inputSchema")) if tool else None
    arguments = dict(base or {})
    try:
        arguments.update(_coerce_arguments(pairs, schema))
        if schema and not args.no_validate:
            problem = _schema_problem(arguments, schema, where="argument")
            if isinstance(problem, _Unchecked):  # the server still checks them
                ctx.diag.warning("%s; sent unchecked" % problem)
            elif problem:
                raise UsageError("%s (--no-validate sends it anyway)" % problem)
    except UsageError as e:
        if tool:
            e.message = "%s; %s" % (e.message, _call_form(tool, ctx.tool_prefix))
        raise
    return arguments


def _find_tool(client, name, ctx, cached=True):
    """The tool's entry from tools/list (under --pin, the listing compared with
    the pin; else perhaps the tool-list cache's), exit 3 with near names if it
    is not there (only names the policy shows); a name the cached list lacks is
    looked for in a new listing (``cached`` False), which is then the one
    remembered. Under a policy, a name listed twice, differently, is refused:
    which entry's annotations hold cannot be known."""
    # Under a pin or a policy, what decides is a listing of now.
    policy, cache = ctx.policy, (ctx.tool_cache if ctx.pinned is None
                                 and not ctx.policy.active else None)
    tools = None if cache is None or not cached else cache.tools(client)
    ctx.from_cache = tools is not None
    if tools is None:
        try:
            result = ctx.listing(client, "tools/list")
        except ServerError:
            return None  # no tools/list: call blind, strings stay strings
        tools = [_dict(t) for t in result["tools"]]
        if cache is not None:
            cache.keep(client, result)
    elif not [tool for tool in tools if tool.get("name") == name]:
        cache.drop()  # perhaps new since it was listed
        return _find_tool(client, name, ctx, cached=False)
    found = [tool for tool in tools if tool.get("name") == name]
    if found and policy is not None and policy.active and any(t != found[0] for t in found):
        raise _Refused("refused by the trust policy: the server lists tool %r %d times, "
                       "differently" % (name, len(found)))
    if found:
        return found[0]
    shown = [t.get("name") for t in tools if policy is None or policy.shows(t)]
    raise ServerError("unknown tool %r%s" % (ctx.tool_prefix + name,
                                             _suggest(name, shown, ctx.tool_prefix)))


def _output_problem(tool, result):
    """What is wrong with structuredContent against the tool's outputSchema (server/tools)."""
    schema = _dict(tool).get("outputSchema")
    if not isinstance(schema, dict):
        return None
    if "structuredContent" not in result:
        return "tool has an outputSchema but returned no structuredContent"
    return _schema_problem(result["structuredContent"], schema, where="structuredContent")


def _suggest(name, names, prefix=""):
    """What to try instead of ``name``, as the user named it: with the server
    ``prefix`` they typed (server__tool)."""
    # From the first 10,000 names: difflib takes seconds over millions.
    import difflib  # lazy: only for an unknown tool
    near = difflib.get_close_matches(
        name, [n for n in names[:10000] if isinstance(n, str)], 3, 0.5)
    if near:
        return "; did you mean %s?" % ", ".join(prefix + n for n in near)
    return "; the server has %d tools (run '%s' to list them, or 'search WORD' to find one)" % (
        len(names), "tools --server " + prefix[:-len(_SEPARATOR)] if prefix else "tools")


def _cmd_schema(client, args, ctx):
    """schema TOOL: its signature, then its input and output schemas."""
    name = args.args[0]
    tool = _find_tool(client, name, ctx)
    if tool is None:
        raise ServerError("the server lists no tools, so %r has no schema to show" % name)
    ctx.policy.check(tool, name)  # what the policy hides, schema does not show either
    ctx.hidden("tool %r" % name, tool)

    def readable():
        ctx.lines([_signature(tool, ctx.tool_prefix)])  # then each schema, labelled (CLI.md)
        for label, key in (("input schema", "inputSchema"), ("output schema", "outputSchema")):
            if key in tool:
                ctx.lines([label + ":"])
                ctx.out.text(_to_json(tool[key], pretty=True))
            else:
                ctx.lines(["%s: none" % label])
        support = _dict(tool.get("execution")).get("taskSupport")
        if support in _TASK_MARKS:  # what call does with it (CLI.md "Tasks")
            ctx.lines(["runs as a task: %s (call waits for it; call --detach prints its id)"
                       % support])
    shown = {"name": tool.get("name"), "inputSchema": tool.get("inputSchema"),
             "outputSchema": tool.get("outputSchema")}
    if "execution" in tool:
        shown["execution"] = tool["execution"]
    return ctx.mode.answer(shown, readable)


def _cmd_resources(client, args, ctx):
    result = ctx.listing(client, "resources/list")
    ctx.hidden_items("resource", "uri", result["resources"])
    return ctx.mode.listing(result, result["resources"], lambda r: _listing(r.get("uri"), r))


def _cmd_templates(client, args, ctx):
    result = ctx.listing(client, "resources/templates/list")
    ctx.hidden_items("template", "uriTemplate", result["resourceTemplates"])
    return ctx.mode.listing(result, result["resourceTemplates"],
                            lambda t: _listing(t.get("uriTemplate"), t))


# What a command names when the server lacks the capability a request needs.
_OFFERINGS = {"tools/list": "tools", "tools/call": "tools", "prompts/list": "prompts",
              "prompts/get": "prompts", "resources/list": "resources",
              "resources/read": "resources", "resources/templates/list": "resource templates",
              "completion/complete": "completions"}


def _not_declared(client, method):
    """Why the command line sends no ``method``: the server declares no capability
    for it (basic/lifecycle: only what was negotiated is used); None when it
    does, or under --strict, where the Client refuses it (exit 4)."""
    capability = None if client.strict else client.undeclared(method)
    if capability is None:
        return None
    name = client.server_info.get("name")
    return "%s offers no %s (it declares no %s capability)" % (
        _flat(_cut(name, _SHOW_CHARS)) if isinstance(name, str) and name.strip()
        else "the server", _OFFERINGS.get(method, method), capability)


def _declared(client, method):
    """ServerError (exit 3, as for an unknown tool), unsent, for a ``method``
    the server declares no capability for (see _not_declared)."""
    why = _not_declared(client, method)
    if why is not None:
        raise ServerError("%s, so %s is not sent" % (why, method))


def _listing(uri, item):
    text = "%s  %s" % (_shown_word(uri), _shown_word(item.get("name", "")))
    if item.get("mimeType"):
        text += " (%s)" % _shown_word(item["mimeType"])
    description = _first_line(item.get("description"))
    return text + (" - " + description if description else "")


def _cmd_read(client, args, ctx):
    _declared(client, "resources/read")
    result = client.read_resource(args.args[0])
    ctx.hidden("resource %r" % args.args[0], result)
    return ctx.mode.result(result)


def _cmd_prompts(client, args, ctx):
    result = ctx.listing(client, "prompts/list")
    ctx.hidden_items("prompt", "name", result["prompts"])
    return ctx.mode.listing(result, result["prompts"], _prompt_line)


def _prompt_line(prompt):
    names = ["%s%s" % (_shown_word(a.get("name")), "" if a.get("required") else "?")
             for a in map(_dict, _list(prompt.get("arguments")))]
    line = "%s(%s)" % (_shown_word(prompt.get("name")), ", ".join(names))
    description = _first_line(prompt.get("description"))
    return line + (" - " + description if description else "")


def _cmd_prompt(client, args, ctx):
    pairs = _parse_pairs(args.args[1:], allow_json=False)
    _declared(client, "prompts/get")
    result = client.get_prompt(args.args[0], dict((k, v) for k, v, _ in pairs))
    ctx.hidden("prompt %r" % args.args[0], result)

    def readable():
        if not isinstance(result.get("messages"), list):
            ctx.mode.malformed(result, "prompts/get result has no messages list")
        for message in map(_dict, result["messages"]):
            ctx.out.text("[%s]" % _flat(message.get("role")))
            ctx.blocks([message.get("content")])
    return ctx.mode.answer(result, readable)


def _cmd_info(client, args, ctx):
    ctx.hidden("the server's name and version", client.server_info)
    ctx.hidden("the server's instructions", client.instructions)
    return ctx.mode.answer(client.initialize_result or client.discover_result,
                           lambda: _info_lines(client, ctx))


def _info_lines(client, ctx):
    info = client.server_info
    ctx.lines([
        "server: %s %s" % (info.get("name", "?"), info.get("version", "")),
        "protocol: %s (%s era, %s)" % (client.protocol_version, client.era, client.era_source),
        "transport: %s" % (ctx.diag.redact(client.transport) if ctx.diag.redact is not None
                           else client.transport),  # ours, not the server's: no secret
        "capabilities: %s" % (", ".join(sorted(client.capabilities)) or "none"),
    ] + ([] if client.env_names is None else [
        "env: %s" % (", ".join(_shown_word(n) for n in client.env_names) or "none")]))
    if client.instructions:  # free text, last: it may take several lines
        ctx.out.text("instructions: %s" % client.instructions)


def _cmd_ping(client, args, ctx):
    start = time.monotonic()
    result = client.ping()
    return ctx.mode.answer(result, ["ok (%.1f ms)" % ((time.monotonic() - start) * 1000)])


def _cmd_complete(client, args, ctx):
    """complete prompt NAME ARG=PARTIAL [CTX=VALUE...], or complete resource TEMPLATE ..."""
    kind, target = args.args[0], args.args[1]
    pairs = _parse_pairs(args.args[2:], allow_json=False)
    ref = ({"type": "ref/prompt", "name": target} if kind == "prompt"
           else {"type": "ref/resource", "uri": target})
    context = dict((k, v) for k, v, _ in pairs[1:])
    _declared(client, "completion/complete")
    result = client.complete(ref, pairs[0][0], pairs[0][1], context)

    def readable():
        values = _dict(result.get("completion")).get("values")
        if not isinstance(values, list):
            ctx.mode.malformed(result, "completion/complete result has no completion.values "
                               "list")
        return ctx.lines(_shown_word(v) for v in values)
    return ctx.mode.answer(result, readable)


def _cmd_servers(args, ctx):
    """The servers the known config files (or --config FILE) hold; none is started."""
    cwd = _cwd()
    found = _found_servers(cwd, os.environ, ctx.diag.warning, args.config)
    for name in _server_names(found):
        if _SEPARATOR in name:
            ctx.diag.warning("server %r has %r in its name: its tools are reached with "
                             "--server only, not as server%stool" % (name, _SEPARATOR,
                                                                   _SEPARATOR))
    return ctx.mode.answer(_found_json(found), _describe_found(found, cwd, os.environ))


def _cmd_pin(client, args, ctx):
    """pin FILE: record what the server offers."""
    path = args.args[0]
    pin = _snapshot(client)
    text = _pin_text(pin)
    if ctx.diag.redact is not None and ctx.diag.redact(text) != text:
        # A pin holds what the server sent, to the byte (its hashes are checked).
        ctx.diag.warning("the server echoes a secret of this run (an --env value, a "
                         "header, a ${VAR}) in what it offers, so the pin %s holds it: it is "
                         "written 0600; keep it private, or pin the server without that "
                         "secret" % path)
        _write_pin(path, text, 0o600)
    else:
        _write_pin(path, text)
    summary = dict((section, len(pin[section])) for section, _, _, _, _, _ in _PINNED
                   if section in pin)
    summary["sha256"] = pin["sha256"]
    return ctx.mode.answer(summary, ["pinned %s: %s" % (path, _counted(summary))])


def _cmd_check(client, args, ctx):
    """check --pin FILE: the comparison is --pin's, done before any command."""
    counts = dict((section, len(ctx.pinned[section])) for section, _, _, _, _, _ in _PINNED
                  if section in ctx.pinned)
    return ctx.mode.answer({"match": True},
                           ["pin holds: %s (%s)" % (args.pin, _counted(counts))])


def _counted(summary):
    return ", ".join("%d %s" % (summary[section], kind + ("" if summary[section] == 1 else "s"))
                     for section, kind, _, _, _, _ in _PINNED if summary.get(section)
                     or section in summary and section not in _PIN_LATER)


def _cmd_watch(client, args, ctx):
    """watch URI... / watch --tools: each version as it comes, until --count
    updates, --max-time (the watch's length) or Ctrl-C; exit 0 for all three.
    Each change the server tells of is read and printed, even where the read
    gives what was printed last: a server may tell of a change a read in
    between already showed, or of one that changed nothing, and either way
    the change is the event watched for."""
    uris = args.args
    if not uris and not args.watch_tools:
        raise UsageError("watch takes one or more resource URIs, or --tools")
    until = None if args.max_time is None else time.monotonic() + args.max_time
    shown, updates = {}, 0  # per thing watched: the versions printed
    changes = client.watch(uris, args.watch_tools, until)
    try:
        for kind, uri in changes:
            key = "tools" if kind == "tools" else uri
            left = None if until is None else until - time.monotonic()
            if left is not None and left <= 0:
                break
            try:  # each read within what is left of the watch
                timeout = args.timeout if left is None else min(args.timeout, left)
                version = (_watched_tools(client, ctx, timeout) if kind == "tools"
                           else client.read_resource(uri, timeout))
            except RequestTimeout:
                if until is None or time.monotonic() < until:
                    raise
                break  # the watch's length ran out during the read
            printed = shown.get(key, 0)
            shown[key] = printed + 1
            updates += 1 if printed else 0
            if kind == "tools":
                _print_watched_tools(ctx, printed, version)
            else:
                _print_watched_resource(ctx, uri, printed, version)
            if args.count is not None and updates >= args.count:
                break
            if ctx.out.closed:  # `watch ... | head -1`: nobody reads on, as for tail -f
                break
    except KeyboardInterrupt as e:
        if isinstance(e, _Signalled):  # a stop signal: 128 + its number, as ever
            raise
    finally:
        changes.close()
    ctx.mode.summary({"updates": updates})
    return 0


def _print_watched_resource(ctx, uri, update, result):
    ctx.hidden("resource %r" % uri, result)
    ctx.mode.change({"uri": uri, "update": update, "result": result},
                    "--- %s%s" % (uri, " (update %d)" % update if update else ""),
                    lambda: ctx.mode.result(result))
    ctx.out.flush()


def _watched_tools(client, ctx, timeout):
    """The tool list as the policy shows it."""
    result = ctx.listed.pop("tools/list", None) or client.list_all("tools/list", timeout)
    result["tools"] = [t for t in result["tools"] if ctx.policy.shows(t)]
    return result


def _print_watched_tools(ctx, update, result):
    ctx.hidden_items("tool", "name", result["tools"])
    ctx.mode.change({"tools": True, "update": update, "result": result},
                    "--- tools%s" % (" (update %d)" % update if update else ""),
                    lambda: ctx.mode.listing(result, result["tools"], _signature))
    if ctx.pinned is not None:  # what changed since the pin, said each time
        changes, diffs = _entry_changes(_PINNED[0], ctx.pinned["tools"],
                                        _pin_entries(_PINNED[0], result["tools"]))
        if changes:
            ctx.diag.warning("the tools differ from the pin %s: %s" % (
                ctx.pin_path, "; ".join(changes)), "pin")
            ctx.diag.block(diffs)
    ctx.out.flush()


def _cmd_completion(args, ctx):
    """completion bash|zsh: a completion script for the shell (zsh through its
    bash completion layer): commands, options, and --server names."""
    shell = args.args[0]
    if shell not in ("bash", "zsh"):
        raise UsageError("completion takes bash or zsh, not %s" % _show(shell))
    parser = _build_parser()
    options = sorted(o for action in parser._actions for o in action.option_strings)
    valued = sorted(_valued(parser))
    script = _COMPLETION % {"commands": " ".join(_COMMANDS), "options": " ".join(options),
                           "valued": "|".join(valued)}
    if shell == "zsh":
        script = "autoload -U +X bashcompinit && bashcompinit\n" + script
    ctx.out.write(script)
    return 0


# The bash completion: a command first, options anywhere, a --server name from
# `mcp_invoke servers`, a --session name from `mcp_invoke session list`, files
# for the options that take one; nothing after --.
_COMPLETION = r"""_mcp_invoke() {
    local cur prev word i command=""
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${COMP_WORDS[i]}"
        [[ "$word" == "--" ]] && return 0
        if [[ "$word" != -* && -z "$command" ]]; then
            case "${COMP_WORDS[i-1]}" in %(valued)s) ;; *) command="$word" ;; esac
        fi
    done
    case "$prev" in
        --server|--session|stop)
            # Names come from config files (a cloned repository's .mcp.json among
            # them): matched as text, never through compgen -W, which expands them.
            local name names
            if [[ "$prev" == --server ]]; then
                names="$("${COMP_WORDS[0]}" servers 2>/dev/null | cut -d' ' -f1)"
            else
                names="$("${COMP_WORDS[0]}" session list 2>/dev/null | cut -d' ' -f1)"
            fi
            COMPREPLY=()
            while IFS= read -r name; do
                [[ -n "$name" && "$name" == "$cur"* ]] && COMPREPLY+=("$name")
            done <<< "$names"
            return 0 ;;
        %(valued)s) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "%(options)s" -- "$cur"))
    elif [[ -z "$command" ]]; then
        COMPREPLY=($(compgen -W "%(commands)s" -- "$cur"))
    elif [[ "$command" == session && "$prev" == session ]]; then
        COMPREPLY=($(compgen -W "start list stop" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _mcp_invoke mcp_invoke mcp_invoke.py
"""


def _cmd_auth(client, args, ctx):
    """auth login: the client is open, authorized on the way if the server asked."""
    return _auth_status(args, ctx, args.auth_url)


def _auth_cached(args, ctx, server):
    """auth status and auth logout: the token file only, no server started."""
    entry = _server_entry(args, server)
    if entry["transport"] != "http":
        raise UsageError("auth is for a server reached over HTTP (--url URL, or a config "
                         "entry with a url)")
    if args.args[0] == "status":
        return _auth_status(args, ctx, entry["url"])
    cache = _auth_cache(args)
    kept = cache.server(entry["url"])
    if (kept["tokens"] or kept["clients"]) and not cache.update(
            entry["url"], lambda kept: (kept["tokens"].clear(), kept["clients"].clear())):
        raise UsageError("cannot write the token file %s" % cache.path)
    tokens, clients = len(kept["tokens"]), len(kept["clients"])
    return ctx.mode.answer({"server": entry["url"], "tokens": tokens, "clients": clients}, [
        "logged out of %s: %d token%s and %d client registration%s forgotten" % (
            _shown_url(entry["url"]), tokens, "" if tokens == 1 else "s",
            clients, "" if clients == 1 else "s")])


def _auth_cache(args):
    if args.no_oauth_cache:
        raise UsageError("auth %s works on the token file; --no-oauth-cache leaves none"
                         % args.args[0])
    _check_token_file(args.oauth_cache, args.args[0] != "status")
    return _TokenCache(args.oauth_cache or _TokenCache.default_path(os.environ))


def _auth_status(args, ctx, url):
    """What the token file holds for ``url``: clients, scopes, expiry; never a token."""
    kept = _auth_cache(args).server(url)
    tokens = [{"client_id": t.get("client_id"), "issuer": t.get("issuer"),
               "scope": t.get("scope") or "", "expires_at": _utc(t.get("expires_at")),
               "refreshable": bool(t.get("refresh_token"))} for t in kept["tokens"]]
    clients = [{"issuer": issuer, "client_id": _dict(client).get("client_id")}
               for issuer, client in sorted(kept["clients"].items())]
    return ctx.mode.answer({"server": url, "tokens": tokens, "clients": clients},
                           _status_lines(args, url, kept, tokens, clients))


def _status_lines(args, url, kept, tokens, clients):
    lines = ["server: %s" % _shown_url(url)]
    lines += ["client: %s (registered with %s)" % (_plain(c["client_id"]), _plain(c["issuer"]))
              for c in clients]
    for token, kept_token in zip(tokens, kept["tokens"]):
        expires = kept_token.get("expires_at")
        lines.append("token: client %s, scopes %s, %s%s" % (
            _plain(token["client_id"]), _plain(token["scope"]) or "(none asked)",
            "no expiry given" if token["expires_at"] is None else "expires %s (%s)" % (
                token["expires_at"], _in(expires - time.time())),
            ", refreshable" if token["refreshable"] else ""))
    if not tokens:
        lines.append("not logged in" if args.args[0] != "login" else
                     "the server did not ask for authorization; nothing is kept")
    return lines


def _plain(value):
    """A value from the token file, on one line and cut short."""
    return _flat(_cut(str(value), 200))


def _utc(epoch):
    if not isinstance(epoch, (int, float)) or isinstance(epoch, bool):
        return None
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    except (OverflowError, ValueError, OSError):
        return None


def _in(seconds):
    """'in 59m', 'expired 3h ago'."""
    text = _duration(abs(seconds))
    return "in " + text if seconds >= 0 else "expired %s ago" % text


def _cmd_batch(client, args, ctx):
    """JSON Lines in, one outcome line out per request, in input order.

    Lines stream through both ways: each is sent as soon as it is read, while
    the lines before it are in flight, and printed as soon as it and every
    line before it are done, so a program may write a line and wait for its
    answer before it writes the next. Memory holds what is in flight.
    """
    if args.args:
        raise UsageError("batch takes no arguments; it reads JSON Lines on stdin")
    ctx.diag.events.lines = True
    waiting = collections.deque()  # entries read whose line is not printed yet
    status = 0

    def emit(ident, outcome, method=None):
        nonlocal status
        if ctx.pinned is not None and isinstance(outcome, dict):  # a page differing from
            outcome = _listing_problem(ctx.pinned, method, outcome, whole=False) or outcome
        line = {"id": ident}
        if method == "tools/list" and isinstance(outcome, dict) and isinstance(
                outcome.get("tools"), list):  # what the policy hides, hidden here too
            outcome["tools"] = [t for t in outcome["tools"] if ctx.policy.shows(t)]
        if method == "tools/call" and isinstance(outcome, dict) and _call_result_problem(
                outcome):  # judged as call judges it; the result goes with the error
            outcome = ProtocolError(_call_result_problem(outcome), method, result=outcome)
        if isinstance(outcome, RequestTimeout) and outcome.task_id is not None:
            outcome = ctx.tasks.timed_out(outcome)  # said as call says it: how to go on
        if isinstance(outcome, MCPError):
            line["error"] = _error_object(outcome, ctx.diag.redact)
            code = outcome.exit_code
        else:
            line["result"] = outcome
            code = _EXIT_TOOL_ERROR if outcome.get("isError") else 0
        status = status or code
        ctx.mode.batch_line(line, outcome, ident, code)

    guard = _BatchGuard(client, ctx)
    feed = _LineFeed.of(ctx.stdin)

    def requests():
        for ident, method, params, problem in _batch_entries(feed.lines()):
            if method is None and problem is None:
                yield None  # no line is ready yet
                continue
            if problem is None:
                problem = guard.problem(method, params)
            if problem is not None and not waiting:
                emit(ident, problem)
                continue
            waiting.append((ident, problem, method))
            if problem is None:
                yield method, params, _line_progress(ctx, ident)

    written = []  # the outcome whose line went out last

    @_Unsplit.marked  # Ctrl-C meets a line written and noted, or neither
    def write(outcome):
        try:
            ident, _, method = waiting.popleft()
            emit(ident, outcome, method)
            written[:] = [outcome]
            while waiting and waiting[0][1] is not None:  # bad lines up to the next request
                emit(*waiting.popleft()[:2])
        finally:
            if _Unsplit.later:
                _Unsplit.release()

    # Lines go out when the next one is not ready yet: a reader sees each
    # result as soon as the server gives it, without a flush per line.
    feed.follow(client.waker())
    outcomes = client.batch(requests(), on_wait=ctx.out.flush)
    try:
        for outcome in outcomes:
            write(outcome)
            if ctx.out.closed:  # `batch | head -1`: nobody reads on; what is in flight
                break  # is cancelled, and no more is read
    except KeyboardInterrupt as stop:  # every line sent still gets its line
        if outcomes.gi_frame is not None:  # it came here: the batch is stopped by it too
            try:
                outcomes.throw(stop)
            except KeyboardInterrupt:
                pass
        left = client.interrupted_batch
        if left and written and left[0] is written[0]:
            left = left[1:]  # its line is out
        for outcome in left:
            if not ctx.out.closed:
                write(outcome)
        raise
    finally:
        feed.follow(None)
    if guard.finish():  # a change no later line was checked against
        status = status or _Refused.exit_code
    return status


def _line_progress(ctx, ident):
    """A batch line's progress: events carry its id; without --events none is shown."""
    return ctx.mode.line_progress(ident)


def _lines(text):
    """``text`` split on "\n" only, a line at a time: splitlines() would also break
    a line at a U+2028 inside a string."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield text[start:end]
        start = end + 1


# The most lines of standard input read ahead of the batch sending them.
_FEED_AHEAD = 4 * MAX_IN_FLIGHT


class _LineFeed(object):
    """Standard input, line by line, as a program writes it: a thread reads the
    descriptor and hands over each whole line, so ``batch`` sends a line as
    soon as it comes and waits on the server and its input at once. Bytes
    that are not UTF-8 are kept as U+DC80..U+DCFF for the caller to find; a
    line over the input limit is handed over as _TOO_LONG. The thread reads
    _FEED_AHEAD lines ahead at most, and stops handing lines over (and
    calling the wake) once ``follow(None)``."""

    def __init__(self, fd):
        import threading  # lazy: batch only
        self._fd = fd
        self._cond = threading.Condition()
        self._queue = collections.deque()
        self._ended = False
        self._wake = None
        self._stopped = False
        thread = threading.Thread(target=self._read, name="mcp_invoke stdin")
        thread.daemon = True  # blocked on a read nobody answers: it goes with the process
        thread.start()

    @classmethod
    def of(cls, stream):
        """A feed of ``stream``'s descriptor, or of its text where it has none
        (a caller's StringIO), read whole as before."""
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            return _TextFeed(_read_text(stream, "surrogateescape"))
        return cls(fd)

    def follow(self, wake):
        """Call ``wake()`` whenever lines are ready (None: stop, and hand no more over)."""
        with self._cond:
            self._wake = wake
            self._stopped = wake is None
            self._cond.notify_all()
            if wake is not None and (self._queue or self._ended):
                wake()

    def lines(self):
        """Each line, or None when none is ready yet, until the input ends."""
        while True:
            with self._cond:
                if self._queue:
                    line = self._queue.popleft()
                    if len(self._queue) == _FEED_AHEAD // 2:  # the reader may go on
                        self._cond.notify_all()
                elif self._ended:
                    return
                else:
                    line = None
            yield line if line in (None, _TOO_LONG) else line.decode("utf-8", "surrogateescape")

    def _read(self):
        pending, cut = bytearray(), False  # the line so far; over the limit
        while True:
            try:
                chunk = os.read(self._fd, _READ_SIZE)
            except OSError:
                chunk = b""
            if not chunk:
                break
            pieces = chunk.split(b"\n")
            whole = []
            for piece in pieces[:-1]:
                cut = cut or len(pending) + len(piece) > _INPUT_LIMIT
                whole.append(_TOO_LONG if cut else bytes(pending + piece))
                pending, cut = bytearray(), False
            cut = cut or len(pending) + len(pieces[-1]) > _INPUT_LIMIT
            pending = bytearray() if cut else pending + pieces[-1]
            if whole and not self._hand(whole):
                return
        self._hand([_TOO_LONG] if cut else [bytes(pending)] if pending else [], True)

    def _hand(self, lines, ended=False):
        with self._cond:
            while len(self._queue) >= _FEED_AHEAD and not self._stopped:
                self._cond.wait()
            if self._stopped:
                return False
            self._queue.extend(lines)
            self._ended = ended
            if self._wake is not None:
                self._wake()
            return True


class _TextFeed(object):
    """_LineFeed's interface over text already read whole."""

    def __init__(self, text):
        self._text = text

    def follow(self, wake):
        pass

    def lines(self):
        return _lines(self._text)


# A line of standard input over the input limit, handed over in its place.
_TOO_LONG = object()


# What surrogateescape makes of bytes that are not UTF-8; no valid UTF-8 decodes to these.
_ESCAPED_BYTES = u"[\udc80-\udcff]"


def _batch_entries(stream):
    """(id, method, params, problem) per non-blank input line; numbers count every
    line. A None in ``stream`` (no line ready yet) comes out as (None,) * 4."""
    number = 0
    for line in stream:
        if line is None:
            yield None, None, None, None
            continue
        number += 1
        if line is _TOO_LONG:
            yield number, None, None, UsageError("line %d is over the input limit of %d "
                                                 "bytes" % (number, _INPUT_LIMIT))
            continue
        if not line.strip():
            continue
        if re.search(_ESCAPED_BYTES, line):
            yield number, None, None, UsageError("line %d is not valid UTF-8" % number)
            continue
        try:
            entry = _json_loads(line.strip())
        except ValueError as e:
            yield number, None, None, UsageError("line %d is not valid JSON: %s" % (number, e))
            continue
        entry = entry if isinstance(entry, dict) else {}
        ident = entry.get("id", number)
        method, params = entry.get("method"), entry.get("params")
        if not isinstance(method, str) or not isinstance(params, (dict, type(None))):
            problem = UsageError("line %d needs a string \"method\" and an object \"params\""
                                 % number)
            yield ident, None, None, problem
        else:
            yield ident, method, params, None


def _error_object(error, redact=None):
    """An error as batch lines and --json show it, the run's secrets redacted
    (an error is not the user's data; a result is)."""
    obj = {"message": _redacted(str(error) if not isinstance(error, ServerError)
                                else error.message, redact), "exit_code": error.exit_code}
    if isinstance(error, ServerError):
        if error.code is not None:
            obj["code"] = error.code
        if error.data is not None:
            obj["data"] = _redacted(error.data, redact)
    if getattr(error, "result", None) is not None:  # a result that breaks the protocol
        obj["result"] = error.result
    return obj


class _Human(object):
    """The output mode without --json or --events: readable text on stdout.

    _Json and _Stream have the same methods; a run picks one (see _Context)
    and no command asks which it has. Each method writes one kind of output:
    a command's answer, a tool result, a watch's change and summary, a result
    the spec does not allow, a server's error, a batch line.
    """

    def __init__(self, ctx):
        self.ctx = ctx

    def answer(self, value, readable):
        """A command's answer: ``value`` (a spec result, or the command's own
        object) as data, or ``readable`` as text: lines (an iterable; one
        entry a line) or a function that writes them."""
        if callable(readable):
            return readable() or 0
        return self.ctx.lines(readable)

    def listing(self, result, items, render):
        """A list's result: one line per item (``render(item)``)."""
        return self.answer(result, _entries(items, render))

    def result(self, result):
        """A tool result or resource contents."""
        ctx = self.ctx
        ctx.blocks(_list(result.get("content")))
        for item in _list(result.get("contents")):
            ctx.out.text(_render_contents(_dict(item), ctx.saver))
        if not result.get("content") and "structuredContent" in result:
            ctx.out.text(_to_json(result["structuredContent"], True))
        return 0

    def change(self, fields, header, show):
        """A new version of what a watch follows: a header on stderr, then
        ``show()`` writes it."""
        self.ctx.diag.block([header])
        show()

    def summary(self, result):
        """What a command that streams its output ends with (--events only)."""

    def malformed(self, result, problem):
        """A result the spec does not allow: shown as it came (nothing is lost),
        then exit 4."""
        self.broken(result)
        raise ProtocolError(problem)

    def broken(self, result):
        """The result a ProtocolError carries, shown before its message."""
        self.ctx.out.json(result, self.ctx.pretty)

    def server_error(self, error):
        """The server's JSON-RPC error (--json writes its object, whole)."""

    def batch_line(self, line, outcome, ident, code):
        """A batch line's outcome: its JSON line (CLI.md "batch")."""
        self.ctx.out.json(line)

    def line_progress(self, ident):
        """How a batch line's progress is shown: without --events, it is not."""
        return None


class _Json(_Human):
    """--json: the spec's objects (or the command's own) as JSON on stdout."""

    def answer(self, value, readable):
        self.ctx.out.json(value, self.ctx.pretty)
        return 0

    def result(self, result):
        ctx = self.ctx
        if ctx.saver is not None:
            ctx.saver.save_all(result)
        ctx.out.json(result, ctx.pretty, large=True)
        return 0

    def server_error(self, error):
        if error.code is not None:
            self.ctx.out.json({"error": _error_object(error, self.ctx.diag.redact)},
                              self.ctx.pretty)


class _Stream(_Json):
    """--events: stdout as JSON Lines (see _Events); the answer is the last line."""

    def __init__(self, ctx):
        _Json.__init__(self, ctx)
        self.events = ctx.diag.events

    def answer(self, value, readable):
        self.events.result(value)
        return 0

    def result(self, result):
        if self.ctx.saver is not None:
            self.ctx.saver.save_all(result)
        self.events.result(result)
        return 0

    def change(self, fields, header, show):
        self.events.emit("changed", **fields)

    def summary(self, result):
        self.events.result(result)

    def malformed(self, result, problem):
        raise ProtocolError(problem, result=result)  # the error event carries it

    def broken(self, result):
        pass  # the error event carries it

    def server_error(self, error):
        pass  # the error event carries its code and data

    def batch_line(self, line, outcome, ident, code):
        if isinstance(outcome, MCPError):
            self.events.error(code, str(outcome), outcome, ident=(ident,))
        else:
            self.events.result(outcome, ident=(ident,))

    def line_progress(self, ident):
        return lambda params: self.ctx.diag.progress(params, (ident,))


def _entries(items, render):
    """One line per listed item; an item that is not an object shows as JSON."""
    return (render(item) if isinstance(item, dict) else "[not an object: %s]" % _show(item)
            for item in items)


class _Context(object):
    """What a command writes to: results on ``out`` through the output ``mode``
    (_Human, _Json or _Stream, chosen here once from --json and --events),
    the rest through ``diag``."""

    def __init__(self, out, diag, pretty, stdin, saver=None, json=False, policy=None,
                 events=False):
        self.out = out
        self.diag = diag
        self.pretty = pretty
        self.stdin = stdin
        self.saver = saver
        self.mode = (_Stream if events else _Json if json else _Human)(self)
        self.policy = policy or _ToolPolicy([], [], False)
        self.hidden_found = 0
        self.pinned = self.pin_path = None  # the --pin file's pin, and its path
        self.tool_cache = None  # a _ToolCache, unless --no-cache
        self.from_cache = False  # the tool call found came from it
        self.tool_prefix = ""  # "server__" when the tool was named so (_namespaced)
        self.listed = {}  # under --pin: the lists compared with the pin, by method
        self.elicitor = None  # how the run answers elicitation (the shell's lines too)
        self.started = []  # what main aborts on a second stop signal (see main)
        self.tasks = _Tasks(diag)  # the tasks of this run's requests

    def listing(self, client, method):
        """A list's whole result. Under --pin, what a command uses is what was
        compared: first the listing --pin compared, then new ones, each compared
        again (exit 7 if it differs: a server may answer a second listing
        otherwise than the first)."""
        if method in self.listed:
            return self.listed.pop(method)
        why = _not_declared(client, method)
        if why is not None:  # nothing to list, and nothing is sent
            self.diag.note(why)
            return {_LISTS[method]: []}
        result = client.list_all(method)
        if self.pinned is not None:
            problem = _listing_problem(self.pinned, method, result)
            if problem is not None:
                raise problem
        return result

    def hidden(self, what, value):
        """Warn of hidden text in what the server gave (CLI.md "Hidden text"),
        naming the item and spelling out smuggled tag text; a few times at most."""
        found = _hidden_in(value)
        if found is None:
            return
        self.hidden_found += 1
        if self.hidden_found > _NOISE_WARNINGS + 1:
            return
        if self.hidden_found > _NOISE_WARNINGS:
            return self.diag.warning("more items hold hidden text; no longer reporting them",
                                     "hidden")
        where, text = found
        where = ("the description of %s" % what if where == "description" else
                 "%s (%s)" % (what, where) if where else what)
        self.diag.warning("hidden text in %s: %s" % (where, text), "hidden")

    def hidden_items(self, kind, key, items):
        for item in items:
            self.hidden("%s %r" % (kind, _dict(item).get(key)), item)

    def lines(self, lines):
        """One entry a line: a newline inside one shows as \\n, so none can forge another."""
        for line in lines:
            self.out.write(_terminal_text(line).replace("\n", "\\n") + "\n")
        return 0

    def blocks(self, blocks):
        for block in blocks:
            text = _render_block(block, self.saver)
            self.out.text(text, "" if text.endswith("\n") else "\n")


# One entry a command: what runs it, how many arguments it takes (at least, at
# most or None), what they are (for errors), how many servers it talks to
# (servers reads config files only), its --help lines, and one example (its
# options are in _OPTIONS).
_Command = collections.namedtuple("_Command", "run least most takes clients help example")

_COMMANDS = collections.OrderedDict((name, _Command(*entry)) for name, entry in (
    ("tools", (_cmd_tools, 0, 0, "no arguments", 1, [
        ("tools", "list the tools, one per line, like signatures"),
        ("tools --all | --server A,B", "the tools of several configured servers, as"),
        ("", "server__tool; call server__tool [ARGS...] calls one")],
        "mcp_invoke tools -- npx -y @modelcontextprotocol/server-everything")),
    ("search", (_cmd_search, 1, None, "words to look for", 1, [
        ("search WORD [WORD...]", "the tools whose names, titles, descriptions or"),
        ("", "arguments have those words, best first, across the"),
        ("", "configured servers (or --server A,B, or one server)")],
        "mcp_invoke search create issue")),
    ("skill", (_cmd_skill, 0, 0, "no arguments", 1, [
        ("skill [--out DIR]", "a skill (SKILL.md) that teaches an agent to use the"),
        ("", "server through this file"),
        ("skill --all --out DIR", "each configured server's, to DIR/NAME/SKILL.md"),
        ("skill --check DIR", "exit 7 if the server's tools changed since it was written")],
        "mcp_invoke skill --server github --out ~/.claude/skills")),
    ("skills", (_cmd_skills, 0, 3, "nothing, or get and a skill's NAME or URI", 1, [
        ("skills", "the skills the server publishes, one line each"),
        ("skills --all", "those of every configured server, as server__name"),
        ("skills get NAME|URI [FILE]", "the skill's SKILL.md (or FILE), verified"),
        ("skills get NAME|URI --out DIR", "every file of it, verified, under DIR/SERVER/PATH/")],
        "mcp_invoke skills get refunds --out ~/skills --server billing")),
    ("install", (_cmd_install, 0, 0, "no arguments", 0, [
        ("install [--bin DIR] [--name NAME]", ""),
        ("", "a launcher on PATH (~/.local/bin/mcp-invoke) that runs"),
        ("", "this file from cached bytecode")],
        "mcp_invoke install --bin ~/bin")),
    ("call", (_cmd_call, 1, None, "a tool name, then its arguments", 1, [
        ("call NAME [ARGS...]", "call a tool; ARGS: a JSON object, @file.json or -"),
        ("", "(stdin), then key=value (typed by the tool's"),
        ("", "inputSchema) or key:=JSON")],
        "mcp_invoke call echo text=hello -- python3 fake_server.py")),
    ("schema", (_cmd_schema, 1, 1, "exactly one tool name", 1, [
        ("schema TOOL", "a tool's signature, input schema and output schema")],
        "mcp_invoke schema github__create_issue")),
    ("resources", (_cmd_resources, 0, 0, "no arguments", 1, [
        ("resources", "list the resources")],
        "mcp_invoke resources --url https://mcp.example.com/mcp")),
    ("templates", (_cmd_templates, 0, 0, "no arguments", 1, [
        ("templates", "list the resource templates")],
        "mcp_invoke templates -- python3 fake_server.py")),
    ("read", (_cmd_read, 1, 1, "exactly one URI", 1, [("read URI", "read a resource")],
        "mcp_invoke read fake://item/1 -- python3 fake_server.py")),
    ("prompts", (_cmd_prompts, 0, 0, "no arguments", 1, [("prompts", "list the prompts")],
        "mcp_invoke prompts --server github")),
    ("prompt", (_cmd_prompt, 1, None, "a prompt name, then key=value arguments", 1, [
        ("prompt NAME [key=value...]", "get a prompt")],
        "mcp_invoke prompt greet name=Ada -- python3 fake_server.py")),
    ("complete", (_cmd_complete, 3, None,
                  "prompt NAME ARG=PARTIAL or resource TEMPLATE ARG=PARTIAL", 1, [
                      ("complete prompt NAME ARG=PARTIAL [CTX=VALUE...]", ""),
                      ("complete resource TEMPLATE ARG=PARTIAL [CTX=VALUE...]", ""),
                      ("", "complete an argument, one value per line")],
        "mcp_invoke complete prompt greet name=A -- python3 fake_server.py")),
    ("info", (_cmd_info, 0, 0, "no arguments", 1, [
        ("info", "server name, version, era, protocol, capabilities")],
        "mcp_invoke info --url https://mcp.example.com/mcp")),
    ("ping", (_cmd_ping, 0, 0, "no arguments", 1, [("ping", "check the server answers")],
        "mcp_invoke ping --server github")),
    ("batch", (_cmd_batch, 0, 0, "no arguments; it reads JSON Lines on stdin", 1, [
        ("batch", 'JSON Lines on stdin ({"method": ..., "params": ...}),'),
        ("", "pipelined as they come; one result line per input line, in order")],
        'echo \'{"method": "tools/list"}\' | mcp_invoke batch -- python3 fake_server.py')),
    ("servers", (_cmd_servers, 0, 0, "no arguments", 0, [
        ("servers", "list the servers in other clients' config files (Claude, Cursor,"),
        ("", "VS Code, Windsurf, Gemini, Codex), or in --config FILE")],
        "mcp_invoke servers")),
    ("pin", (_cmd_pin, 1, 1, "exactly one file name", 1, [
        ("pin FILE", "record the server's tools, prompts, templates and instructions"),
        ("", "in FILE, with a SHA-256 of each")],
        "mcp_invoke pin github.pin.json --server github")),
    ("check", (_cmd_check, 0, 0, "no arguments; the pin file comes with --pin FILE", 1, [
        ("check --pin FILE", "compare the server with FILE and call nothing: exit 0 or 7")],
        "mcp_invoke check --pin github.pin.json --server github")),
    ("watch", (_cmd_watch, 0, None, "resource URIs, or --tools", 1, [
        ("watch URI [URI...]", "print each resource, then again each time it changes"),
        ("watch --tools", "print the tool list, then again each time it changes"),
        ("", "(ends at --count N updates, --max-time or Ctrl-C)")],
        "mcp_invoke watch --tools --count 3 --server github")),
    ("session", (_cmd_session, 1, 2, "start NAME, list, or stop NAME (or --all)", 0, [
        ("session start NAME", "start the server in the background, kept alive for"),
        ("", "--session NAME (--idle SECONDS: 1800)"),
        ("session list", "the sessions running"),
        ("session stop NAME|--all", "stop a session and its server")],
        "mcp_invoke session start gh --server github")),
    ("shell", (_cmd_shell, 0, 0, "no arguments; it reads commands, one a line", 1, [
        ("shell", "type commands (tools, call NAME ..., read URI, ...) against one"),
        ("", "open server or --session NAME; Ctrl-C cancels, Ctrl-D leaves")],
        "mcp_invoke shell --server github")),
    ("completion", (_cmd_completion, 1, 1, "bash or zsh", 0, [
        ("completion bash|zsh", "print a completion script for the shell")],
        "source <(mcp_invoke completion bash)")),
    ("replay", (_cmd_replay, 1, 1, "exactly one --trace file", 0, [
        ("replay FILE", "be a stdio MCP server answering from a --trace FILE")],
        "mcp_invoke replay run.trace")),
    ("task", (_cmd_task, 1, 2, "list, or get, wait or cancel and a task id", 1, [
        ("task list", "the tasks started here on the server and not seen end"),
        ("task get ID", "a task's state now: ID STATUS MESSAGE"),
        ("task wait ID", "wait for a task as call does, and print its result"),
        ("task cancel ID", "ask the server to cancel a task")],
        "mcp_invoke task wait ID --url https://ci.example.com/mcp")),
    ("auth", (_cmd_auth, 1, 1, "login, status or logout", 1, [
        ("auth login", "authorize with the server's OAuth server now, and keep the token"),
        ("auth status", "what the token file holds for the server (never a token)"),
        ("auth logout", "forget the server's tokens and client registrations")],
        "mcp_invoke auth login --url https://mcp.example.com/mcp")),
))


def _command_help(commands=None):
    """The commands part of --help (or of ``commands``' own), from the table."""
    lines = []
    for command in commands or _COMMANDS.values():
        for usage, text in command.help:
            lines.append(("  %-26s %s" % (usage, text)).rstrip() if len(usage) <= 26
                         else "  " + usage)
    return "\n".join(lines)


_USAGE = ("mcp_invoke [OPTIONS] COMMAND [ARGS...] -- SERVER_CMD [SERVER_ARGS...]\n"
          "       mcp_invoke [OPTIONS] COMMAND [ARGS...] --url URL\n"
          "       mcp_invoke [OPTIONS] COMMAND [ARGS...] [--config FILE] [--server NAME]\n"
          "       mcp_invoke [OPTIONS] COMMAND [ARGS...] --session NAME")

_DESCRIPTION = """\
Call an MCP server over stdio (everything after -- is the server's exact argv)
or over Streamable HTTP (--url).

commands:
%s

--server NAME runs a server from those files (or from --config FILE); without
-- and --server, ./.mcp.json is used when it holds exactly one server.
--session NAME goes through a server kept running by session start NAME."""

_EPILOG = """\
exit codes:
  0 ok, 1 the tool returned isError, 2 usage or bad input,
  3 the server answered a JSON-RPC error, 4 protocol violation,
  5 connection lost (or HTTP 5xx), 6 authentication refused (HTTP 401/403, OAuth),
  7 refused by the trust policy (--pin, --allow-tools, --deny-tools, --read-only),
  124 timed out, 126 server not executable, 127 server not found, 130 interrupted

examples:
  mcp_invoke call echo text=hello -- python3 fake_server.py
  mcp_invoke tools --url https://mcp.example.com/mcp --bearer-env MCP_TOKEN"""

_ELICIT_MODES = ("interactive", "defaults", "answers", "decline", "cancel")


class _Parser(argparse.ArgumentParser):
    out = None  # the _Output that --help and --version print to
    # argparse makes a formatter for each option added, only to check it, and
    # a formatter asks the terminal for its width (importing shutil): a cold
    # start's milliseconds. Until help or usage is written, one formatter of
    # this width checks them all.
    width = 80
    _checker = None

    def _get_formatter(self):
        if self.width is None:
            return self.formatter_class(prog=self.prog)
        if self._checker is None:
            self._checker = self.formatter_class(prog=self.prog, width=self.width)
        return self._checker

    def format_usage(self):
        self.width = None  # the terminal's, as argparse finds it
        return super(_Parser, self).format_usage()

    def format_help(self):
        self.width = None
        return super(_Parser, self).format_help()

    def _print_message(self, message, file=None):
        # argparse would drop a failed write (a full disk) and exit 0.
        if message and self.out is not None and file is sys.stdout:
            self.out.write(message)
        else:
            super(_Parser, self)._print_message(message, file)

    def error(self, message):
        if message.startswith("the following arguments are required: COMMAND"):
            message = "no command given; one of: " + ", ".join(sorted(_COMMANDS))
        elif message.startswith("unrecognized arguments: -") and (
                self.words[self.words.index("--") + 1:][:1] in (["call"], ["schema"])):
            raise UsageError("%s; a tool whose name begins with '-' is named with --tool: "
                             "call --tool=%s ARGS..." % (message, message.split()[2]))
        raise UsageError(message + " (see --help)")

    def parse_args(self, args=None, namespace=None):
        self.words = list(args) + ["--"]  # for error(): options, "--", the command's words
        return super(_Parser, self).parse_args(args, namespace)


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= _MAX_SECONDS:
        raise argparse.ArgumentTypeError("expected a positive number of seconds up to %d "
                                         "(a year), got %r" % (_MAX_SECONDS, text))
    return value


def _positive_int(text):
    if not re.match(r"[0-9]{1,9}\Z", text) or int(text) == 0:
        raise argparse.ArgumentTypeError("expected a positive whole number, got %r" % text)
    return int(text)


def _byte_count(text):
    match = re.match(r"([0-9]+)([kKmMgG]?)i?[bB]?\Z", text)
    if not match or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError("expected a positive byte count like 1048576 or 64M, "
                                         "got %r" % text)
    return int(match.group(1)) * 1024 ** " KMG".index(match.group(2).upper() or " ")


_VERSION_LINE = "mcp_invoke " + __version__


# Every option, once (CLI.md "Diagnostics"): its flags, its argparse settings,
# its group in --help, the commands it is for (None: any), and what it means,
# for each of them where it means something else to each. The parser, --help,
# each COMMAND --help and the "--X is for Y" checks are made from it. "loose":
# shown with its commands, accepted with any.
_Option = collections.namedtuple("_Option", "flags spec group commands help loose")


def _opt(flags, group, help, commands=None, loose=False, **spec):
    return _Option(tuple(flags.split()), spec, group, commands, help, loose)


_OPTIONS = (
    _opt("--timeout", "limits", "seconds each request may go without an answer or progress "
         "(default %g)" % DEFAULT_TIMEOUT, type=_positive_float, default=DEFAULT_TIMEOUT,
         metavar="SECONDS"),
    _opt("--max-bytes", "limits", "largest message accepted from the server, e.g. 1048576 "
         "or 64M (default 64M)", type=_byte_count, default=DEFAULT_MAX_BYTES, metavar="N"),
    _opt("--max-time", "limits", "most seconds a request may take even while it reports "
         "progress, a task's whole wait included (default %d times --timeout)"
         % MAX_TIME_FACTOR, type=_positive_float, metavar="SECONDS"),
    _opt("--json", "output", "print the result as the spec's JSON object",
         action="store_true"),
    _opt("--tool", "command", "the tool, given as an option: call --tool=-e ARGS... calls a "
         "tool whose name begins with '-'", ("call", "schema"), metavar="NAME"),
    _opt("--detach", "command", "a tool the server runs as a task is not waited for; print "
         "its id (task wait ID waits later)", ("call",), action="store_true"),
    _opt("--no-validate", "command", "send arguments without checking them against the "
         "tool's inputSchema", ("call",), loose=True, action="store_true"),
    _opt("--cache-ttl", "command", "keep a legacy server's tool list this long for call and "
         "schema (default: not at all)", ("call", "schema"), loose=True,
         type=_positive_float, metavar="SECONDS"),
    _opt("--refresh", "command", "list every server afresh (by default a tool list made in "
         "the last hour will do)", ("search",), action="store_true"),
    _opt("--count", "command", {"watch": "stop after N updates",
                                "search": "show the best N tools (default %d)"
                                % _SEARCH_COUNT}, ("watch", "search"),
         type=_positive_int, metavar="N"),
    _opt("--tools", "command", "the tool list, each time it changes", ("watch",),
         action="store_true", dest="watch_tools"),
    _opt("--out", "command", {"skill": "write DIR/NAME/SKILL.md instead of printing the "
                                       "skill",
                              "skills": "skills get: write every file of the skill under "
                                        "DIR/SERVER/PATH/"},
         ("skill", "skills"), dest="skill_out", metavar="DIR"),
    _opt("--allow-dynamic", "command", "skills get: read a skill the server gives no file list "
         "for (unverified)", ("skills",), action="store_true"),
    _opt("--check", "command", "compare the skill(s) in DIR with the server now (exit 7 if "
         "stale)", ("skill",), dest="skill_check", metavar="DIR"),
    _opt("--bin", "command", "the directory of the launcher (default ~/.local/bin)",
         ("install",), metavar="DIR"),
    _opt("--name", "command", "the launcher's name (default mcp-invoke)", ("install",),
         metavar="NAME"),
    _opt("--idle", "command", "session start: end the session after this long without a "
         "request (default %d)" % _IDLE, ("session",), type=_positive_float,
         metavar="SECONDS"),
    _opt("--all", "command", {"tools": "the tools of every configured server, as "
                                       "server__tool",
                              "search": "every configured server (the default)",
                              "skill": "a skill for each configured server (with --out)",
                              "skills": "the skills of every configured server",
                              "session": "session stop: every session"},
         ("tools", "search", "skill", "skills", "session"), action="store_true",
         dest="all_servers"),
    _opt("--env", "server", "give the server NAME=VALUE, or pass NAME through from this "
         "environment", action="append", default=[], metavar="NAME[=VALUE]"),
    _opt("--inherit-env", "server", "pass this whole environment to the server (default: "
         "an allowlist)", action="store_true"),
    _opt("--cwd", "server", "the server's working directory", metavar="DIR"),
    _opt("--config", "server", "an MCP config file (mcpServers or VS Code servers)",
         metavar="FILE"),
    _opt("--server", "server", "run this server from the config files found (see servers), "
         "or --config FILE", metavar="NAME"),
    _opt("--session", "server", "go through keep-alive session NAME (see session start): no "
         "start, no handshake", metavar="NAME"),
    _opt("--protocol-version", "server", "pin this protocol version (and so its era) and "
         "skip the probe", metavar="V"),
    _opt("--url", "HTTP", "reach the server over Streamable HTTP at URL instead of running "
         "a command", metavar="URL"),
    _opt("--header", "HTTP", "send this HTTP header (repeatable; ${VAR} expands from this "
         "environment)", action="append", default=[], metavar="'NAME: VALUE'"),
    _opt("--bearer-env", "HTTP", "send Authorization: Bearer with the token in environment "
         "variable NAME", metavar="NAME"),
    _opt("--cacert", "HTTP", "trust the CA certificates in FILE (HTTPS)", metavar="FILE"),
    _opt("--insecure", "HTTP", "do not verify the server's TLS certificate (HTTPS; warns)",
         action="store_true"),
    _opt("--oauth-client-id", "OAuth", "a client registered with the server's authorization "
         "server (instead of registering one)", metavar="ID"),
    _opt("--oauth-client-secret", "OAuth", "that client's secret (others see it in ps; "
         "--oauth-client-secret-env does not show it)", metavar="S"),
    _opt("--oauth-client-secret-env", "OAuth", "that client's secret, from environment "
         "variable NAME", metavar="NAME"),
    _opt("--oauth-client-metadata-url", "OAuth", "use this Client ID Metadata Document URL "
         "as the client id where the authorization server takes them", metavar="URL"),
    _opt("--oauth-headless", "OAuth", "read the code from the authorization endpoint's "
         "redirect, with no person (pre-approved clients)", action="store_true"),
    _opt("--oauth-listen", "OAuth", "catch the browser's redirect on 127.0.0.1 instead of "
         "asking for it", action="store_true"),
    _opt("--oauth-grant", "OAuth", "without a person: client_credentials, or jwt-bearer "
         "(enterprise identity provider)", choices=("client_credentials", "jwt-bearer"),
         metavar="GRANT"),
    _opt("--oauth-private-key-file", "OAuth", "authenticate the client with a JWT signed by "
         "this key (EC P-256 or RSA)", metavar="PEM"),
    _opt("--oauth-signing-alg", "OAuth", "ES256 or RS256 (default: from the key)",
         choices=("ES256", "RS256"), metavar="ALG"),
    _opt("--oauth-idp-token-endpoint", "OAuth", "jwt-bearer: the identity provider's token "
         "endpoint", metavar="URL"),
    _opt("--oauth-idp-client-id", "OAuth", "jwt-bearer: our id at the identity provider",
         metavar="ID"),
    _opt("--oauth-idp-id-token", "OAuth", "jwt-bearer: the ID token to exchange (others see "
         "it in ps; prefer --oauth-idp-id-token-env)", metavar="T"),
    _opt("--oauth-idp-id-token-env", "OAuth", "jwt-bearer: the ID token, from environment "
         "variable NAME", metavar="NAME"),
    _opt("--oauth-scope", "OAuth", "ask for these scopes (space-separated) instead of what "
         "discovery finds", metavar="S"),
    _opt("--oauth-cache", "OAuth", "the token file (default "
         "$XDG_STATE_HOME/mcp_invoke/oauth.json)", metavar="PATH"),
    _opt("--no-oauth-cache", "OAuth", "keep tokens for this run only", action="store_true"),
    _opt("--root", "answering", "offer PATH as a root (repeatable); without it no roots are "
         "declared", action="append", default=[], metavar="PATH"),
    _opt("--elicit", "answering", "answer elicitation: interactive (default on a terminal), "
         "defaults, answers FILE, decline, cancel (default otherwise)", nargs="+",
         metavar=("MODE", "FILE")),
    _opt("--sampling-command", "answering", "answer sampling by piping the request to CMD, "
         "which prints the result", metavar="CMD"),
    _opt("--sampling-tools", "answering", "the --sampling-command handles tool use: declare "
         "sampling.tools (without it a sampling request with tools is refused)",
         action="store_true"),
    _opt("--log-level", "output", "ask the server for log messages from LEVEL up (%s)"
         % ", ".join(LOG_LEVELS), choices=LOG_LEVELS, metavar="LEVEL"),
    _opt("--save-dir", "output", "write image, audio and blob content to files in DIR",
         metavar="DIR"),
    _opt("--max-output", "output", "print at most CHARS characters of the output, then a "
         "line naming the file that holds all of it (in --save-dir, or the temp dir)",
         type=_positive_int, metavar="CHARS"),
    _opt("--events", "output", "stdout as JSON Lines events: progress, log, warning, task, "
         "changed, then result or error", action="store_true"),
    _opt("--trace", "output", "write every frame, both ways, to FILE as JSON Lines",
         metavar="FILE"),
    _opt("-v --verbose", "output", "relay the server's stderr and report every oddity",
         action="store_true"),
    _opt("-q --quiet", "output", "no warnings, logs or progress", action="store_true"),
    _opt("--allow-tools", "trust", "call and list only the tools whose names match "
         "(fnmatch; repeatable)", action="append", default=[], metavar="GLOB[,GLOB]"),
    _opt("--deny-tools", "trust", "never call or list these tools (repeatable; wins over "
         "--allow-tools)", action="append", default=[], metavar="GLOB[,GLOB]"),
    _opt("--read-only", "trust", "call only tools the server annotates readOnlyHint: true",
         action="store_true"),
    _opt("--pin", "trust", "compare the server with FILE (made by 'pin FILE') first; exit 7 "
         "if it differs", metavar="FILE"),
    _opt("--strict", "trust", "exit 4 on structuredContent that fails the tool's "
         "outputSchema, and on a request the server's capabilities do not cover (not sent)",
         action="store_true"),
    _opt("--no-cache", "trust", "do not read or write the remembered era and tool lists of "
         "servers", action="store_true"),
)

# The groups of --help, in order.
_OPTION_GROUPS = (("command", "options of one command (COMMAND --help shows a command's)"),
                  ("limits", "time and size limits"), ("server", "the server"),
                  ("HTTP", "remote servers (Streamable HTTP)"), ("OAuth", "OAuth"),
                  ("answering", "answering the server"), ("output", "output and diagnostics"),
                  ("trust", "trust and caches"))


def _option_help(option, command=None):
    """What ``option`` means, to ``command`` or (None) to all its commands."""
    if not isinstance(option.help, dict):
        return option.help
    if command is not None:
        return option.help[command]
    return "; ".join("%s: %s" % (name, text) for name, text in option.help.items())


def _build_parser(out=None):
    parser = _Parser(prog="mcp_invoke", usage=_USAGE, description=_DESCRIPTION % _command_help(),
                     epilog=_EPILOG, allow_abbrev=False,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.out = out
    parser.add_argument("command", choices=sorted(_COMMANDS), metavar="COMMAND",
                        help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    groups = dict((name, parser.add_argument_group(title)) for name, title in _OPTION_GROUPS)
    for option in _OPTIONS:
        text = _option_help(option)
        if option.commands is not None and not isinstance(option.help, dict):
            text = "%s: %s" % (", ".join(option.commands), text)
        groups[option.group].add_argument(*option.flags, help=text, **option.spec)
    parser.add_argument("--version", action="version", version=_VERSION_LINE)
    return parser


def _for_its_commands(parser, args):
    """UsageError for an option given to a command it is not for (see _OPTIONS)."""
    actions = dict((a.option_strings[-1], a) for a in parser._actions if a.option_strings)
    for option in _OPTIONS:
        action = actions[option.flags[-1]]
        if (option.commands is None or option.loose or args.command in option.commands
                or getattr(args, action.dest) == action.default):
            continue
        if option.flags[-1] == "--all":  # said as a command with no --all form (CLI.md)
            raise UsageError("%s has no --all form: it talks to one server; pick one with "
                             "--server NAME%s" % (args.command, ", or name the tool as "
                                                  "SERVER__TOOL" if args.command in
                                                  ("call", "schema") else ""))
        raise UsageError("%s is for %s, not %s" % (option.flags[-1], " and ".join(
            option.commands), args.command))


def _help_asked(ours):
    """The command whose help ``ours`` (options, "--", words) asks for, or None
    (--help alone, or help alone, is the overview's)."""
    options, words = ours[:ours.index("--")], ours[ours.index("--") + 1:]
    if words[:1] == ["help"]:
        if len(words) == 1:
            options.append("--help")  # the overview, as argparse prints it
            ours[:] = options + ["--", "tools"]
            return None
        if words[1] not in _COMMANDS:
            raise UsageError("help takes a command, one of: %s" % ", ".join(sorted(_COMMANDS)))
        return words[1]
    if ("--help" in options or "-h" in options) and words[:1] and words[0] in _COMMANDS:
        return words[0]
    return None


def _command_usage(name):
    """``COMMAND --help`` (and ``help COMMAND``): the command's synopsis, its own
    options, one example (CLI.md "Diagnostics")."""
    import textwrap  # lazy: help only
    command = _COMMANDS[name]
    lines = ["usage: mcp_invoke [OPTIONS] %s%s" % (
        command.help[0][0] or name, "" if command.clients == 0 else " SERVER")]
    if command.clients:
        lines.append("  SERVER: -- SERVER_CMD [ARGS...], --url URL, --server NAME or "
                     "--session NAME")
    lines += ["", _command_help([command])]
    own = [o for o in _OPTIONS if o.commands is not None and name in o.commands]
    if own:
        lines += ["", "options of %s:" % name]
    for option in own:
        metavar = option.spec.get("metavar")
        flag = ", ".join(option.flags) + (" " + metavar if isinstance(metavar, str) else "")
        lines += textwrap.wrap(_option_help(option, name), 79, initial_indent="  %-22s "
                               % flag, subsequent_indent=" " * 25)
    lines += ["", "and the global options (limits, the server, HTTP, OAuth, answering,",
              "output, trust): see --help", "", "example:", "  " + command.example]
    return "\n".join(lines) + "\n"


def _valued(parser):
    """The options that take a value, as the parser knows them (its actions)."""
    return frozenset(option for action in parser._actions if action.nargs != 0
                     for option in action.option_strings)


def _split_argv(argv, valued):
    """Our options first, then the command and its arguments; the server's argv apart.

    ``valued``: the options that take a value, which moves with them."""
    if "--" in argv:
        cut = argv.index("--")
        ours, server = argv[:cut], argv[cut + 1:]
    else:
        ours, server = argv, []
    options, rest = [], []
    i = 0
    while i < len(ours):
        token = ours[i]
        if token.startswith("-") and token != "-":
            # --elicit answers FILE is the one option with two words.
            count = (2 if token == "--elicit" and ours[i + 1:i + 2] == ["answers"]
                     else 1 if token in valued else 0)
            options.extend(ours[i:i + 1 + count])
            i += count
        else:
            rest.append(token)
        i += 1
    return options + ["--"] + rest, server


def _server_env(specs, environ):
    """--env NAME=VALUE and --env NAME (pass-through) as a dict, and unset names."""
    env, missing = {}, []
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not name:
            raise UsageError("--env needs NAME=VALUE or NAME, got %r" % spec)
        if sep:
            env[name] = value
        elif name in environ:
            env[name] = environ[name]
        else:
            missing.append(name)
    return env, missing


# ---------------------------------------------------------------------------
# Trust: the tool policy
# ---------------------------------------------------------------------------

class _Refused(MCPError):
    """Refused by the trust policy (--allow-tools, --deny-tools, --read-only, a
    pin): no tools/call was sent. ``detail``: lines that show why (a diff)."""

    exit_code = 7

    def __init__(self, message, detail=()):
        MCPError.__init__(self, message)
        self.detail = list(detail)


class _ToolPolicy(object):
    """Which tools may be listed and called (CLI.md "Trust"): names matched by
    --allow-tools (when given) and not by --deny-tools, which wins; under
    --read-only, only tools annotated readOnlyHint: true may be called. The
    annotations are the server's hints, not guarantees (server/tools, "Tool
    Annotations"): they narrow what is called, they prove nothing."""

    def __init__(self, allow, deny, read_only):
        self.allow = self._globs("--allow-tools", allow)
        self.deny = self._globs("--deny-tools", deny)
        self.read_only = bool(read_only)
        self.active = bool(self.allow or self.deny or self.read_only)

    @staticmethod
    def _globs(option, specs):
        """The patterns given; an option without one (an unset $VAR) is exit 2,
        never a policy that lets everything through."""
        globs = []
        for spec in specs:
            given = [g.strip() for g in spec.split(",") if g.strip()]
            if not given:
                raise UsageError("%s %s: no tool name pattern in it" % (option, _show(spec)))
            globs += given
        return globs

    def _named(self, name):
        """Why the name is outside the policy, or None."""
        import fnmatch  # lazy: only with a policy
        name = name if isinstance(name, str) else ""
        for glob in self.deny:
            if fnmatch.fnmatchcase(name, glob):
                return "--deny-tools %s" % glob
        if self.allow and not any(fnmatch.fnmatchcase(name, g) for g in self.allow):
            return "--allow-tools %s" % ",".join(self.allow)
        return None

    def shows(self, tool):
        """Whether ``tools`` lists it: a tool the policy would not call is hidden."""
        return not self.active or self.refusal(_dict(tool), _dict(tool).get("name")) is None

    def refusal(self, tool, name):
        """Why calling the tool (its tools/list entry, or None if the server
        lists none) is refused, or None."""
        named = self._named(name)
        if named is not None:
            return "tool %r is outside the tool policy (%s)" % (name, named)
        if not self.read_only:
            return None
        annotations = _dict(tool).get("annotations")
        if tool is None or _dict(annotations).get("readOnlyHint") is not True:
            return "--read-only: tool %r is not annotated readOnlyHint: true (%s)" % (
                name, "the server lists no tools" if tool is None else "its annotations: %s"
                % ("none" if annotations is None else _cut(json.dumps(
                    annotations, sort_keys=True), 200)))
        return None

    def check(self, tool, name):
        """_Refused (exit 7) if the call may not go, before it is sent."""
        if self.active:
            why = self.refusal(tool, name)
            if why is not None:
                raise _Refused("refused by the trust policy: %s" % why)


# The requests a client sends a server (both revisions): under a policy a batch
# sends no other, so no spelling of tools/call a lenient server takes slips by.
_CLIENT_METHODS = frozenset((
    "ping", "tools/list", "tools/call", "resources/list", "resources/templates/list",
    "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list",
    "prompts/get", "completion/complete", "logging/setLevel", "server/discover",
    "subscriptions/listen"))


class _BatchGuard(object):
    """What each line of a batch is checked against before it is sent: the tool
    policy, and the pin; both follow the server's changes mid-session (CLI.md
    "Mid-session changes"): when it says a list changed, the lines not yet sent
    are checked against a new listing. Under --pin, a change refuses every later
    line (exit 7); without one, it is a warning naming the tools changed."""

    def __init__(self, client, ctx):
        self.client, self.ctx = client, ctx
        self.refused = None  # the error every later line ends with
        self.tools = None  # under a policy: the tools by name (None: the server lists none)
        self.known = None  # the tools as a pin records them, to name what changed
        reported = [kind for kind in ("tools", "prompts", "resources")
                    if _dict(client.capabilities.get(kind)).get("listChanged") is True]
        if ctx.pinned is not None and client.era == "modern" and reported:
            try:  # 2026-07-28: changes are reported only when asked for
                client.track_changes(reported)
                # What changed between --pin's listing and the subscription: seen too.
                client.list_changed.update(reported)
            except MCPError as e:
                ctx.diag.warning("changes the server makes during the batch go unnoticed: %s"
                                 % e, "pin")
        tools = _dict(client.capabilities.get("tools"))
        if ctx.policy.active or (tools.get("listChanged") is True and client.era == "legacy"):
            self._list_tools(ctx.listed.pop("tools/list", None))

    def problem(self, method, params):
        """The error the line ends with, unsent, or None."""
        if self.client.list_changed and self.refused is None:
            self._relist()
        if self.refused is not None:
            return self.refused
        if self.ctx.policy.active:
            return _policy_problem(self.ctx.policy, self.tools, method, params)
        return None

    def finish(self):
        """After the last line: a change no line was checked against is reported
        all the same. True when the batch stands refused (under --pin)."""
        if self.client.list_changed and self.refused is None:
            self._relist()
        return self.refused is not None

    def _relist(self):
        changed = set(self.client.list_changed)
        self.client.list_changed.clear()  # what comes during the listing is noticed again
        listed = {}
        if self.ctx.pinned is not None:
            changes, diffs = _pin_changes(self.ctx.pinned, _snapshot(self.client, listed))
            if changes:
                self.refused = _Refused("pin mismatch (changed during the batch): "
                                        + "; ".join(changes))
                self.ctx.diag.warning("the server changed during the batch; the lines not yet "
                                      "sent are refused: %s" % "; ".join(changes), "pin")
                self.ctx.diag.block(diffs)
        if "tools" not in changed or self.refused is not None:
            return
        known = self.known
        self._list_tools(listed.get("tools/list"))  # under --pin, the one compared
        if known is not None and self.known is not None and self.ctx.pinned is None:
            changes, _ = _entry_changes(_PINNED[0], known, self.known)
            if changes:
                self.ctx.diag.warning("the server changed its tools during the batch: %s"
                                      % "; ".join(changes), "changed")

    def _list_tools(self, result=None):
        try:
            if result is None and self.client.undeclared("tools/list"):
                raise ServerError("no tools capability")  # nothing to ask
            result = result or self.client.list_all("tools/list")
        except ServerError:
            self.tools = self.known = None
            return
        listed = [_dict(t) for t in result["tools"]]
        self.tools = {}
        for tool in listed:  # a name listed twice, differently, maps to None: refused
            name = tool.get("name")
            if isinstance(name, str):
                self.tools[name] = tool if self.tools.get(name, tool) == tool else None
        try:
            self.known = _pin_entries(_PINNED[0], listed)
        except ProtocolError:
            self.known = None


def _policy_problem(policy, tools, method, params):
    """The error a batch line ends with under the policy, or None: a method no
    client sends is refused, an unknown tool is exit 3 as for call, a refused
    one exit 7; nothing is sent."""
    if method not in _CLIENT_METHODS:
        return _Refused("refused by the trust policy: %s is not a method mcp_invoke sends "
                        "under a tool policy" % _show(method))
    if method != "tools/call":
        return None
    name = _dict(params).get("name")
    if not isinstance(name, str):
        return UsageError("tools/call needs a string params.name, not %s" % _show(name))
    if tools is not None and name not in tools:
        return ServerError("unknown tool %r%s" % (name, _suggest(
            name, [n for n, t in tools.items() if t is None or policy.shows(t)])))
    if tools is not None and tools[name] is None:
        return _Refused("refused by the trust policy: the server lists tool %r more than "
                        "once, differently" % name)
    why = policy.refusal(None if tools is None else tools[name], name)
    return None if why is None else _Refused("refused by the trust policy: %s" % why)


# ---------------------------------------------------------------------------
# Trust: pinning what the server offers
# ---------------------------------------------------------------------------

# What a pin records of each kind of item (CLI.md "Trust"): (the pin file's
# key, the word for one, the list method, its result's key, the field that
# names one, the fields recorded with how a change to each is named).
_PINNED = (
    ("tools", "tool", "tools/list", "tools", "name", (
        ("name", "name"), ("title", "title"), ("description", "description"),
        ("inputSchema", "input schema"), ("outputSchema", "output schema"),
        ("annotations", "annotations"))),
    ("prompts", "prompt", "prompts/list", "prompts", "name", (
        ("name", "name"), ("title", "title"), ("description", "description"),
        ("arguments", "arguments"))),
    ("templates", "template", "resources/templates/list", "resourceTemplates", "uriTemplate", (
        ("uriTemplate", "uri template"), ("name", "name"), ("description", "description"),
        ("mimeType", "mime type"))),
    # A skill by its URI (a name is not unique), with every file's digest, or "dynamic".
    ("skills", "skill", "skills/list", "skills", "uri", (
        ("uri", "uri"), ("frontmatter", "front matter"), ("resources", "files"))),
)
# Sections a pin made before they were pinned lacks: not compared, and counted
# only where there are some.
_PIN_LATER = ("skills",)

def _digest(value):
    """The SHA-256 of a value's canonical JSON (sorted keys, no spaces, UTF-8)."""
    return _sha256()(_pin_json(value).encode("utf-8", "surrogatepass")).hexdigest()


def _pin_json(value):
    """A value's canonical JSON: what pins compare (Python's == takes 1 for true)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _snapshot(client, results=None):
    """What the server offers, as a pin: its name and version, its instructions,
    and every tool, prompt and resource template (all pages), each with its
    hash, and one hash over all of it but the version. ``results``: a dict
    that gets each list's whole result, by method."""
    info = client.server_info
    pin = {"server": {"name": info.get("name"), "version": info.get("version")},
           "instructions": client.instructions}
    for pinned in _PINNED:
        result = _offered(client, pinned[2], pinned[3])
        if results is not None:
            results[pinned[2]] = result
        pin[pinned[0]] = _pin_entries(pinned, result[pinned[3]])
    pin["sha256"] = _pin_digest(pin)
    return pin


def _listing_problem(pin, method, result, whole=True):
    """The _Refused for a list result that differs from the pin, or None.
    ``whole``: every item (else one page: only added and changed ones count)."""
    pinned = [p for p in _PINNED if p[2] == method]
    if not pinned or not isinstance(result.get(pinned[0][3]), list):
        return None
    try:
        entries = _pin_entries(pinned[0], result[pinned[0][3]])
    except ProtocolError as e:
        return _Refused("pin mismatch: %s" % e)
    old = pin[pinned[0][0]]
    if not whole:
        old = dict((name, entry) for name, entry in old.items() if name in entries)
    changes, diffs = _entry_changes(pinned[0], old, entries)
    if changes:
        return _Refused("pin mismatch: " + "; ".join(changes), detail=diffs)
    return None


def _pin_entries(pinned, items):
    """A pin's entries for one kind of item, from the items listed."""
    _, kind, method, _, ident, fields = pinned
    entries = {}
    for item in map(_dict, items):
        name = item.get(ident)
        if not isinstance(name, str):
            raise ProtocolError("%s lists a %s whose %s is not a string: %s" % (
                method, kind, ident, _show(name)), method)
        definition = dict((field, item[field]) for field, _ in fields if field in item)
        if name in entries and entries[name]["sha256"] != _digest(definition):
            raise ProtocolError("the server lists %s %r more than once, differently"
                                % (kind, name), method)
        entries[name] = {"sha256": _digest(definition), "definition": definition}
    return entries


def _pin_digest(pin):
    """The hash of a whole pin: the server's name, the instructions and every item's hash."""
    covered = {"server": _dict(pin.get("server")).get("name"),
               "instructions": pin.get("instructions")}
    for section, _, _, _, _, _ in _PINNED:
        if section in _PIN_LATER and section not in pin:
            continue
        covered[section] = dict((name, _dict(entry).get("sha256"))
                                for name, entry in _dict(pin.get(section)).items())
    return _digest(covered)


def _offered(client, method, key):
    """Every item of a list; none, unasked, where the server declares no such
    list (basic/lifecycle: only what was negotiated is used)."""
    if client.undeclared(method):
        return {key: []}
    return client.list_all(method)


def _pin_text(pin):
    """A pin file's text: stable (sorted keys, two-space indent, a final newline)
    and readable in a diff, with hidden and control characters as JSON escapes."""
    text = json.dumps(pin, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    return _json_text(text, u"%s|%s" % (_JSON_UNSAFE, _HIDDEN))


def _load_pin(path):
    """--pin FILE, read and checked before the server starts: exit 2 if it is
    missing or not a pin file (nothing is trusted silently)."""
    if not os.path.exists(path):
        raise UsageError("--pin %s: no such file; create it with 'mcp_invoke pin %s' and "
                         "the server's options" % (path, path))
    text = _read_file(path, "--pin " + path, wait=2.0)
    try:
        pin = _json_loads(text)  # first: NaN, huge numbers and deep nesting refused
        json.loads(text, object_pairs_hook=_unique_keys)
        problem = _pin_problem(pin)
    except ValueError as e:
        problem = "not valid JSON: %s" % e
    if problem:
        raise UsageError("--pin %s is not a pin file of mcp_invoke: %s" % (path, problem))
    return pin


def _unique_keys(pairs):
    """An object of a pin file: a key given twice would hide one of its values."""
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("the key %s appears twice in one object" % _show(
            next(key for key in keys if keys.count(key) > 1)))
    return dict(pairs)


def _pin_problem(pin):
    if not isinstance(pin, dict) or not isinstance(pin.get("server"), dict):
        return "it has no server object"
    for section, kind, _, _, _, _ in _PINNED:
        if section in _PIN_LATER and section not in pin:
            continue
        if not isinstance(pin.get(section), dict):
            return "it has no %s object" % section
        for name, entry in pin[section].items():
            entry = _dict(entry)
            if not isinstance(entry.get("definition"), dict):
                return "%s %r has no definition" % (kind, name)
            if entry.get("sha256") != _digest(entry["definition"]):
                return "the sha256 of %s %r is not that of its definition (edited?)" % (
                    kind, name)
    if pin.get("sha256") != _pin_digest(pin):
        return "its sha256 is not that of what it holds (edited?)"
    return None


def _pin_changes(pinned, current):
    """How the server differs from its pin: (the changes, as CLI.md names them;
    a unified diff of each changed item, as lines)."""
    changes, diffs = [], []
    if _pin_json(_dict(pinned["server"]).get("name")) != _pin_json(
            current["server"]["name"]):
        changes.append("server name changed")
        diffs += _diff("server name", pinned["server"].get("name"),
                       current["server"]["name"])
    if _pin_json(pinned.get("instructions")) != _pin_json(current["instructions"]):
        changes.append("instructions changed")
        diffs += _diff("instructions", pinned.get("instructions"), current["instructions"])
    for pinned_kind in _PINNED:
        if pinned_kind[0] not in pinned:  # pinned before such things were
            continue
        more, more_diffs = _entry_changes(pinned_kind, pinned[pinned_kind[0]],
                                          current[pinned_kind[0]])
        changes += more
        diffs += more_diffs
    return changes, diffs


def _entry_changes(pinned, old, new):
    """How one kind's entries changed: (changes, diff lines), as _pin_changes."""
    _, kind, _, _, _, fields = pinned
    changes, diffs = [], []
    for name in sorted(set(old) | set(new)):
        what = "%s %r" % (kind, name)
        if name not in new:
            changes.append(what + " removed")
        elif name not in old:
            changes.append(what + " added")
        elif _digest(old[name]["definition"]) != new[name]["sha256"]:
            before, after = old[name]["definition"], new[name]["definition"]
            changes += ["%s %s changed" % (what, label) for field, label in fields
                        if (field in before, _pin_json(before.get(field)))
                        != (field in after, _pin_json(after.get(field)))]
            diffs += _diff(what, before, after)
    return changes, diffs


def _diff(what, before, after):
    """A unified diff of two versions of an item, as lines: strings line by
    line, the rest as indented JSON with sorted keys."""
    import difflib  # lazy: only on a mismatch

    def lines(value):
        if isinstance(value, str):
            return value.splitlines() or [""]
        if not isinstance(value, dict):
            return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False).splitlines()
        shown = []
        for key in sorted(value):
            if isinstance(value[key], str):
                shown += ["%s:" % key] + ["  " + line for line in value[key].splitlines()]
            else:
                shown += ("%s: %s" % (key, json.dumps(value[key], sort_keys=True, indent=2,
                                                       ensure_ascii=False))).splitlines()
        return shown
    diff = [line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS] + "..."
            for line in difflib.unified_diff(lines(before), lines(after), "pinned " + what,
                                             "server " + what, lineterm="")]
    if len(diff) > _DIFF_LINES:  # a megabyte of description need not all scroll by
        diff[_DIFF_LINES:] = ["... (%d more lines)" % (len(diff) - _DIFF_LINES)]
    return diff


def _enforce_pin(client, ctx, path, pinned):
    """--pin FILE: the server compared with its pin before anything else is
    sent; any difference is exit 7, with a line naming each change and a diff."""
    current = _snapshot(client, ctx.listed)
    changes, diffs = _pin_changes(pinned, current)
    if changes:
        raise _Refused("pin mismatch: " + "; ".join(changes), detail=diffs)
    old, new = _dict(pinned["server"]).get("version"), current["server"]["version"]
    if _pin_json(old) != _pin_json(new):
        ctx.diag.note("server version changed from %s to %s since %s was pinned; the pin "
                      "still holds" % (_show(old), _show(new), path))
    return current


def _check_pin_path(path):
    """pin FILE: where it goes must take a file, checked before the server starts."""
    if not path:
        raise UsageError("pin needs a file name")
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.islink(path):
        raise UsageError("pin %s: it is a symlink, which is not followed; name the file "
                         "it points to" % path)
    if os.path.isdir(path) or (os.path.exists(path) and not os.path.isfile(path)):
        raise UsageError("pin %s: not a regular file" % path)
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise UsageError("pin %s: cannot write in %s" % (path, directory))


def _write_pin(path, text, mode=None):
    """The pin, replaced whole: a reader never sees half of one."""
    try:
        _write_whole(_named(path), text, private=False, mode=mode)
    except (IOError, OSError) as e:
        raise UsageError("cannot write the pin %s: %s" % (path, e.strerror or e))


# ---------------------------------------------------------------------------
# Many servers: tools --all, server__tool
# ---------------------------------------------------------------------------

# Between a server's name and its tool's (the integration rules' namespacing):
# no server can shadow another's tool.
_SEPARATOR = "__"


def _many_servers(args, server):
    """tools --all, or tools --server A,B (two or more); search, unless given
    one server (--, --url, --session, --server NAME)."""
    if args.command == "search":
        one = [flag for flag, value in (("--", server), ("--url", args.url),
                                        ("--session", args.session)) if value]
        if args.all_servers and (one or args.server):
            raise UsageError("search --all looks through every configured server; it takes "
                             "no %s" % (one or ["--server"])[0])
        return not one and (args.server is None or "," in args.server)
    if args.command == "skill":  # --check DIR alone: the configured servers it has skills of
        return args.all_servers or "," in (args.server or "") or (
            args.skill_check is not None and not (server or args.url or args.session
                                                  or args.server or args.config))
    return args.command in ("tools", "skills") and (args.all_servers
                                                    or "," in (args.server or ""))


def _namespaced(args, server, diag):
    """call (or schema) server__tool without a server given: that server, that
    tool, and "server__" returned (else ""), for what names the tool back.
    With a server given, a name whose prefix is a configured server is exit 2
    (CLI.md), any other is the tool's own name."""
    name = args.args[0] if args.command in ("call", "schema") and args.args else ""
    prefix, separator, tool = name.partition(_SEPARATOR)
    if not separator or not prefix or not tool:
        return ""
    given = [flag for flag, value in (("--", server), ("--url", args.url),
                                      ("--server", args.server), ("--session", args.session))
             if value]
    found = _found_servers(_cwd(), os.environ, lambda text: None, args.config)
    names = _server_names(found)
    # a___b is server a's tool _b, or server a_'s tool b: each "__" may be the one.
    splits = [(name[:i], name[i + 2:]) for i in range(1, len(name) - 2)
              if name.startswith(_SEPARATOR, i) and name[:i] in names]
    if len(splits) > 1:
        raise UsageError("%s names %s; give --server NAME and the tool's own name" % (
            name, " or ".join("tool %r of server %r" % (tool, server)
                              for server, tool in splits)))
    if splits:
        prefix, tool = splits[0]
    if given and prefix in names:
        raise UsageError("%s names server %r's tool %r; give it without %s, or call %r "
                         "there" % (name, prefix, tool, given[0], tool))
    if given:
        return ""
    if prefix not in names:
        raise UsageError("%s: no configured server %r (known: %s)" % (
            name, prefix, ", ".join(names) if names else "none; see 'servers'"))
    args.server, args.args[0] = prefix, tool
    return prefix + _SEPARATOR


def _server_names(found, enabled=False):
    names = []
    for server in found:
        if server["name"] not in names and not (enabled and server["disabled"]):
            names.append(server["name"])
    return names


def _cmd_tools_many(args, ctx, server):
    """tools --all / --server A,B: every server listed at once, each tool as
    server__tool; a server that fails is a warning (exit 0 if any listed)."""
    if server or args.url:
        raise UsageError("tools %s lists configured servers; it takes no %s" % (
            "--all" if args.all_servers else "--server A,B", "--" if server else "--url"))
    names, found = _chosen_servers(args, ctx, "list")
    tools = [tool for _, tool in _tools_of(args, ctx, found, names)]
    return ctx.mode.listing({"tools": tools}, tools, _signature)


def _chosen_servers(args, ctx, verb):
    """The configured servers --all or --server A,B names, or all of them
    (enabled) with neither; and what _found_servers found."""
    if args.all_servers and args.server:
        raise UsageError("--all and --server exclude each other")
    if args.pin is not None:
        raise UsageError("--pin FILE pins one server; compare each with --server NAME")
    found = _found_servers(_cwd(), os.environ, ctx.diag.warning, args.config)
    names = (_server_names(found, enabled=True) if args.server is None else
             [n.strip() for n in args.server.split(",") if n.strip()])
    names = [n for i, n in enumerate(names) if n not in names[:i]]
    if not names:
        raise UsageError("no servers to %s: %s" % (verb, (
            "none is configured (see servers)" if args.server is None
            else "--server names none")))
    return names, found


def _tools_of(args, ctx, found, names, cached=False, own=None, hidden=True):
    """[(server name, tool as server__tool)] of the servers ``names``, listed at
    once (``cached``: from the tool-list cache where it holds them fresh); a
    server that fails is a warning, all of them failing the first one's error.
    ``hidden``: warn of hidden text in each (search warns of those it shows)."""
    outcomes = _listed_at_once(args, ctx, found, names, cached)
    tools, failures, shown_names = [], [], set()
    for name, outcome in zip(names, outcomes):
        if isinstance(outcome, MCPError):
            failures.append((name, outcome))
            continue
        if _SEPARATOR in name:
            ctx.diag.warning("server %r has %r in its name: its tools are listed, and "
                             "called only with --server" % (name, _SEPARATOR))
        for tool in map(_dict, outcome):
            if ctx.policy.shows(tool):
                shown = dict(tool, name="%s%s%s" % (name, _SEPARATOR, _shown_word(
                    tool.get("name"))))
                if shown["name"] in shown_names:
                    ctx.diag.warning("%s names tools of two servers; call each with --server "
                                     "NAME and its own name" % _show(shown["name"]))
                shown_names.add(shown["name"])
                if hidden:
                    ctx.hidden("tool %r" % shown["name"], shown)
                tools.append((name, shown))
                if own is not None:
                    own[id(shown)] = tool.get("name")
    if failures and len(failures) == len(names):
        for name, error in failures[1:]:
            ctx.diag.warning("server %r: %s" % (name, error))
        error = failures[0][1]
        error.message = "server %r: %s" % (failures[0][0], error.message)
        raise error
    for name, error in failures:
        ctx.diag.warning("server %r: %s" % (name, error))
    return tools


# A search is discovery (call checks the live list anyway): a tool list any
# command made this recently will do for it (CLI.md "Agents").
_SEARCH_LIST_AGE = 3600.0


def _listed_at_once(args, ctx, found, names, cached=False):
    """Each named server's tools (or the MCPError it failed with), listed at
    once (_at_once). ``cached``: a list the tool-list cache holds fresh for the
    era and version the server spoke last is taken from it and the server not
    started; what the others list is remembered, as call remembers it."""
    eras = (_EraCache(os.environ, ctx.diag.warning) if cached and not (args.no_cache or args.protocol_version)
            else None)
    entries = _clients_of(args, ctx, found, names, eras)
    caches, outcomes = [None] * len(names), [None] * len(names)
    for i, (client, options) in enumerate(entries):
        if eras is not None and isinstance(client, Client):
            caches[i] = _ToolCache(eras, eras.key(options, ctx.diag.redact), args.cache_ttl,
                                   options)
            # found: the server is not started
            outcomes[i] = None if args.refresh else caches[i].peek(_SEARCH_LIST_AGE)
    listed = [None] * len(names)  # (era, version, the whole tools/list result)

    def list_one(i, client):
        with client:
            why = _not_declared(client, "tools/list")
            if why is not None:
                ctx.diag.note(why)
            result = client.list_all("tools/list") if why is None else {"tools": []}
            listed[i] = (client.era, client.protocol_version, result)
            return result["tools"]
    ages = [cache.age for cache, outcome in zip(caches, outcomes)
            if outcome is not None and cache.age is not None]
    if ages:
        ctx.diag.note("tool lists from %s ago; --refresh lists afresh" % _age(max(ages), words=True))
    done = _at_once([client if outcomes[i] is None else outcomes[i]
                     for i, (client, _) in enumerate(entries)], list_one)
    for cache, had in zip(caches, listed):  # here, not in the threads: one file for all
        if cache is not None and had is not None:
            era, version, result = had
            cache.eras.remember(cache.key, era, version)
            cache.keep_listed(era, version, result)
    return done


def _clients_of(args, ctx, found, names, eras=None):
    """[(Client, its options) or (the MCPError making it failed with, None)]
    for each named server of ``found``, none started; the redactor holds the
    secrets of all. ``eras``: the era cache, whose version each starts with."""
    picked = [_pick_server(found, name) for name in names]  # an unknown name: exit 2 first
    entries, secrets = [], []
    for name, server in zip(names, picked):
        try:
            entry = _entry_from(server["file"], {name: server["entry"]}, name)
            options = _client_options(args, entry, ctx.diag)
            options["on_warning"] = lambda kind, text, name=name: ctx.diag.client_warning(
                kind, "server %r: %s" % (name, text))
            secrets += _secrets(options, entry)
            if eras is not None:
                options["remembered_version"] = eras.remembered(eras.key(
                    options, _Redactor(_secrets(options, entry))))
            entries.append((Client(**options), dict(options, name=name, file=entry["file"])))
        except MCPError as e:
            entries.append((e, None))
    ctx.diag.redact = _Redactor(secrets)
    return entries


def _at_once(clients, work):
    """``work(i, client)`` for each Client of ``clients``, each in a thread of
    its own (with the usual timeouts); what it returned, or the MCPError it
    raised, in order. What is not a Client stays as it is."""
    import threading  # lazy: only for several servers
    outcomes = list(clients)
    done = []  # the threads that have ended, as they say: see _stop_threads

    def run(i, client):
        try:
            outcomes[i] = work(i, client)
        except MCPError as e:
            outcomes[i] = e
        except Exception as e:  # a bug: one server's line, not a dead thread
            outcomes[i] = MCPError("internal error: %s: %s" % (type(e).__name__, e))
        finally:
            done.append(i)
    threads, started = [], [c for c in clients if isinstance(c, Client)]
    try:  # from the first start: a signal may come while the others are started
        for i, client in enumerate(clients):
            if isinstance(client, Client):
                thread = threading.Thread(target=run, args=(i, client))
                thread.daemon = True
                threads.append(thread)
                thread.start()
        for thread in threads:
            while thread.is_alive():  # in steps: Ctrl-C reaches this thread between them
                thread.join(0.05)
    except KeyboardInterrupt:
        _stop_threads(threads, started, done)
        raise
    return outcomes


def _stop_threads(threads, clients, done):
    """Ctrl-C while servers are listed at once: each server killed (again, for one
    that started meanwhile; none starts after) until every thread has closed
    its client itself and reaped its server (two threads must never wait on
    one server); a few SHUTDOWN_GRACE at most, for a loaded machine.

    Whether a thread has ended is what it says (``done``, the indexes of the
    ones that have), not Thread.is_alive(): a join that Ctrl-C interrupts can
    leave a live thread reported as ended."""
    deadline = _Deadline(4 * SHUTDOWN_GRACE)
    while True:
        for client in clients:
            client.abort()
        if len(done) >= len(threads) or deadline.passed():
            return
        for thread in threads:
            thread.join(0.02)


# ---------------------------------------------------------------------------
# Remembering: the era cache
# ---------------------------------------------------------------------------

class _EraCache(object):
    """Each server's era and version, remembered (CLI.md "The era cache"), so a
    legacy server that ignores the server/discover probe costs its wait once:
    eras.json in the cache's place (_cache_home), 0600 in a 0700 directory, keyed by the
    command line and working directory, or the URL. A cache: what cannot be
    read is empty, what cannot be written is dropped."""

    def __init__(self, environ, warn=None):
        self.path = os.path.join(_cache_home(environ), "eras.json")
        self.warn = warn  # told of a cache file that is not a regular file
        self._data = None  # read once a run

    @staticmethod
    def key(options, redact=None):
        """The server's key: its URL, or its command line and working directory,
        with the run's secrets (``redact``, a _Redactor) as *** (a ${VAR} may
        have brought one into the command: it is not kept on disk)."""
        if options.get("url") is not None:
            key = options["url"]
        else:
            key = json.dumps([options["command"], os.path.abspath(options.get("cwd") or
                                                                  _cwd())])
        return key if redact is None else redact(key)

    def load(self):
        if self._data is None:
            try:
                data = _json_loads((_read_kept(self.path, self.warn) or b"{}").decode("utf-8"))
            except ValueError:
                data = {}
            self._data = data if isinstance(data, dict) else {}
        return self._data

    def remembered(self, key):
        """The legacy version the server spoke last time, or None."""
        entry = _dict(self.load().get(key))
        return entry.get("version") if entry.get("era") == "legacy" else None

    def remember(self, key, era, version):
        data = self.load()
        if _dict(data.get(key)) == {"era": era, "version": version}:
            return
        data.pop(key, None)
        data[key] = {"era": era, "version": version}  # last: the most recent
        while len(data) > _ERAS_KEPT:  # the oldest go first
            data.pop(next(iter(data)))
        _write_private(self.path, data)


class _ToolCache(object):
    """A server's tool list, remembered beside its era (CLI.md "Tool lists,
    remembered"), for call and schema, which list the tools first: for as long
    as a 2026-07-28 server's ttlMs says, and --cache-ttl seconds (default 0: not
    at all) for a legacy one; for search, any list made in the last hour
    (SEARCH_LIST_AGE). A "private" list is kept for the same headers and
    environment only (server/utilities/caching), and never under OAuth, whose
    tokens change. One file per server, 0600; dropped when the server says its
    tools changed, when a pin fails, and when a name is not in it."""

    def __init__(self, eras, key, ttl, options):
        self.eras, self.key, self.options = eras, key, options
        self.ttl = ttl or 0.0
        self._path = None
        self.age = None  # seconds since the list peek found was made

    @property
    def path(self):
        """One file per server, named by a hash of its key and of the environment
        and headers it gets (two servers that differ only in those may list
        different tools), made when first needed: most commands never look,
        and a hash costs a cold start."""
        if self._path is None:
            name = _digest([self.key, self.options.get("env") or {},
                            self.options.get("headers") or {}])[:32]
            self._path = os.path.join(os.path.dirname(self.eras.path), "tools", name + ".json")
        return self._path

    @property
    def context(self):
        """The authorization context a "private" list is kept for (never under OAuth)."""
        if self.options.get("oauth") is not None:
            return None
        return _digest([self.options.get("headers") or {}, self.options.get("env") or {}])

    def tools(self, client):
        """The tools remembered for this server and version, adopted by the
        client; None if there are none, or none fresh."""
        tools = self._fresh(client.era, client.protocol_version)
        return None if tools is None else client.adopt_tools(tools)

    def peek(self, within=None):
        """The tools remembered, if fresh for the era and version the server
        spoke last time (the era cache's): known without starting it.
        ``within``: any list made in the last so many seconds will do (a
        search); ``age`` then says how old it is."""
        spoke = _dict(self.eras.load().get(self.key))
        return self._fresh(spoke.get("era"), spoke.get("version"), within)

    def _fresh(self, era, version, within=None):
        try:
            entry = _dict(_json_loads((_read_kept(self.path, self.eras.warn) or b"{}")
                                      .decode("utf-8")))
        except ValueError:
            return None
        expires, listed = entry.get("expires"), entry.get("listed")
        if within is not None:  # any list this recent, whatever its ttl
            expires = listed + within if isinstance(listed, float) else None
            self.age = time.time() - listed if isinstance(listed, float) else None
        elif era != "modern":  # this run's --cache-ttl decides
            expires = listed + self.ttl if self.ttl and isinstance(listed, float) else None
        if (version is None or entry.get("version") != version or not isinstance(
                entry.get("tools"), list) or not isinstance(expires, float)
                or expires <= time.time() or entry.get("scope") == "private"
                and entry.get("context") != self.context):
            return None
        return entry["tools"]

    def keep(self, client, result):
        self.keep_listed(client.era, client.protocol_version, result)

    def keep_listed(self, era, version, result):
        """Remember ``result``, a whole tools/list result of a server of ``era``
        speaking ``version``, for as long as it may be."""
        ttl = result.get("ttlMs") if era == "modern" else self.ttl * 1000
        scope = result.get("cacheScope")
        if scope == "private" and self.context is None:
            return self.drop()
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
            ttl = 0  # not fresh for call, yet a search may use it (CLI.md "Agents")
        now = time.time()
        entry = {"version": version, "tools": result["tools"], "listed": now,
                 "expires": now + min(float(ttl) / 1000, _MAX_SECONDS),
                 "scope": scope, "context": self.context if scope == "private" else None}
        _write_private(self.path, entry, os.path.dirname(self.eras.path))

    def drop(self):
        try:
            os.unlink(self.path)
        except OSError:
            pass


def _write_private(path, value, root=None):
    """A cache's JSON file, only its user's, replaced whole; what cannot be
    written is dropped. ``root``: the cache's own directory above the file's,
    held to the same (see _private_dir)."""
    try:
        if root is not None:
            _private_dir(root)
        _write_whole(path, json.dumps(value), durable=False)
    except (IOError, OSError, ValueError):
        pass


# ---------------------------------------------------------------------------
# Running one command: input, the client's options, the server
# ---------------------------------------------------------------------------

def _utf8_argv(argv):
    """The arguments as UTF-8 text, whatever the locale.

    Python 3.6 decodes them with the locale's codec, so under the C locale
    UTF-8 arrives as surrogate escapes; 3.7 coerces such locales to UTF-8
    (PEP 538, PEP 540). This branch can go when the floor is 3.7.
    """
    if sys.version_info >= (3, 7):
        return argv
    return [os.fsencode(a).decode("utf-8", "surrogateescape") for a in argv]


def _stand_in_streams():
    """/dev/null for a stdout or stderr that was closed when we started (``>&-``)."""
    closed = []
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            stand_in = open(os.devnull, "w")
            setattr(sys, name, stand_in)
            closed.append((name, stand_in))
    _utf8_stderr()
    return closed


# What stderr is written in. stdout is always UTF-8 with LF (_Output). POSIX:
# the locale's encoding, which is the terminal's. Windows: a console takes
# Unicode as it is; a pipe or file would get the ANSI code page and CR LF,
# so it gets UTF-8 and LF, as stdout does, whatever the code page.
if _WINDOWS:
    def _utf8_stderr():
        stream = sys.stderr  # lines end in LF, as on stdout and on POSIX, and go
        if hasattr(stream, "reconfigure"):  # out whole (3.8's is block-buffered)
            stream.reconfigure(encoding="utf-8", newline="\n", line_buffering=True)
else:
    def _utf8_stderr():
        pass


def _read_text(stream, errors="strict"):
    """All of stdin as UTF-8 text (the locale's codec may be ASCII on 3.6), within the limit.

    ``errors``: "surrogateescape" keeps invalid bytes for the caller to find
    (as U+DC80..U+DCFF); otherwise they are a UsageError, as JSON is UTF-8.
    """
    if stream is None:
        return ""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text stream of our caller's
        return _within_limit(stream.read(_INPUT_LIMIT + 1), "standard input")
    data = _within_limit(_read_up_to(buffer, _INPUT_LIMIT + 1), "standard input")
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise UsageError("standard input is not valid UTF-8: %s" % e)


def _read_line(stream):
    """A line of ``stream`` as text ("" at its end), bytes that are not UTF-8
    kept as surrogates for the caller to refuse (3.6 decodes stdin strictly);
    _TOO_LONG for a line over the input limit, the rest of which is read and
    dropped. The blocking reader (the shell, answers typed to a question);
    ``batch`` reads through _LineFeed, with the same limit."""
    buffer = getattr(stream, "buffer", None)
    source = stream if buffer is None else buffer  # else a text stream of our caller's
    line = source.readline(_INPUT_LIMIT + 2)
    end = line[-1:]
    if len(line) - (end in ("\n", b"\n")) > _INPUT_LIMIT:
        while end not in ("\n", b"\n", "", b""):
            end = source.readline(_READ_SIZE)[-1:]
        return _TOO_LONG
    return line if buffer is None else line.decode("utf-8", "surrogateescape")


def _check_utf8(words):
    """UsageError for a word that holds bytes that are not UTF-8 (kept as
    surrogates, PEP 383): JSON cannot carry them to the server."""
    for word in words:
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("argument %r is not valid UTF-8" % word)


def _run(argv, diag, out, started):
    if argv == ["--version"]:  # alone, it needs no parser, which costs more to build
        out.write(_VERSION_LINE + "\n")
        return 0
    parser = _build_parser(out)
    ours, server = _split_argv(argv, _valued(parser))
    if "--events" in ours:  # before parsing: a bad option is an error event too
        diag.events = _Events(out, diag)
    asked = _help_asked(ours)
    if asked is not None:  # COMMAND --help, help COMMAND: that command's page
        out.write(_command_usage(asked))
        return 0
    _check_utf8(ours)  # the server's own arguments go to it as bytes, whatever they hold
    try:
        args = parser.parse_args(ours)
    except SystemExit as e:  # --help and --version print and exit 0
        return e.code or 0
    args.options = ours[:ours.index("--")]  # the shell's, for each of its lines
    args.started = time.monotonic()  # what a whole command keeps to starts here (search)
    _check_args(args, parser)
    diag.verbose, diag.quiet = args.verbose, args.quiet
    saver = _Saver(_directory(args.save_dir), diag) if args.save_dir else None
    if args.max_output is not None:
        out.cut = _Cut(args.max_output, saver and saver.directory)
    ctx = _Context(out, diag, _isatty(out.stream), sys.stdin, saver, args.json,
                   _ToolPolicy(args.allow_tools, args.deny_tools, args.read_only), args.events)
    ctx.argv = argv  # the command line, for a session started on Windows
    ctx.started = started
    if args.command == "session":
        return _cmd_session(args, ctx, server)
    if _COMMANDS[args.command].clients == 0:  # servers: config files only
        return _COMMANDS[args.command].run(args, ctx)
    if _many_servers(args, server):
        return {"search": _cmd_search_many, "skill": _cmd_skill_many,
                "skills": _cmd_skills_many}.get(
            args.command, _cmd_tools_many)(args, ctx, server)
    ctx.tool_prefix = _namespaced(args, server, diag)
    if args.command == "auth" and args.args[0] != "login":  # the token file only
        return _auth_cached(args, ctx, server)
    if args.command == "call":  # bad arguments are exit 2 before the server starts
        args.arguments = _call_arguments(args.args[1:], sys.stdin, args.timeout)
    if args.command == "pin":
        _check_pin_path(args.args[0])
    if args.pin is not None:
        ctx.pinned, ctx.pin_path = _load_pin(args.pin), args.pin
    args.server_argv, args.entry = server, None  # what skill names
    if args.session is None:
        args.entry = _server_entry(args, server)
    options = (_session_options(args, server, diag) if args.session is not None
               else _client_options(args, args.entry, diag))
    secrets = _secrets(options, args.entry)
    diag.redact = _Redactor(secrets)
    if options.get("oauth") is not None:  # tokens and secrets, as they are obtained
        options["oauth"]["on_secret"] = diag.redact.add
    if args.command == "auth":
        if options.get("oauth") is None:
            raise UsageError("auth login is for a server reached over HTTP (--url URL), "
                             "without an Authorization header of your own")
        _auth_cache(args)  # --no-oauth-cache: refused before anything is sent
        args.auth_url = options["url"]
    trace = _open_trace(args.trace, diag)
    elicitor = _Elicitor(args.elicit, diag, sys.stdin, args.timeout)
    ctx.tasks.store = _TaskStore(os.environ, "session " + args.session if args.session
                                 else _EraCache.key(options, diag.redact), diag.warning)
    if args.command == "task" and args.args[0] == "list":  # what is kept: no server
        return _task_list(args, ctx, ctx.tasks.store)
    cache = (None if args.no_cache or args.protocol_version or args.session
             else _EraCache(os.environ, diag.warning))
    if cache is not None:
        key = cache.key(options, diag.redact)
        options["remembered_version"] = cache.remembered(key)
        ctx.tool_cache = _ToolCache(cache, key, args.cache_ttl, options)
    try:
        if args.session is None:  # a session answers the server as it was told to
            options.update(roots=_roots(args.root, diag), on_elicit=elicitor,
                           on_sample=_sampler(args.sampling_command, args.timeout),
                           sampling_tools=args.sampling_tools)
        client = Client(trace=trace, on_task=ctx.tasks.seen, **options)
        started.append(client)  # for main, which stops it whatever happens
        try:
            with client:
                if cache is not None:
                    cache.remember(key, client.era, client.protocol_version)
                status = _run_command(client, args, ctx, elicitor)
        except MCPError as e:
            if e.result is not None:  # a result that breaks the protocol, or the pages
                ctx.mode.broken(e.result)  # of a list before it failed: still shown
            raise
    finally:
        if trace is not None:
            try:
                trace.close()
            except (IOError, OSError):
                pass  # already reported by the write that failed
    diag.finish()
    return status


def _run_command(client, args, ctx, elicitor):
    ctx.elicitor = elicitor  # the shell's lines answer as the shell does
    name = client.server_info.get("name")
    if isinstance(name, str) and name.strip():  # who asks, in every question
        elicitor.server = _flat(_cut(name, _SHOW_CHARS))
    ctx.diag.debug("server %s %s, protocol %s (%s era, %s)" % (
        client.server_info.get("name"), client.server_info.get("version", ""),
        client.protocol_version, client.era, client.era_source))
    try:
        if ctx.pinned is not None:
            _enforce_pin(client, ctx, args.pin, ctx.pinned)
        return _COMMANDS[args.command].run(client, args, ctx)
    except _Refused:
        if ctx.tool_cache is not None:  # a pin mismatch: what was remembered is suspect
            ctx.tool_cache.drop()
        raise
    except ServerError as e:
        ctx.mode.server_error(e)
        raise
    except RequestTimeout as e:  # a task goes on: how to wait for it again, or stop it
        if e.task_id is None:
            raise
        raise ctx.tasks.timed_out(e)
    except KeyboardInterrupt:
        ctx.tasks.interrupted(client)
        raise
    finally:
        if ctx.tool_cache is not None and "tools" in client.list_changed:
            ctx.tool_cache.drop()  # the server said its tools changed


# Commands whose output goes on (and --events): --max-output is not for them.
_STREAMING = ("watch", "batch", "shell", "session", "replay")


def _check_args(args, parser):
    """What argparse cannot check: combinations and command arities."""
    _for_its_commands(parser, args)
    if args.sampling_tools and not args.sampling_command:
        raise UsageError("--sampling-tools says the --sampling-command handles tool use; "
                         "give --sampling-command CMD")
    if args.tool is not None:  # call --tool=-e: a name that would read as an option
        if args.tool == []:  # --tool=--: argparse before 3.13 drops a "--" value, leaving []
            args.tool = "--"
        args.args.insert(0, args.tool)
    if args.verbose and args.quiet:
        raise UsageError("--verbose and --quiet exclude each other")
    command = _COMMANDS[args.command]
    if len(args.args) < command.least or (command.most is not None
                                          and len(args.args) > command.most):
        raise UsageError("%s takes %s" % (args.command, command.takes))
    if args.max_output is not None and (args.json or args.events or args.command in _STREAMING):
        raise UsageError("--max-output cuts one command's human output, not %s" % (
            "--json" if args.json else "--events" if args.events else args.command + "'s"))
    if args.skill_out is not None and args.skill_check is not None:
        raise UsageError("skill --out writes skills and --check compares them: give one")
    if args.command == "check" and args.pin is None:
        raise UsageError("check needs --pin FILE, the pin to compare the server with (made "
                         "by 'pin FILE')")
    if args.command == "session":
        _check_session_args(args)
    elif args.session is not None and _COMMANDS[args.command].clients == 0:
        raise UsageError("--session is for the commands that talk to a server, not %s"
                         % args.command)
    if args.command in ("shell", "session", "completion") and args.events:
        raise UsageError("--events is for one command, not %s" % args.command)
    if args.idle is not None and not (args.command == "session" and args.args[0] == "start"):
        raise UsageError("--idle is for session start")
    if args.command == "auth" and args.args[0] not in ("login", "status", "logout"):
        raise UsageError("auth takes login, status or logout, not %r" % args.args[0])
    if args.command == "task" and args.args[0] not in ("list", "get", "wait", "cancel") or (
            args.command == "task" and len(args.args) != (1 if args.args[0] == "list" else 2)):
        raise UsageError("task takes list, get ID, wait ID or cancel ID, not %r"
                         % " ".join(args.args))
    if args.command == "complete":
        if args.args[0] not in ("prompt", "resource"):
            raise UsageError("complete takes 'prompt NAME' or 'resource TEMPLATE', not %r"
                             % args.args[0])
        _parse_pairs(args.args[2:], allow_json=False)
    if args.elicit is not None:
        mode = args.elicit[0]
        if mode not in _ELICIT_MODES or len(args.elicit) != (2 if mode == "answers" else 1):
            raise UsageError("--elicit takes interactive, defaults, answers FILE, decline "
                             "or cancel, not %r" % " ".join(args.elicit))


def _check_session_args(args):
    action, rest = args.args[0], args.args[1:]
    if action not in ("start", "list", "stop"):
        raise UsageError("session takes start NAME, list, or stop NAME|--all, not %r" % action)
    wanted = 0 if action == "list" or action == "stop" and args.all_servers else 1
    if len(rest) != wanted:
        raise UsageError("session %s takes %s" % (action, {
            "start": "a name, then the server: session start NAME -- SERVER_CMD (or --url, "
                     "--server)", "list": "no arguments",
            "stop": "a session's name, or --all"}[action]))
    if rest:
        _session_path(rest[0], {})  # the name alone is checked here


# Whether a stream is a terminal a person types at or reads. Windows: a
# console, not merely a character device (isatty() is true of NUL too).
if _WINDOWS:
    def _isatty(stream):
        try:
            if not stream.isatty():
                return False
            import ctypes  # lazy: Windows only
            import msvcrt
            mode = ctypes.c_ulong()
            return bool(ctypes.WinDLL("kernel32").GetConsoleMode(
                msvcrt.get_osfhandle(stream.fileno()), ctypes.byref(mode)))
        except (AttributeError, OSError, ValueError):
            return False
else:
    def _isatty(stream):
        return hasattr(stream, "isatty") and stream.isatty()


def _directory(path):
    try:
        if not os.path.isdir(path):
            os.makedirs(path)
    except OSError as e:
        raise UsageError("--save-dir %s: %s" % (path, e.strerror or e))
    return path


def _open_trace(path, diag):
    if path is None:
        return None
    try:
        # 0600: a trace holds every result, as a token file holds its tokens.
        fd = _open_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        trace = open(fd, "w", encoding="utf-8")
    except (IOError, OSError) as e:
        reason = "a pipe nobody reads" if e.errno == errno.ENXIO else e.strerror or e
        raise UsageError("--trace %s: %s" % (path, reason))
    return _TraceFile(trace, diag)


def _roots(paths, diag):
    """--root PATH; None (no roots capability) without any.

    A path that does not exist here is offered all the same: a server in a
    container sees its own paths (``-v "$PWD:/workspace"``).
    """
    for path in paths:
        if path and not _is_file_uri(path) and not os.path.exists(path):
            diag.warning("--root %s: no such file or directory here; offered all the same"
                         % path)
    return paths or None


def _server_entry(args, server):
    """The server to run, in the shape of a config entry (name, transport,
    command or url, headers, env, cwd, and the file it came from): after --,
    or from a config file."""
    if args.url is not None:
        if server or args.config or args.server:
            raise UsageError("give --url or a server command after -- (or --config/--server), "
                             "not both")
        return {"name": None, "transport": "http", "command": None, "url": args.url,
                "headers": {}, "env": {}, "cwd": None, "file": None}
    if server:
        if args.config or args.server:
            raise UsageError("give a server command after -- or --config/--server, not both")
        return {"name": None, "transport": "stdio", "command": server, "url": None,
                "headers": {}, "env": {}, "cwd": None, "file": None}
    if args.server is not None and args.config is None:  # by name, from every known file
        found = _pick_server(_found_servers(_cwd(), os.environ, lambda text: None),
                             args.server)
        return _entry_from(found["file"], {args.server: found["entry"]}, args.server)
    path = args.config or _default_config(_cwd())
    if path is None and args.command == "auth":
        raise UsageError("auth needs the server's URL: --url URL, or --config FILE --server "
                         "NAME naming an entry with a url")
    if path is None:
        shown = " ".join(_shell_word(word) for word in [args.command] + args.args)
        raise UsageError("no server command: put it after --, e.g. mcp_invoke %s -- python3 "
                         "server.py, or name a configured one with --server NAME (see servers)"
                         % _cut(shown, _SHOW_CHARS))
    if _reader_of(path) == "json":
        servers, _ = _config_servers(path)
    else:
        servers = collections.OrderedDict(_file_servers(path, _reader_of(path), _cwd()))
    name = args.server
    if name is None:
        if not servers:
            raise UsageError("%s has no servers" % path)
        if len(servers) != 1:
            raise UsageError("%s has %d servers (%s); pick one with --server NAME%s"
                             % (path, len(servers), ", ".join(sorted(servers)),
                                ", or call SERVER__TOOL" if args.command in ("call", "schema")
                                else ""))
        name = list(servers)[0]
    return _entry_from(path, servers, name)


def _entry_from(path, servers, name):
    """The server ``name`` of a config file, as _server_entry gives it."""
    entry = _config_entry(servers, name, path, os.environ)
    if entry["cwd"] is not None:  # relative to the file
        entry["cwd"] = os.path.join(os.path.dirname(os.path.abspath(path)), entry["cwd"])
    entry["file"] = path
    return entry


def _client_options(args, entry, diag):
    """The Client's keyword arguments from the options given and the server entry,
    but for those that open files or run checks of their own (the caller's)."""
    options = dict(timeout=args.timeout, max_bytes=args.max_bytes,
                   # watch: --max-time is the watch's length, not each request's limit
                   max_time=None if args.command == "watch" else args.max_time,
                   protocol_version=args.protocol_version, log_level=args.log_level,
                   on_log=diag.log, on_warning=diag.client_warning, strict=args.strict)
    if entry["transport"] == "http":
        given = [name for name, value in (("--env", args.env), ("--cwd", args.cwd),
                                          ("--inherit-env", args.inherit_env)) if value]
        if given:
            raise UsageError("%s %s for a server command; an HTTP server takes --header "
                             "and --bearer-env" % (" and ".join(given),
                                                   "is" if len(given) == 1 else "are"))
        if args.insecure:
            diag.warning("--insecure: the server's TLS certificate is not checked; anyone "
                         "on the way can read and change what is sent")
        headers = _http_headers(args, entry)
        _check_http(entry["url"], headers)  # before a trace or answers file is opened
        options.update(url=entry["url"], headers=headers, cacert=args.cacert,
                       insecure=args.insecure, oauth=_oauth_options(args, entry["url"],
                                                                    headers, diag))
        return options
    given = [name for name, value in (("--header", args.header), ("--bearer-env",
                                                                   args.bearer_env),
                                      ("--cacert", args.cacert), ("--insecure", args.insecure))
             if value] + _oauth_given(args)
    if given:
        raise UsageError("%s %s for an HTTP server (--url)" % (
            " and ".join(given), "is" if len(given) == 1 else "are"))
    env, missing = _server_env(args.env, os.environ)
    for name in missing:
        diag.warning("--env %s: not set here, so not passed to the server" % name)
    server_env = dict(entry["env"])
    server_env.update(env)
    options.update(command=entry["command"], env=server_env, inherit_env=args.inherit_env,
                   cwd=args.cwd or entry["cwd"], on_stderr=diag.relay)
    return options


def _session_options(args, server, diag):
    """The Client's keyword arguments for --session NAME: this run's own time
    and size limits; the server, and how to answer it, are the session's."""
    given = [flag for flag, value in (
        ("--", server), ("--url", args.url), ("--server", args.server),
        ("--config", args.config), ("--env", args.env), ("--inherit-env", args.inherit_env),
        ("--cwd", args.cwd), ("--header", args.header), ("--bearer-env", args.bearer_env),
        ("--cacert", args.cacert), ("--insecure", args.insecure),
        ("--protocol-version", args.protocol_version), ("--root", args.root),
        ("--elicit", args.elicit), ("--sampling-command", args.sampling_command),
        ("--sampling-tools", args.sampling_tools),
        ("--log-level", args.log_level)) if value] + _oauth_given(args)
    if given:
        raise UsageError("%s: not with --session; session %s was given its server, and how "
                         "to answer it, when it started" % (", ".join(given), args.session))
    return dict(session=args.session, timeout=args.timeout, max_bytes=args.max_bytes,
                max_time=None if args.command == "watch" else args.max_time,
                on_log=diag.log, on_warning=diag.client_warning, strict=args.strict)


# The OAuth options, as the parser names them.
_OAUTH_FLAGS = ("client_id", "client_secret", "client_secret_env", "client_metadata_url",
                "headless", "listen", "grant", "private_key_file", "signing_alg",
                "idp_token_endpoint", "idp_client_id", "idp_id_token", "idp_id_token_env",
                "scope", "cache")


def _oauth_given(args):
    return ["--oauth-" + name.replace("_", "-") for name in _OAUTH_FLAGS
            if getattr(args, "oauth_" + name)] + (
                ["--no-oauth-cache"] if args.no_oauth_cache else [])


def _oauth_options(args, url, headers, diag):
    """The Client's oauth dict from the options: OAuth is on for every URL, unless
    the request already carries an Authorization header of the user's."""
    given = _oauth_given(args)
    if any(name.lower() == "authorization" for name, _ in _check_http(url, headers)[1]):
        if given:
            raise UsageError("%s and an Authorization header (--header, --bearer-env, the "
                             "config's headers or the URL's user:password) exclude each other"
                             % given[0])
        return None
    for first, second in (("client_secret", "client_secret_env"),
                          ("idp_id_token", "idp_id_token_env"), ("client_secret",
                                                                  "private_key_file")):
        if getattr(args, "oauth_" + first) and getattr(args, "oauth_" + second):
            raise UsageError("--oauth-%s and --oauth-%s exclude each other" % (
                first.replace("_", "-"), second.replace("_", "-")))
    if args.oauth_cache is not None and args.no_oauth_cache:
        raise UsageError("--oauth-cache and --no-oauth-cache exclude each other")
    if args.oauth_headless and args.oauth_listen:
        raise UsageError("--oauth-headless and --oauth-listen exclude each other")
    idp = [flag for flag in ("idp_token_endpoint", "idp_client_id", "idp_id_token",
                             "idp_id_token_env") if getattr(args, "oauth_" + flag)]
    if idp and args.oauth_grant != "jwt-bearer":
        raise UsageError("--oauth-%s is for --oauth-grant jwt-bearer" % idp[0].replace("_", "-"))
    document = args.oauth_client_metadata_url
    if document is not None and not re.match(r"https://[^/?#\s]+/[^\s]", document):
        # 2025-11-25 basic/authorization, "Client ID Metadata Documents".
        raise UsageError("--oauth-client-metadata-url must be an https:// URL with a path, "
                         "not %s" % _show(document))
    needs_id = [flag for flag in ("client_secret", "client_secret_env", "private_key_file")
                if getattr(args, "oauth_" + flag)]
    if (needs_id or args.oauth_grant) and not args.oauth_client_id:
        raise UsageError("%s needs --oauth-client-id, the client registered with the "
                         "authorization server" % ("--oauth-" + needs_id[0].replace("_", "-")
                                                   if needs_id else "--oauth-grant"))
    if args.oauth_grant == "client_credentials" and not (
            args.oauth_client_secret or args.oauth_client_secret_env
            or args.oauth_private_key_file):
        raise UsageError("--oauth-grant client_credentials needs a client secret "
                         "(--oauth-client-secret or --oauth-client-secret-env) or "
                         "--oauth-private-key-file")
    if args.oauth_grant == "jwt-bearer" and not (args.oauth_idp_token_endpoint and (
            args.oauth_idp_id_token or args.oauth_idp_id_token_env)):
        raise UsageError("--oauth-grant jwt-bearer needs --oauth-idp-token-endpoint and "
                         "--oauth-idp-id-token or --oauth-idp-id-token-env")
    if args.oauth_private_key_file:
        _signing_key(args.oauth_private_key_file, args.oauth_signing_alg)
    options = dict(
        client_id=args.oauth_client_id,
        client_secret=_secret_option(args.oauth_client_secret, args.oauth_client_secret_env,
                                     "--oauth-client-secret-env"),
        client_metadata_url=args.oauth_client_metadata_url, scope=args.oauth_scope,
        grant=args.oauth_grant, private_key_file=args.oauth_private_key_file,
        signing_alg=args.oauth_signing_alg, idp_token_endpoint=args.oauth_idp_token_endpoint,
        idp_client_id=args.oauth_idp_client_id,
        idp_id_token=_secret_option(args.oauth_idp_id_token, args.oauth_idp_id_token_env,
                                    "--oauth-idp-id-token-env"),
        headless=args.oauth_headless, listen=args.oauth_listen,
        cache=None if args.no_oauth_cache else _token_file(args.oauth_cache, diag),
        login=args.command == "auth")
    if args.oauth_listen or _isatty(sys.stdin):
        options["on_authorize"] = _person(diag, sys.stdin)
    return options


def _token_file(path, diag):
    """The token file to use: --oauth-cache PATH (exit 2 if unusable), else the
    default one, if usable (else tokens last for this run, said under --verbose,
    or as a warning when a file there is damaged: it is not written over)."""
    if path is not None:
        _check_token_file(path)
        return path
    try:
        _check_token_file(None)
    except UsageError as e:
        (diag.debug if str(e).endswith("cannot be written") else diag.warning)(
            "%s; OAuth tokens last for this run only" % e)
        return None
    return _TokenCache.default_path(os.environ)


def _check_token_file(path, writing=True):
    """The token file (--oauth-cache PATH, else the default): a token file of
    ours or none yet, where we may write; else exit 2 before anything is sent,
    and nothing of someone else's is written over."""
    given = path is not None
    if not given:
        path = _TokenCache.default_path(os.environ)
    elif not path:
        raise UsageError("--oauth-cache needs a path")
    name = "--oauth-cache %s" % path if given else "the token file %s" % path
    if os.path.islink(path):  # never written through (see _write_whole)
        raise UsageError("%s is a symlink, which is not followed; give the file it points to"
                         % name)
    real = os.path.realpath(path)
    if os.path.exists(real) and not os.path.isfile(real):
        raise UsageError("%s is not a regular file" % name)
    if os.path.exists(real) and _TokenCache(real).load().get("foreign"):
        raise UsageError("%s is not a token file of mcp_invoke (damaged, or another "
                         "program's): %s" % (name, "give another path" if given else
                                             "move it away"))
    if not writing:
        return
    directory = os.path.dirname(real)
    while not os.path.isdir(directory) and os.path.dirname(directory) != directory:
        directory = os.path.dirname(directory)  # the nearest that exists: we create the rest
    if not os.access(real if os.path.exists(real) else directory, os.W_OK):
        raise UsageError("%s cannot be written" % name)


def _secret_option(value, env_name, flag):
    if env_name is None:
        return value
    value = os.environ.get(env_name)
    if not value:
        raise UsageError("%s %s: the variable is not set or empty" % (flag, env_name))
    return value


def _signing_key(path, alg):
    """The private key file, checked before anything is sent: exit 2 if unusable."""
    try:
        key = _private_key(_read_file(path, "--oauth-private-key-file " + path, "latin-1",
                                      wait=2.0))
        if alg is not None and alg != _key_alg(key):
            raise ValueError("--oauth-signing-alg %s needs an %s key, and this one is %s"
                             % (alg, "EC P-256" if alg == "ES256" else "RSA", key[0]))
    except ValueError as e:
        raise UsageError("--oauth-private-key-file %s: %s" % (path, e))
    return key


def _person(diag, stdin):
    """on_authorize for the CLI: the URL on stderr; without a listener, what the
    person pastes back on stdin (a terminal)."""
    def on_authorize(url, listening):
        diag.prompt("open this URL in a browser to authorize mcp_invoke:\n  ", url, "\n")
        if listening:
            diag.prompt("waiting for the browser to come back (Ctrl-C to give up)...\n")
            return None
        diag.prompt("then paste the address the browser ends up at (or the code alone): ")
        line = _read_line(stdin)
        if line is _TOO_LONG or re.search(_ESCAPED_BYTES, line):
            raise UsageError("what was pasted is %s" % ("over the input limit of %d bytes"
                                                        % _INPUT_LIMIT if line is _TOO_LONG
                                                        else "not valid UTF-8"))
        return line
    return on_authorize


def _http_headers(args, entry):
    """The HTTP headers to send: the config entry's, then --header, then
    --bearer-env's Authorization; values are never shown, not even in errors."""
    headers = dict(entry["headers"])

    def put(name, value):  # a later one replaces an earlier, whatever the case
        for known in [known for known in headers if known.lower() == name.lower()]:
            del headers[known]
        headers[name] = value
    for spec in args.header:
        name, colon, value = spec.partition(":")
        if not colon or not name.strip():
            raise UsageError("--header takes 'Name: value', not %s" % _show(name.strip()
                                                                           or spec[:1]))
        put(name.strip(), _expand(value.strip(), os.environ, "--header %s" % name.strip()))
    if args.bearer_env is not None:
        token = os.environ.get(args.bearer_env)
        if not token:
            raise UsageError("--bearer-env %s: the variable is not set or empty"
                             % args.bearer_env)
        put("Authorization", "Bearer " + token)
    return headers


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

class _Signalled(KeyboardInterrupt):
    """SIGTERM, SIGHUP or SIGQUIT: handled like Ctrl-C (cancel, shut down), exit 128+signum."""

    def __init__(self, signum):
        KeyboardInterrupt.__init__(self)
        self.signum = signum


# Signals that stop a run: Ctrl-C, and the others handled like it (see
# _Signalled); those that are Ctrl-C to a person (exit 130). Windows has no
# hangup or quit: its console sends Ctrl-C and Ctrl-Break.
if _WINDOWS:
    _STOP_SIGNALS = (signal.SIGINT, signal.SIGBREAK, signal.SIGTERM)
    _INTERRUPTS = (signal.SIGINT, signal.SIGBREAK)
else:
    _STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
    _INTERRUPTS = (signal.SIGINT,)


def _taught(error):
    """``error`` with what to do next where its own words do not say it (CLI.md
    "Agents": errors that teach): a time limit names the option that moves it."""
    if (isinstance(error, RequestTimeout) and "(never sent" not in error.message
            and error.task_id is None):
        if "time limit" in error.message:
            error.message += "; --max-time SECONDS gives it longer"
        elif "timed out after" in error.message:
            error.message += "; --timeout SECONDS waits longer"
    return error


def _exit(code):
    """End the command's process with ``code`` once its output is out, without
    tearing the interpreter down: main has closed what it opened, reaped every
    child and joined every thread, so what is left is freeing memory, a tenth
    of a cold start. A stream that cannot be flushed makes it 120 if all went
    well until then, as Python's own exit does."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: started without it (``>&-``)
                stream.flush()
        except (OSError, ValueError):
            code = code or 120
    os._exit(code)


def main(argv=None):
    """Run the command line; returns the exit status (see the module docstring)."""
    program = argv is None  # the process itself: it exits with what main returns
    argv = _utf8_argv(sys.argv[1:]) if program else list(argv)
    closed = _stand_in_streams()
    diag = _Diagnostics(sys.stderr)
    out = _Output(sys.stdout)
    # The first stop signal raises, and the server is stopped in the usual
    # order. Any later one, or one once the status is decided, raises nothing
    # (so no cleanup is cut short, and no traceback shows) but kills the server
    # at once; and the servers started are closed again at the end, in case
    # the first signal cut a close short.
    stopping, started = [], []

    def on_signal(signum, frame):
        diag.stopping = True
        # A signal that interrupts this handler before it has noted its own
        # comes later, as one that finds it noted.
        if stopping or _running(frame, (on_signal.__code__,)) is not None:
            for client in started:
                client.abort()
            return
        stopping.append(signum)
        _Unsplit.deliver(KeyboardInterrupt() if signum in _INTERRUPTS else _Signalled(signum),
                         frame)

    previous = {}
    try:
        try:  # inside: a signal may come while the handlers are being set
            for signum in _STOP_SIGNALS:
                handler = signal.getsignal(signum)
                if handler not in (signal.SIG_IGN, None):  # nohup's ignored hangup stays so
                    previous[signum] = signal.signal(signum, on_signal)
        except ValueError:
            pass  # not the main thread: signals stay as they are
        try:
            code = _run(argv, diag, out, started)
        finally:
            out.end_cut()  # what was cut is said whatever comes next
        diag.events.finish()  # the result, last
        out.flush()  # inside: a full disk shows only now, and is reported like any failure
        return code
    except MCPError as e:
        stopping.append(e)  # first, before any call that a signal could interrupt
        diag.finish()
        diag.failed(_taught(e))
        return e.exit_code
    except KeyboardInterrupt as e:
        stopping.append(e)
        diag.finish()
        signum = getattr(e, "signum", None)
        code = _EXIT_INTERRUPTED if signum is None else 128 + signum
        diag.failed("interrupted" if signum is None
                    else "stopped by %s" % signal.Signals(signum).name, code)
        return code
    except Exception as e:  # a bug in mcp_invoke: still one line, never a traceback
        stopping.append(e)
        diag.finish()
        diag.failed("internal error: %s: %s (please report it)" % (type(e).__name__, e), 1)
        return 1
    finally:
        stopping.append(None)
        for client in started:
            client.close()
        try:
            out.flush()
        except MCPError:
            pass  # reported above; output has stopped
        for name, stand_in in closed:
            setattr(sys, name, None)
            stand_in.close()
        if program and diag.stopping and not _writable(sys.stderr):
            _to_devnull(sys.stderr)  # the interpreter's last flush must not block either
        # The program exits with the status returned: it blocks stop signals from
        # here on, as the interpreter puts back their defaults while it exits
        # (ignoring them instead would race with one already on its way).
        # Called as a function, main leaves signals as it found them.
        if program and previous:
            if _WINDOWS:  # no signal masks: ignored, which races with nothing there
                for signum in previous:
                    signal.signal(signum, signal.SIG_IGN)
            else:
                signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        elif not program:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


if __name__ == "__main__":
    if hasattr(gc, "freeze"):  # 3.7+
        # What exists now (the module) lives until the process ends: the
        # collections from here on, and on the way out, need not look at it.
        gc.freeze()
    gc.enable()
    _exit(main())
