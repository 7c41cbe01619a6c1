# A minimal stdlib MCP client over stdio, the floor of the bench's whole-process figures.
# MIT License.
"""``python3 -m minimal_client tools|call NAME JSON|batch|skill URI -- SERVER...`` (from bench/).

The same job as mcp_invoke's command and nothing more: initialize,
notifications/initialized, one request (or every batch line, all written
from a thread while the answers are read), close stdin, wait. No probe, no
tools/list before a call, no deadlines, no escaping of control characters.
Its output is mcp_invoke's, byte for byte, for a call's text and for batch
lines that succeed; tools prints name and description, where mcp_invoke
prints a signature. ``skill URI``: skills/get, then each file read with
resources/read, its bytes hashed and checked against the entry, and nothing
written. Standard library only (json, subprocess, threading; hashlib for skill).
"""

import json
import subprocess
import sys
import threading


def frame(ident, method, params=None):
    message = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        message["id"] = ident
    if params is not None:
        message["params"] = params
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


def result(line):
    answer = json.loads(line)
    if "result" not in answer:
        sys.exit("minimal client: %s" % answer.get("error"))
    return answer["result"]


def main(argv):
    split = argv.index("--")
    command, args, server = argv[0], argv[1:split], argv[split + 1:]
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send, answers, out = proc.stdin, proc.stdout, sys.stdout
    send.write(frame(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "minimal", "version": "1"}}))
    send.flush()
    result(answers.readline())
    send.write(frame(None, "notifications/initialized"))
    if command == "tools":
        send.write(frame(1, "tools/list"))
        send.flush()
        for tool in result(answers.readline())["tools"]:
            out.write("%s - %s\n" % (tool["name"], tool.get("description", "")))
    elif command == "call":
        send.write(frame(1, "tools/call", {"name": args[0], "arguments": json.loads(args[1])}))
        send.flush()
        for block in result(answers.readline())["content"]:
            if block["type"] == "text":
                out.write(block["text"])
                out.write("\n")
    elif command == "skill":
        import hashlib
        send.write(frame(1, "skills/get", {"uri": args[0]}))
        send.flush()
        for n, item in enumerate(result(answers.readline())["skill"]["resources"], 2):
            send.write(frame(n, "resources/read", {"uri": item["uri"]}))
            send.flush()
            data = result(answers.readline())["contents"][0]["text"].encode("utf-8")
            if "sha256:" + hashlib.sha256(data).hexdigest() != item["digest"]:
                sys.exit("minimal client: %s differs from its entry" % item["uri"])
    elif command == "batch":
        lines = [(n, json.loads(line)) for n, line in enumerate(sys.stdin.buffer, 1)
                 if line.strip()]
        frames = b"".join(frame(n, entry["method"], entry.get("params"))
                          for n, entry in lines)

        def write_all():  # from a thread: all at once would fill both pipes and stall
            send.write(frames)
            send.flush()
        writer = threading.Thread(target=write_all)
        writer.start()
        for n, entry in lines:
            answer = json.loads(answers.readline())
            key = "result" if "result" in answer else "error"
            line = {"id": entry.get("id", n), key: answer[key]}
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
        writer.join()
    send.close()
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
