"""MCP over HTTP on `papers serve`: how long a warm `search` tool call takes,
and how large the answers are.

Usage: python bench/mcp_latency.py URL QUERIES_FILE [ROUNDS]

URL is a running server's `/mcp`. Each query of QUERIES_FILE (one a line,
or JSON Lines with a `query` field, as eval/queries.jsonl)
is asked ROUNDS times (default 3) after a warm-up, two ways, alternating:
through the official Python SDK's client (what an agent's client pays) and
as a bare JSON-RPC POST (what the server itself takes). Prints the median
and 90th percentile of each, and the bytes (and bytes / 4 as tokens) of the
default answer and of the largest one (k 50, detail abstract) per query.
"""

import asyncio
import http.client
import json
import statistics
import sys
import time
from urllib.parse import urlparse

from mcp import Client


def post(connection, path, body):
    connection.request(
        "POST",
        path,
        body=json.dumps(body),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    response = connection.getresponse()
    data = response.read()
    if response.status != 200:
        raise SystemExit(f"{response.status}: {data[:200]!r}")
    return data


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p * (len(values) - 1))))]


async def main(url, queries_file, rounds):
    lines = [line.strip() for line in open(queries_file, encoding="utf-8") if line.strip()]
    queries = [json.loads(line)["query"] if line.startswith("{") else line for line in lines]
    target = urlparse(url)
    connection = http.client.HTTPConnection(target.hostname, target.port)
    sdk_ms, raw_ms, default_bytes, largest_bytes = [], [], [], []
    async with Client(url) as client:
        for q in queries[:5]:
            await client.call_tool("search", {"query": q})
        for round_ in range(rounds):
            for i, q in enumerate(queries):
                started = time.perf_counter()
                result = await client.call_tool("search", {"query": q})
                sdk_ms.append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise SystemExit(f"{q}: {result.content[0].text}")
                request = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": q}},
                }
                started = time.perf_counter()
                body = post(connection, target.path, request)
                raw_ms.append((time.perf_counter() - started) * 1000)
                if round_ == 0:
                    default_bytes.append(len(body))
                    request["params"]["arguments"].update({"k": 50, "detail": "abstract", "min_score": 0})
                    largest_bytes.append(len(post(connection, target.path, request)))
    print(f"queries: {len(queries)}, rounds: {rounds}")
    for name, ms in [("SDK client call_tool", sdk_ms), ("bare JSON-RPC POST", raw_ms)]:
        print(f"{name}: p50 {statistics.median(ms):.1f} ms, p90 {percentile(ms, 0.9):.1f} ms ({len(ms)} calls)")
    for name, sizes in [("default search answer", default_bytes), ("k 50 detail abstract", largest_bytes)]:
        print(
            f"{name}: median {statistics.median(sizes)} bytes (~{statistics.median(sizes) // 4} tokens), "
            f"largest {max(sizes)} bytes (~{max(sizes) // 4} tokens)"
        )


if __name__ == "__main__":
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    asyncio.run(main(sys.argv[1], sys.argv[2], rounds))
