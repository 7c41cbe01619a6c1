# A lean MCP echo server over stdio, the bench's floor server. MIT License.
"""A handshake-era MCP server in a few dozen lines: JSON lines on stdin, answers on stdout.

initialize (the client's protocol version if known, else the latest),
ping, tools/list, and tools/call of echo (the arguments' text back) and
blob (``size`` x's); any other request, server/discover included, gets
-32601 Method not found at once, as handshake-era servers answer it.
Notifications get no answer. Input is read as it comes and the answers to
what one read brought are written together. Ends when stdin ends.

http_server.py serves the same answers (``answer``) over Streamable HTTP.
Standard library only (json, os); CPython 3.6 or newer.
"""

import json
import os

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
TOOLS = [
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "blob", "description": "Return a text block of the given size.",
     "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}},
                     "required": ["size"]}},
]
_blobs = {}  # size -> the x's, made once per size


def answer(message, server_info):
    """The answer to one request (bytes, a newline last), or None for a notification."""
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + b","
    method, params = message["method"], message.get("params") or {}
    if method == "tools/call" and params.get("name") == "blob":
        size = int((params.get("arguments") or {}).get("size", 0))
        if size not in _blobs:
            _blobs[size] = b"x" * size
        return b"".join((head, b'"result":{"content":[{"type":"text","text":"',
                         _blobs[size], b'"}]}}\n'))
    if method == "initialize":
        version = params.get("protocolVersion")
        result = {"protocolVersion": version if version in VERSIONS else VERSIONS[-1],
                  "capabilities": {"tools": {}}, "serverInfo": server_info}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "echo":
        text = (params.get("arguments") or {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}]}
    else:
        error = {"code": -32601, "message": "Method not found: %s" % method}
        return head + b'"error":' + json.dumps(error).encode() + b"}\n"
    return head + b'"result":' + json.dumps(result, separators=(",", ":")).encode() + b"}\n"


def main():
    info, rest = {"name": "bench-stdio", "version": "1.0"}, b""
    while True:
        data = os.read(0, 1 << 16)
        if not data:
            return 0
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        out = [answer(json.loads(line), info) for line in lines if line.strip()]
        view = memoryview(b"".join(part for part in out if part is not None))
        while view:
            view = view[os.write(1, view):]


if __name__ == "__main__":
    raise SystemExit(main())
