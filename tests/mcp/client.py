"""Drives `mira mcp` with the official MCP Python SDK (tests/it/mcp_server.rs runs this).

argv: MIRA_BINARY PROJECT_DIR. The server starts in another directory; the project comes
from the root this client advertises. Prints one JSON object with what each call returned;
the Rust test asserts on it. Calls that should fail record their error instead of raising.
"""

import asyncio
import json
import os
import sys

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "text", None) is not None)


async def main(binary, project):
    async def roots(_context):
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{project}", name="project")])

    params = StdioServerParameters(
        command=binary, args=["mcp"], env=dict(os.environ), cwd=os.environ["HOME"]
    )
    out = {"calls": {}, "errors": {}}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=roots) as s:
            init = await s.initialize()
            out["protocol"] = str(init.protocol_version)
            out["instructions"] = init.instructions or ""
            out["tools"] = sorted(t.name for t in (await s.list_tools()).tools)
            out["schemas"] = {t.name: t.input_schema for t in (await s.list_tools()).tools}

            async def call(label, name, args):
                r = await s.call_tool(name, args)
                out["calls"][label] = {"error": bool(r.is_error), "text": text_of(r)}

            async def bad(label, name, args):
                try:
                    r = await s.call_tool(name, args)
                    out["errors"][label] = {"kind": "result", "error": bool(r.is_error), "text": text_of(r)}
                except MCPError as e:
                    out["errors"][label] = {"kind": "mcp", "code": e.error.code, "text": e.error.message}

            await call("remember", "remember", {"text": "Releases are cut on Thursdays."})
            await call("preference", "remember", {"text": "Prefer tabs over spaces in Go files.", "kind": "preference"})
            await call("recall_cli", "recall", {"query": "staging database port"})
            await call("recall_editor", "recall", {"query": "ArgoCD deploy"})
            await bad("wrong_type", "recall", {"query": 42})
            await bad("missing_arg", "remember", {})
            await bad("unknown_tool", "no_such_tool", {})
            await bad("bad_id", "forget", {"id": "twelve"})
            await bad("bad_kind", "remember", {"text": "x", "kind": "rumour"})
            await call("recall_after_errors", "recall", {"query": "Thursdays"})
            await call("goal", "goals", {"action": "add", "title": "Ship the MCP server"})
            await call("task", "tasks", {"action": "add", "title": "Write the README section"})
            await call("goals", "goals", {"action": "list"})
            await call("tasks", "tasks", {"action": "list"})
            await call("memories", "memories", {})
            await call("find_symbol", "find_symbol", {"query": "parse_config"})
            await call("symbol_context", "symbol_context", {"name": "parse_config"})
            await call("secret_code", "symbol_context", {"name": "connect"})
            await call("search_code", "search_code", {"query": "read the configuration file"})
            await call("index_status", "index_status", {})
            prompts = await s.list_prompts()
            out["prompts"] = [p.name for p in prompts.prompts]
            prompt = await s.get_prompt("session-start")
            out["prompt"] = "\n".join(m.content.text for m in prompt.messages)
            resources = await s.list_resources()
            out["resources"] = [str(r.uri) for r in resources.resources]
            res = await s.read_resource("mira://session-start")
            out["resource"] = "\n".join(c.text for c in res.contents)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
