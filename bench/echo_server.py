# The leanest MCP echo server over stdio, the CLI batch row's floor server. MIT License.
"""A handshake-era echo server in about thirty lines: JSON lines in, answers out.

initialize (the client's protocol version), tools/call (the arguments'
text back, whatever the tool's name), -32601 to any other request,
server/discover included; notifications get no answer. It does less per
line than any client it serves, so a pipelined batch is paced by the
client, not by it: stdio_server.py costs about as much per line as a
minimal client and would hide what a client costs. Standard library only
(json, os); CPython 3.6 or newer.
"""

import json
import os

INFO = b'"capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1.0"}}}\n'


def answer(line):
    message = json.loads(line)
    if "id" not in message:
        return b""
    head = '{"jsonrpc":"2.0","id":%s,' % json.dumps(message["id"])
    method, params = message.get("method"), message.get("params") or {}
    if method == "tools/call":
        text = json.dumps(params["arguments"]["text"])
        return ('%s"result":{"content":[{"type":"text","text":%s}]}}\n' % (head, text)).encode()
    if method == "initialize":
        version = json.dumps(params["protocolVersion"])
        return ('%s"result":{"protocolVersion":%s,' % (head, version)).encode() + INFO
    return ('%s"error":{"code":-32601,"message":"Method not found"}}\n' % head).encode()


def main():
    rest = b""
    while True:
        data = os.read(0, 1 << 16)
        if not data:
            return 0
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        view = memoryview(b"".join([answer(line) for line in lines if line.strip()]))
        while view:
            view = view[os.write(1, view):]


if __name__ == "__main__":
    raise SystemExit(main())
