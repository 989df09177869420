"""`contextdesk mcp …`: the MCP servers, configured and tried from the terminal."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from desktop_app.cli.arguments import key_values
from desktop_app.core.errors import ContextDeskError, ErrorKind

if TYPE_CHECKING:
    from desktop_app.chats import Engine


def cmd_mcp(engine: Engine, args: argparse.Namespace) -> int:
    return {
        "list": _list,
        "add": _add,
        "remove": _remove,
        "test": _test,
        "import": _import,
        "resources": _resources,
        "prompts": _prompts,
    }[args.mcp_command](engine, args)


def _list(engine: Engine, args: argparse.Namespace) -> int:
    servers = engine.tool_servers.configured()
    skipped = engine.tool_servers.skipped()
    if args.json:
        print(json.dumps({s.name: s.to_json() for s in servers}, indent=2))
        for name, why in skipped.items():
            print(f"Skipped {name}: {why}", file=sys.stderr)
        return 0
    for name, why in skipped.items():
        print(f"{name:<16} skipped: {why}")
    if not servers and not skipped:
        print("No MCP servers. Add one with `contextdesk mcp add NAME -- COMMAND [ARGS…]`.")
        return 0
    for server in servers:
        secrets = [*server.env, *server.headers]
        kept = f"  (in the keyring: {', '.join(secrets)})" if secrets else ""
        if server.file_env:
            kept += f"  (in mcp.json: {', '.join(name for name, _ in server.file_env)})"
        print(f"{server.name:<16} {server.transport:<5} {server.where}{kept}")
    return 0


def _add(engine: Engine, args: argparse.Namespace) -> int:
    if bool(args.server_command) == bool(args.url):
        raise ContextDeskError(
            "Command or URL",
            "Give the server's command after --, or its --url (one of them).",
            kind=ErrorKind.USAGE,
        )
    server = engine.tool_servers.add(
        args.name,
        command=args.server_command,
        url=args.url,
        env=key_values(args.env),
        headers=key_values(args.header),
        call_timeout=args.timeout,
    )
    print(f"Added {args.name}: {server.where}. Try it with `contextdesk mcp test {args.name}`.")
    return 0


def _remove(engine: Engine, args: argparse.Namespace) -> int:
    server = engine.tool_servers.remove(args.name)
    print(f"Removed {server.name} ({server.where})." if server.where else f"Removed {server.name}.")
    return 0


def _resources(engine: Engine, args: argparse.Namespace) -> int:
    found = engine.tool_servers.resources(args.name)
    if args.json:
        listed = [
            {"uri": r.uri, "name": r.name, "description": r.description, "mime_type": r.mime_type}
            for r in found
        ]
        print(json.dumps(listed, ensure_ascii=False, indent=2))
        return 0
    for r in found:
        kind = f" ({r.mime_type})" if r.mime_type else ""
        print(f"{r.uri}  {r.name}{kind}" + (f" — {r.description}" if r.description else ""))
    if not found:
        print(f"{args.name} offers no resources.")
    return 0


def _prompts(engine: Engine, args: argparse.Namespace) -> int:
    found = engine.tool_servers.prompts(args.name)
    if args.json:
        listed = [
            {
                "name": p.name,
                "description": p.description,
                "arguments": [
                    {"name": n, "description": d, "required": r} for n, d, r in p.arguments
                ],
            }
            for p in found
        ]
        print(json.dumps(listed, ensure_ascii=False, indent=2))
        return 0
    for p in found:
        takes = ", ".join(n + ("" if r else "?") for n, _d, r in p.arguments)
        print(f"/{p.name}({takes})" + (f" — {p.description}" if p.description else ""))
    if not found:
        print(f"{args.name} offers no prompts.")
    return 0


def _test(engine: Engine, args: argparse.Namespace) -> int:
    servers = engine.tool_servers
    engine.mcp_config().server(args.name)  # not configured, or skipped: says why
    if args.name not in {s.name for s in servers.configured()}:
        known = ", ".join(s.name for s in servers.configured()) or "none are configured"
        raise ContextDeskError(
            "No such MCP server",
            f"{args.name!r} is not configured ({known}).",
            kind=ErrorKind.NOT_FOUND,
        )
    servers.start([args.name], wait=True)
    view = next(v for v in servers.views() if v.name == args.name)
    if args.json:
        print(
            json.dumps(
                {
                    "server": view.name,
                    "status": view.status,
                    "protocol": view.protocol,
                    "error": view.error,
                    "withheld": view.withheld,
                    "tools": [{"name": t.name, "tokens": t.tokens} for t in view.tools],
                    "tokens": view.tokens,
                },
                indent=2,
            )
        )
    elif view.withheld:
        print(
            f"{view.name}: ready, but its tools are withheld from every chat: {view.withheld}.",
            file=sys.stderr,
        )
    elif view.error:
        print(f"{view.name}: {view.status} — {view.error}", file=sys.stderr)
        if view.log_path:
            print(f"Its output is in {view.log_path}", file=sys.stderr)
    else:
        print(f"{view.name}: {view.status}, MCP {view.protocol}, {len(view.tools)} tools")
        for tool in view.tools:
            print(f"  {tool.name:<40} ≈{tool.tokens:,} tokens")
        print(
            f"Tool definitions: ≈{view.tokens:,} tokens in every request of a chat that offers them"
        )
    return 0 if view.status == "ready" and not view.withheld else 1


def _import(engine: Engine, args: argparse.Namespace) -> int:
    from desktop_app.config.errors import SecretsNeedKeyring

    servers = engine.tool_servers
    try:
        report = servers.import_claude_desktop(args.file, env_in_file=args.env_in_file)
    except SecretsNeedKeyring as exc:
        print(f"{exc.title}: {exc.message}", file=sys.stderr)
        print(
            f"To keep them in {servers.config_path()} instead (readable only by you, but "
            "in plain text), run it again with --env-in-file.",
            file=sys.stderr,
        )
        return 1
    for name in report.added:
        print(f"Added {name}")
    for line in report.skipped:
        print(f"Skipped {line}", file=sys.stderr)
    for line in report.warnings:
        print(f"Warning: {line}", file=sys.stderr)
    if report.in_file:
        print(
            f"Warning: the env values of {', '.join(report.in_file)} are kept in plain text in "
            f"{servers.config_path()}, readable only by you (not in a keyring).",
            file=sys.stderr,
        )
    if not report.added and not report.skipped:
        print("Claude desktop's configuration has no MCP servers.")
    return 0
