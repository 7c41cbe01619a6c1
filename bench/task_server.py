# A lean MCP server over stdio with a tool that runs as a task, the bench's tasks rows. MIT License.
"""An echo tool, plain and as a task, in either era: JSON lines in, answers out.

Usage: ``python3 task_server.py [--era legacy|modern]``.

Tools: ``echo`` (the arguments' text back), ``echo_task`` (the same, always
as a task) and ``stats``. echo_task's arguments say how the task goes:
``interval``, the poll interval it asks for in milliseconds (0 unless
given); ``polls``, the tasks/get that shows it completed (1 unless given:
done at the first poll; 0: created completed).

Legacy era (2025-11-25 basic/utilities/tasks, the default): initialize
declares capabilities.tasks.requests.tools.call, tools/list gives echo_task
execution.taskSupport "required"; a call of it must carry params.task, and
gets {"task": Task}; tasks/get answers the Task; tasks/result the echo.
Modern era (2026-07-28, extension io.modelcontextprotocol/tasks):
server/discover declares the extension; a call of echo_task, which must
declare it in _meta (else -32003), gets a flat Task with resultType "task";
tasks/get answers it, the echo in ``result`` once completed.

``stats`` answers, as its text, a JSON object of what came since the last
stats call: "counts", the requests by method, and "arrivals", [method,
time.monotonic()] for each tools/call and tasks/get; then forgets them.
Anything else gets -32601 at once; notifications no answer. Ends when stdin
ends. Standard library only (json, os, sys, time); CPython 3.6 or newer.
"""

import json
import os
import sys
import time

MODERN = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
INFO = {"name": "bench-tasks", "version": "1.0"}
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [{"name": "echo", "description": "Echo the text back.", "inputSchema": SCHEMA},
         {"name": "echo_task", "description": "Echo the text back, as a task.",
          "inputSchema": SCHEMA, "execution": {"taskSupport": "required"}},
         {"name": "stats", "description": "What came since the last stats.",
          "inputSchema": {"type": "object"}}]
STAMP = "2026-01-01T00:00:00Z"  # createdAt and lastUpdatedAt: the bench reads neither


class Server(object):

    def __init__(self, modern):
        self.modern = modern
        self.tasks = {}  # taskId -> [polls left, interval, text]
        self.next_task = 0
        self.counts = {}
        self.arrivals = []

    def answer(self, message):
        """The answer's result (a dict), or (code, message, data) for an error."""
        method, params = message.get("method"), message.get("params") or {}
        if method == "tools/call" and params.get("name") == "stats":
            text = json.dumps({"counts": self.counts, "arrivals": self.arrivals})
            self.counts, self.arrivals = {}, []
            return {"content": [{"type": "text", "text": text}]}
        self.counts[method] = self.counts.get(method, 0) + 1
        if method in ("tools/call", "tasks/get"):
            self.arrivals.append([method, time.monotonic()])
        if method == "tools/call":
            arguments = params.get("arguments") or {}
            if params.get("name") == "echo_task":
                return self.create(params, arguments)
            return echo(arguments.get("text", ""))
        if method in ("tasks/get", "tasks/result") and params.get("taskId") in self.tasks:
            return self.look(method, params["taskId"])
        if method == "initialize" and not self.modern:
            return {"protocolVersion": params.get("protocolVersion"), "serverInfo": INFO,
                    "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}}
        if method == "server/discover" and self.modern:
            return {"resultType": "complete", "supportedVersions": [MODERN],
                    "capabilities": {"tools": {}, "extensions": {EXTENSION: {}}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": INFO}}
        if method == "tools/list":
            return {"tools": TOOLS}
        return (-32601, "Method not found: %s" % method, None)

    def create(self, params, arguments):
        if self.modern:
            meta = params.get("_meta") or {}
            declared = meta.get("io.modelcontextprotocol/clientCapabilities") or {}
            if EXTENSION not in (declared.get("extensions") or {}):
                return (-32003, "Missing required client capability",
                        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})
        elif "task" not in params:
            return (-32601, "Tool echo_task runs only as a task: send params.task", None)
        self.next_task += 1
        ident = "t%d" % self.next_task
        self.tasks[ident] = [arguments.get("polls", 1), arguments.get("interval", 0),
                             arguments.get("text", "")]
        task = self.task(ident)
        if self.modern:
            task["resultType"] = "task"
            return task
        return {"task": task}

    def look(self, method, ident):
        """tasks/get (a poll: one step on) or tasks/result."""
        entry = self.tasks[ident]
        if method == "tasks/result":
            del self.tasks[ident]
            result = echo(entry[2])
            result["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": ident}}
            return result
        entry[0] -= 1
        task = self.task(ident)
        if self.modern:
            task["resultType"] = "complete"
        return task

    def task(self, ident):
        """The Task as the era shapes it; a modern completed one carries its result."""
        left, interval, text = self.tasks[ident]
        done = left <= 0
        task = {"taskId": ident, "status": "completed" if done else "working",
                "createdAt": STAMP, "lastUpdatedAt": STAMP}
        if self.modern:
            task.update(ttlMs=60000, pollIntervalMs=interval)
            if done:
                task["result"] = echo(text)
                del self.tasks[ident]
        else:
            task.update(ttl=60000, pollInterval=interval)
        return task


def echo(text):
    return {"content": [{"type": "text", "text": text}]}


def frame(server, line):
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        return b""
    answer = server.answer(message)
    if isinstance(answer, tuple):
        code, text, data = answer
        error = {"code": code, "message": text}
        if data is not None:
            error["data"] = data
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
    return json.dumps(reply, separators=(",", ":")).encode() + b"\n"


def main(argv):
    server = Server("--era" in argv and argv[argv.index("--era") + 1] == "modern")
    rest = b""
    while True:
        data = os.read(0, 1 << 16)
        if not data:
            return 0
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        view = memoryview(b"".join([frame(server, line) for line in lines if line.strip()]))
        while view:
            view = view[os.write(1, view):]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
