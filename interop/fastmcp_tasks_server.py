"""An MCP server with tools that run as tasks (fastmcp + fastmcp-tasks), for `make interop`.

    python fastmcp_tasks_server.py stdio
    python fastmcp_tasks_server.py http [PORT]

Over HTTP it serves Streamable HTTP at http://127.0.0.1:PORT/mcp; PORT defaults
to $INTEROP_TASKS_PORT. fastmcp-tasks speaks only the 2026-07-28 extension
`io.modelcontextprotocol/tasks` (flat `resultType: "task"`, `tasks/get` with the
result inlined, `tasks/update`, `tasks/cancel`); on a 2025-11-25 connection no
task is ever created. Its backend is Docket in memory, inside this process.

Tools:
  slow_echo   task optional, about 1.5 s, pollIntervalMs 1000; quotes its argument
  ask_name    task required, pollIntervalMs 500; asks the client for a name
              (an elicitation form with one string field) and greets it
  fail_task   task optional, default pollIntervalMs (5000); raises: a plain error
              ends `completed` with isError, protocol=true ends `failed`
  add         an ordinary tool, never a task
"""
import asyncio
import os
import sys
from datetime import timedelta

import mcp_types
from mcp.shared.exceptions import MCPError

from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension


def build():
    mcp = FastMCP("interop-fastmcp-tasks",
                  instructions="fastmcp-tasks server for mcp_invoke's interop run.")
    mcp.add_extension(TasksExtension(url="memory://"))

    @mcp.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(seconds=1)))
    async def slow_echo(text: str, ctx: Context) -> str:
        """Echo a text after about 1.5 s; runs as a task when the client allows it."""
        for step in range(3):
            await ctx.report_progress(step, 3, "step %d of 3" % (step + 1))
            await asyncio.sleep(0.5)
        return "slow echo: %r" % text

    @mcp.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=500)))
    async def ask_name(ctx: Context, question: str = "What is your name?") \
            -> str | mcp_types.InputRequiredResult:
        """Ask the client for a name (elicitation) and greet it; only runs as a task."""
        answer = (ctx.input_responses or {}).get("name")
        if answer is None:
            return mcp_types.InputRequiredResult(input_requests={
                "name": mcp_types.ElicitRequest(params=mcp_types.ElicitRequestFormParams(
                    message=question,
                    requested_schema={
                        "type": "object",
                        "properties": {"name": {"type": "string", "title": "Name"}},
                        "required": ["name"],
                    }))})
        if answer.action != "accept" or not answer.content:
            return "no name given (%s)" % answer.action
        return "Hello, %s!" % answer.content.get("name")

    @mcp.tool(task=True)
    async def fail_task(reason: str = "boom", protocol: bool = False) -> str:
        """Fail on purpose: an error result, or with protocol=true a JSON-RPC error."""
        await asyncio.sleep(0.2)
        if protocol:
            raise MCPError(code=-32603, message="fail_task failed: %s" % reason)
        raise ValueError("fail_task failed: %s" % reason)

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers (never a task)."""
        return a + b

    return mcp


def main(argv):
    if argv[:1] == ["stdio"]:
        build().run(show_banner=False)
    elif argv[:1] == ["http"] and (len(argv) >= 2 or os.environ.get("INTEROP_TASKS_PORT")):
        port = int(argv[1] if len(argv) >= 2 else os.environ["INTEROP_TASKS_PORT"])
        build().run("http", host="127.0.0.1", port=port, show_banner=False)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
