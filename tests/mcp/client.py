"""A real MCP client (the official Python SDK, v2) against papers.

Usage:
  python client.py stdio MODE PAPERS_BINARY INDEX_DIR [--allow-write]
  python client.py http MODE URL

MODE is the SDK's `auto` (tries the 2026-07-28 `server/discover`, falls
back to `initialize`) or `legacy` (the `initialize` handshake). Over stdio
it starts `papers --index INDEX_DIR mcp`; over HTTP it talks to a running
`papers serve` at URL (`http://127.0.0.1:PORT/mcp`). It lists the tools,
prompts and resource templates, calls each tool (the SDK checks every
`structuredContent` against the tool's `outputSchema` and raises if it does
not fit), reads a paper resource, gets the prompts, and prints the
transcript as one JSON object for the Rust tests (tests/integration/mcp.rs).
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


def size(result):
    """The bytes of a result as it crosses the wire."""
    return len(result.model_dump_json(by_alias=True, exclude_none=True))


def outcome(r):
    """A tool result as plain JSON."""
    return {
        "is_error": bool(r.is_error),
        "text": [c.text for c in r.content if c.type == "text"],
        "links": [str(c.uri) for c in r.content if c.type == "resource_link"],
        "structured": r.structured_content,
        "bytes": size(r),
    }


async def session(target, mode, write):
    t = {}
    async with Client(target, mode=mode) as client:
        t["protocol"] = client.protocol_version
        t["server"] = client.server_info.name if client.server_info else None
        t["instructions"] = client.instructions
        tools = (await client.list_tools()).tools
        t["tools"] = [
            {
                "name": tool.name,
                "title": tool.title,
                "properties": sorted(tool.input_schema.get("properties", {})),
                "output_type": (tool.output_schema or {}).get("type"),
                "read_only": tool.annotations.read_only_hint if tool.annotations else None,
            }
            for tool in tools
        ]
        t["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
        t["templates"] = [
            r.uri_template for r in (await client.list_resource_templates()).resource_templates
        ]

        async def call(name, args):
            try:
                return outcome(await client.call_tool(name, args))
            except Exception as e:  # a protocol error or a schema mismatch
                return {"exception": f"{type(e).__name__}: {e}"}

        t["search"] = await call("search", {"query": "position encoding for long contexts"})
        t["search_k3"] = await call("search", {"query": "position encoding for long contexts", "k": 3})
        t["reading_list"] = await call("reading_list", {})
        t["search_typo"] = await call("search", {"query": "positon encodng for long contexts", "k": 3})
        t["search_strict"] = await call("search", {"query": "zzqxv qwpfj", "k": 3, "strict": True})
        t["search_none"] = await call("search", {"query": "zzqxv qwpfj", "k": 3})
        info = await call("info", {})
        t["info"] = info
        first_file = info["structured"]["sources"][0]["file"] if "structured" in info else None
        t["search_filtered"] = await call(
            "search",
            {"query": "attention", "k": 5, "mode": "lexical", "detail": "titles", "in": [first_file]},
        )
        t["search_largest"] = await call(
            "search", {"query": "language models", "k": 50, "detail": "abstract", "min_score": 0}
        )
        first = t["search_k3"]["structured"]["hits"][0]["id"]
        t["show"] = await call("show", {"id": first[:8]})
        t["similar"] = await call("similar", {"ids": [first], "k": 2, "detail": "titles"})
        t["feed"] = await call("feed", {"k": 3})
        # `tag`, as the CLI and HTTP name it, beside the schema's `tags`.
        t["feed_tag"] = await call("feed", {"tag": "pos", "k": 3})
        t["tags"] = await call("tags", {})
        resource = await client.read_resource(f"papers://paper/{first}")
        t["resource"] = [json.loads(c.text) for c in resource.contents]
        second = t["search_k3"]["structured"]["hits"][1]["id"]
        compare = await client.get_prompt("compare", {"ids": f"{first} {second}"})
        t["prompt_compare"] = [m.content.type for m in compare.messages]
        digest = await client.get_prompt("digest", {"tag": "pos"})
        t["prompt_digest"] = digest.messages[0].content.text
        t["errors"] = {
            "show_unknown": await call("show", {"id": "ffffffff"}),
            "search_k0": await call("search", {"query": "x", "k": 0}),
            "search_k_text": await call("search", {"query": "x", "k": "ten"}),
            "search_k_over": await call("search", {"query": "x", "k": 51}),
            "search_bad_date": await call("search", {"query": "x", "since": "2024-02-30"}),
            "search_unknown_arg": await call("search", {"query": "x", "limit": 3}),
            "similar_none": await call("similar", {"ids": []}),
            "feed_unknown": await call("feed", {"tags": ["nope"]}),
            "feed_tag_unknown": await call("feed", {"tag": "nope"}),
            "detail_bad": await call("search", {"query": "x", "detail": "everything"}),
        }
        if write:
            t["tag"] = await call("tag", {"tag": "agent", "ids": [first]})
            t["tags_after"] = await call("tags", {})
            t["untag"] = await call("untag", {"tag": "agent", "ids": [first]})
            feed_top = t["feed"]["structured"]["hits"][0]["id"]
            t["mark"] = await call("mark", {"state": "read", "ids": [feed_top, feed_top[:8]]})
            t["feed_after_mark"] = await call("feed", {"k": 3})
            t["mark_new"] = await call("mark", {"state": "new", "ids": [feed_top]})
            t["mark_bad"] = await call("mark", {"state": "skimmed", "ids": [feed_top]})
        else:
            t["tag_refused"] = await call("tag", {"tag": "agent", "ids": [first]})
    return t


async def main(argv):
    transport, mode = argv[0], argv[1]
    if transport == "stdio":
        binary, index = argv[2], argv[3]
        extra = argv[4:]
        env = {k: v for k, v in os.environ.items() if k.startswith(("PAPERS_", "HF_", "HOME", "PATH"))}
        target = StdioServerParameters(
            command=binary, args=["--index", index, "mcp", *extra], env=env
        )
        write = "--allow-write" in extra
    else:
        target, write = argv[2], False
    print(json.dumps(await session(target, mode, write)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
