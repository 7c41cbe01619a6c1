# A minimal stdlib MCP client over Streamable HTTP, the floor of the bench's HTTP cold
# figures. MIT License.
"""``python3 -m minimal_http_client legacy|modern URL`` (from bench/): ``tools`` over HTTP.

http.client on one kept connection (TCP_NODELAY, as mcp_invoke sets it),
and the fewest requests the era needs: initialize, notifications/initialized
and tools/list (legacy); tools/list with the _meta and headers of 2026-07-28
(modern). No server/discover, no standing GET stream, no DELETE of the
session, no event streams (the server answers with JSON). It prints name
and the description's first line, one line per tool, as mcp_invoke does
after the signature. Standard library only.
"""

import http.client
import json
import socket
import sys
from urllib.parse import urlsplit


def main(era, url):
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}

    def post(message, more):
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        conn.request("POST", parts.path, body, dict(headers, **more))
        response = conn.getresponse()
        return response, response.read()

    if era == "legacy":
        response, body = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "minimal", "version": "1"}}},
                              {})
        session = {"Mcp-Session-Id": response.getheader("Mcp-Session-Id"),
                   "MCP-Protocol-Version": json.loads(body)["result"]["protocolVersion"]}
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        response, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session)
    else:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        response, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                               "params": {"_meta": meta}},
                              {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
    answer = json.loads(body)
    if "result" not in answer:
        sys.exit("minimal client: %s" % answer.get("error"))
    for tool in answer["result"]["tools"]:
        description = tool.get("description", "").split("\n")[0]
        sys.stdout.write("%s - %s\n" % (tool["name"], description))
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
