"""A real MCP client (the official Python SDK) against `papers mcp`.

Usage: python client.py PAPERS_BINARY INDEX_DIR

Starts `papers --index INDEX_DIR mcp` over stdio, lists its tools, calls
each, and prints the transcript as one JSON object on stdout for the Rust
test (tests/integration/mcp.rs) to check.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def result(r):
    """A tool result as plain JSON: is_error and the text blocks."""
    error = getattr(r, "is_error", None)
    if error is None:
        error = getattr(r, "isError", False)
    return {"is_error": bool(error), "text": [c.text for c in r.content if c.type == "text"]}


async def main(binary, index):
    env = {k: v for k, v in os.environ.items() if k.startswith(("PAPERS_", "HF_", "HOME", "PATH"))}
    server = StdioServerParameters(command=binary, args=["--index", index, "mcp"], env=env)
    transcript = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            info = init.server_info if hasattr(init, "server_info") else init.serverInfo
            transcript["server"] = info.name
            tools = await session.list_tools()
            transcript["tools"] = {
                t.name: sorted((t.input_schema if hasattr(t, "input_schema") else t.inputSchema).get("properties", {}))
                for t in tools.tools
            }
            calls = [
                ("search", {"query": "position encoding for long contexts", "k": 3}),
                ("info", {}),
            ]
            for name, args in calls:
                transcript[name] = result(await session.call_tool(name, args))
            first = json.loads(transcript["search"]["text"][0])[0]["id"]
            transcript["show"] = result(await session.call_tool("show", {"id": first[:8]}))
            transcript["similar"] = result(
                await session.call_tool("similar", {"ids": [first], "not": [], "k": 2})
            )
            transcript["show_unknown"] = result(await session.call_tool("show", {"id": "ffffffff"}))
            transcript["search_k0"] = result(await session.call_tool("search", {"query": "x", "k": 0}))
            transcript["similar_none"] = result(await session.call_tool("similar", {"ids": []}))
            transcript["feed"] = result(await session.call_tool("feed", {"k": 3}))
            transcript["tags"] = result(await session.call_tool("tags", {}))
            transcript["feed_unknown"] = result(await session.call_tool("feed", {"tags": ["nope"]}))
    print(json.dumps(transcript))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
