# A lean MCP echo server over stdio, the bench's floor server. MIT License.
"""A handshake-era MCP server in a few dozen lines: JSON lines on stdin, answers on stdout.

initialize (the client's protocol version if known, else the latest),
ping, tools/list, and tools/call of echo (the arguments' text back) and
blob (``size`` x's); any other request, server/discover included, gets
-32601 Method not found at once, as handshake-era servers answer it.
Notifications get no answer. Input is read as it comes and the answers to
what one read brought are written together. Ends when stdin ends.

``--skills N`` publishes N one-file skills (the extension
io.modelcontextprotocol/skills: skills/list, 100 a page) and lists N
resources (resources/list, 100 a page); ``--bulk F B`` adds the skill
skill://bulk/SKILL.md of F files, B bytes in all, read with resources/read
and got with skills/get. Every answer is made once, at the start.

http_server.py serves the same answers (``answer``) over Streamable HTTP.
Standard library only (json, os); CPython 3.6 or newer.
"""

import json
import os
import sys

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
_made = {}  # (method, key) -> an answer's result, as JSON bytes, made at the start
PAGE = 100


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
    made = _made.get((method, params.get("cursor") or params.get("uri")))
    if made is not None:
        return b"".join((head, b'"result":', made, b"}\n"))
    if method == "initialize":
        version = params.get("protocolVersion")
        capabilities = {"tools": {}}
        if _made:
            capabilities.update(resources={}, extensions={
                "io.modelcontextprotocol/skills": {}})
        result = {"protocolVersion": version if version in VERSIONS else VERSIONS[-1],
                  "capabilities": capabilities, "serverInfo": server_info}
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


def _pages(method, key, items):
    for start in range(0, max(len(items), 1), PAGE):
        page = {key: items[start:start + PAGE]}
        if start + PAGE < len(items):
            page["nextCursor"] = str(start + PAGE)
        _made[(method, str(start) if start else None)] = _bytes(page)


def _bytes(value):
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _skill(uri, name, files):
    """A skill's entry, and each file's resources/read answer made."""
    import hashlib
    resources = []
    for file_uri, data in files:
        resources.append({"uri": file_uri, "size": len(data),
                          "digest": "sha256:" + hashlib.sha256(data).hexdigest()})
        _made[("resources/read", file_uri)] = _bytes({"contents": [
            {"uri": file_uri, "mimeType": "text/markdown", "text": data.decode("ascii")}]})
    entry = {"uri": uri, "frontmatter": {"name": name, "description": "Skill %s." % name},
             "resources": resources}
    _made[("skills/get", uri)] = _bytes({"skill": entry})
    return entry


def make(argv):
    """--skills N and --bulk F B: the answers made once (see the docstring)."""
    skills = []
    if "--skills" in argv:
        count = int(argv[argv.index("--skills") + 1])
        for n in range(count):
            name = "s%05d" % n
            text = ("---\nname: %s\ndescription: Skill %s.\n---\nDo %s.\n"
                    % (name, name, name)).encode("ascii")
            skills.append(_skill("skill://gen/%s/SKILL.md" % name, name,
                                 [("skill://gen/%s/SKILL.md" % name, text)]))
        _pages("resources/list", "resources", [
            {"uri": "file:///r/%05d.md" % n, "name": "r%05d" % n, "mimeType": "text/markdown",
             "description": "Resource %d." % n} for n in range(count)])
    if "--bulk" in argv:
        at = argv.index("--bulk")
        files, size = int(argv[at + 1]), int(argv[at + 2])
        head = b"---\nname: bulk\ndescription: Skill bulk.\n---\n"
        each = (size - len(head)) // (files - 1) if files > 1 else 0
        parts = [("skill://bulk/SKILL.md", head + b"x" * (size - len(head) - each * (files - 1)))]
        parts += [("skill://bulk/part/%04d.md" % n, (b"line %04d\n" % n) * (each // 10)
                   + b"y" * (each % 10)) for n in range(1, files)]
        skills.append(_skill("skill://bulk/SKILL.md", "bulk", parts))
    if skills or "--skills" in argv:
        _pages("skills/list", "skills", skills)


def main():
    make(sys.argv[1:])
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
