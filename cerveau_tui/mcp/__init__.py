"""MCP: tools from the person's MCP servers, the servers inside the sandbox, the prompt's cache kept.

- config: `[mcp.servers.NAME]` in the person's config (config_sections.McpServerConfig); a
  workspace's servers wait for the person's trust like the rest of its config, a repository's
  `.mcp.json` is only shown as a suggestion (suggest.py).
- launch.py: a stdio server's command resolved by the harness and run through the sandbox's
  `EnforcingRunner.start` (the workspace view, no home, no network unless granted per server
  through the proxy, by host); a venv it lives in shown read-only.
- wire.py: JSON-RPC 2.0 over stdio (newline-delimited) and streamable HTTP, every message
  bounded; client.py: initialize, tools/list, tools/call.
- hub.py: the session's servers, started once, their tool catalogue frozen at start.
- index.py: the prefix's short index (server, tool, one line each, under a token budget).
- schema.py: the arguments checked against a tool's inputSchema before the call.
- result.py: a result bounded and escaped like a command's output.

Why not the official SDK (mcp 2.3.0), measured on this machine: it adds 19 packages (a second
httpx, starlette, uvicorn, cryptography, jsonschema, opentelemetry: 44 MB in a fresh venv) and
0.72 s and 65 MB of memory to import its client; it is asyncio-only, and its stdio client starts
the server itself on the host (anyio's process), where ours must start through the sandbox's
launcher. The wire protocol a client needs is four methods of newline-delimited JSON-RPC.
"""
