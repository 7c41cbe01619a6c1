# A lean MCP echo server over Streamable HTTP, the bench's floor server. MIT License.
"""stdio_server.py's answers over Streamable HTTP: one thread, selectors, raw sockets.

Usage: ``python3 http_server.py [--era legacy|modern]``. It listens on a free
loopback port, prints its URL (``http://127.0.0.1:PORT/mcp``) and serves
until its stdin ends.

POST /mcp with a JSON-RPC request gets the answer as ``application/json``;
a notification or a response gets 202 with no body. GET gets 405 (no
standing stream), and so does anything but GET, POST and DELETE; a path
other than /mcp gets 404. Connections are kept alive (HTTP/1.1,
Content-Length bodies), with TCP_NODELAY set as servers in use do.

Legacy era (the default): initialize gives a new Mcp-Session-Id, which every
later request must carry (400 without one, 404 for one not known, with a
JSON-RPC error in the body, as the SDKs' servers answer), so a
server/discover without one gets 400 at once; DELETE ends the session.
Modern era (2026-07-28): server/discover answers with the version, no
sessions, DELETE gets 405. Standard library only; CPython 3.6 or newer.
"""

import binascii
import json
import os
import selectors
import socket
import sys

from stdio_server import answer

MODERN = "2026-07-28"
REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 404: "Not Found",
           405: "Method Not Allowed"}


def respond(era, sessions, method, path, headers, body):
    """(status, extra headers, body) for one HTTP request."""
    if path.split("?")[0] != "/mcp":
        return 404, [], b""
    if method not in ("POST", "DELETE") or method == "DELETE" and era == "modern":
        return 405, [("Allow", "POST" if era == "modern" else "POST, DELETE")], b""
    message = json.loads(body) if method == "POST" else {}
    if era == "legacy" and message.get("method") != "initialize":
        session = headers.get("mcp-session-id")
        if session not in sessions:  # as the SDKs answer, server/discover included
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": (
                "Session not found" if session else "Bad Request: no Mcp-Session-Id")}}
            return ((404 if session else 400), [("Content-Type", "application/json")],
                    json.dumps(error).encode())
        if method == "DELETE":
            sessions.discard(session)
            return 200, [], b""
    info = {"name": "bench-http", "version": "1.0"}
    if era == "modern" and message.get("method") == "server/discover" and "id" in message:
        result = {"resultType": "complete", "supportedVersions": [MODERN],
                  "capabilities": {"tools": {}},
                  "_meta": {"io.modelcontextprotocol/serverInfo": info}}
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        return 200, [("Content-Type", "application/json")], data.encode() + b"\n"
    data = answer(message, info)
    if data is None:
        return 202, [], b""
    extra = [("Content-Type", "application/json")]
    if era == "legacy" and message.get("method") == "initialize":
        session = binascii.hexlify(os.urandom(16)).decode("ascii")
        sessions.add(session)
        extra.append(("Mcp-Session-Id", session))
    return 200, extra, data


def handle(conn, buffer, era, sessions):
    """Answer every whole request in ``buffer``; False once the connection is to close."""
    while True:
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return True
        lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", 0))
        if len(buffer) < end + 4 + length:
            return True
        body = bytes(buffer[end + 4:end + 4 + length])
        del buffer[:end + 4 + length]
        method, path = lines[0].split(" ")[:2]
        status, extra, data = respond(era, sessions, method, path, headers, body)
        head = ["HTTP/1.1 %d %s" % (status, REASONS[status]),
                "Content-Length: %d" % len(data)]
        head += ["%s: %s" % pair for pair in extra]
        conn.sendall("\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + data)
        if headers.get("connection", "").lower() == "close":
            return False


def main(argv):
    era = argv[argv.index("--era") + 1] if "--era" in argv else "legacy"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)  # stdin: its end is ours
    os.write(1, b"http://127.0.0.1:%d/mcp\n" % listener.getsockname()[1])
    sessions = set()
    while True:
        for key, _ in selector.select():
            if key.fileobj == 0:
                if not os.read(0, 4096):
                    return 0
            elif key.fileobj is listener:
                conn = listener.accept()[0]
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                selector.register(conn, selectors.EVENT_READ, bytearray())
            else:
                conn, buffer = key.fileobj, key.data
                try:
                    data = conn.recv(1 << 16)
                    buffer += data
                    open_ = bool(data) and handle(conn, buffer, era, sessions)
                except OSError:  # the client went away
                    open_ = False
                if not open_:
                    selector.unregister(conn)
                    conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
