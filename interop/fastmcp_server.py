"""An MCP server written with fastmcp, for `make interop`.

    python fastmcp_server.py stdio
    python fastmcp_server.py http PORT [--oauth] [--scope SCOPE]

Over HTTP it serves Streamable HTTP at http://127.0.0.1:PORT/mcp. --oauth puts
fastmcp's in-memory OAuth provider in front of it (dynamic registration,
approval without a person); --scope makes that scope required and the only
one a client may register for.
"""
import asyncio
import os
import sys
from typing import Literal

from pydantic import BaseModel

from fastmcp import Context, FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

# Skills served by its skills directory provider (the extension
# io.modelcontextprotocol/skills, for 2026-07-28 clients).
SKILLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "skills")


class Order(BaseModel):
    item: str
    quantity: int = 1


def build(argv):
    auth = None
    if "--oauth" in argv:
        from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
        from mcp.server.auth.settings import ClientRegistrationOptions
        scope = argv[argv.index("--scope") + 1] if "--scope" in argv else None
        scopes = [scope] if scope else None
        auth = InMemoryOAuthProvider(
            base_url="http://127.0.0.1:%s" % argv[1],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=scopes),
            required_scopes=scopes)
    mcp = FastMCP("interop-fastmcp", instructions="fastmcp server for mcp_invoke's interop run.",
                  auth=auth)

    @mcp.tool
    def multiply(a: float, b: float) -> float:
        """Multiply two numbers."""
        return a * b

    @mcp.tool
    def place_order(order: Order, express: bool = False,
                    mode: Literal["pickup", "delivery"] = "pickup") -> dict:
        """Place an order (pydantic model, enum, boolean)."""
        return {"item": order.item, "quantity": order.quantity, "express": express,
                "mode": mode}

    @mcp.tool
    async def wait(seconds: float, ctx: Context) -> str:
        """Wait, reporting progress."""
        await ctx.report_progress(0, seconds)
        await asyncio.sleep(seconds)
        return "waited %s" % seconds

    @mcp.resource("fastmcp://motd")
    def motd() -> str:
        """Message of the day."""
        return "fastmcp says hi"

    @mcp.resource("fastmcp://users/{user_id}")
    def user(user_id: str) -> str:
        """A user by id."""
        return "user %s" % user_id

    @mcp.prompt
    def summarize(text: str) -> str:
        """Summarize a text."""
        return "Summarize: %s" % text

    mcp.add_provider(SkillsDirectoryProvider(SKILLS))
    return mcp


def main(argv):
    if argv[:1] == ["stdio"]:
        build(argv).run(show_banner=False)
    elif argv[:1] == ["http"] and len(argv) >= 2:
        build(argv).run("http", host="127.0.0.1", port=int(argv[1]), show_banner=False)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
