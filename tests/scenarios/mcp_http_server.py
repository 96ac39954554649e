"""A real remote MCP server for the tests: the `mcp` SDK's server over streamable HTTP (under
uvicorn), refusing requests without `Authorization: Bearer TOKEN`.
Usage: mcp_http_server.py PORT TOKEN"""

import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("shouter")


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


def guarded(app: Any, token: str) -> Any:
    async def asgi(scope: dict, receive: Any, send: Any) -> None:
        wanted = f"Bearer {token}".encode()
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != wanted:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"a bearer token is needed"})
            return
        await app(scope, receive, send)

    return asgi


if __name__ == "__main__":
    port, token = int(sys.argv[1]), sys.argv[2]
    app = guarded(server.streamable_http_app(), token)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
