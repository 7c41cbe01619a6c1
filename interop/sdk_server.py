"""An MCP server written with the Python SDK (`mcp` 2.x), for `make interop`.

    python sdk_server.py stdio
    python sdk_server.py http PORT [--stateless] [--json-response]

Over HTTP it serves Streamable HTTP at http://127.0.0.1:PORT/mcp. The SDK
serves both protocol eras on one endpoint: the handshake era (initialize) and
2026-07-28 (server/discover).
"""
import asyncio
import sys
from typing import Annotated

from pydantic import BaseModel, Field

from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, Resolve
from mcp_types import Completion, PromptReference, ResourceTemplateReference


class Point(BaseModel):
    x: int
    y: int
    label: str = "origin"


class Person(BaseModel):
    name: str = Field(description="Your name")


server = MCPServer(name="interop-sdk", version="1.0.0",
                   instructions="Python SDK server for mcp_invoke's interop run.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def describe(point: Point, scale: float = 1.0, tags: list[str] | None = None,
             enabled: bool = False, note: str | None = None) -> str:
    """Describe a point (pydantic model, optional and nullable arguments)."""
    return "%s at (%s, %s) scale=%r tags=%s enabled=%s note=%s" % (
        point.label, point.x * scale, point.y * scale, scale, ",".join(tags or []),
        enabled, note)


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, saying nothing until done."""
    await asyncio.sleep(seconds)
    return "slept %s" % seconds


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress each second."""
    done = 0.0
    while done < seconds:
        await ctx.report_progress(done, seconds, "sleeping")
        await asyncio.sleep(min(1.0, seconds - done))
        done += 1.0
    return "slept %s" % seconds


def ask_name() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


@server.tool()
def greet_me(person: Annotated[Person, Resolve(ask_name)]) -> str:
    """Ask the client for a name (elicitation), then greet it."""
    return "Hello, %s!" % person.name


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@server.resource("sdk://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the SDK"


@server.resource("sdk://colors/{color}", name="color", mime_type="text/plain")
def color(color: str) -> str:
    """A color by name."""
    return "color: %s" % color


@server.prompt()
def review(code: str, style: str = "terse") -> str:
    """Ask for a code review."""
    return "Review this code (%s): %s" % (style, code)


COLORS = ["red", "green", "blue", "black"]
STYLES = ["terse", "thorough", "friendly"]


@server.completion()
async def complete(ref, argument, context):
    if isinstance(ref, ResourceTemplateReference) and argument.name == "color":
        return Completion(values=[c for c in COLORS if c.startswith(argument.value)])
    if isinstance(ref, PromptReference) and argument.name == "style":
        return Completion(values=[s for s in STYLES if s.startswith(argument.value)])
    return None


def main(argv):
    if argv[:1] == ["stdio"]:
        server.run()
    elif argv[:1] == ["http"] and len(argv) >= 2:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]),
                   stateless_http="--stateless" in argv,
                   json_response="--json-response" in argv)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
