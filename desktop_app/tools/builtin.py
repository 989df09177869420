"""The built-in tools: pin_fact, list_files, read_file, write_file, edit_file,
run_command (off by default, always asks) and current_time."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop_app.context.project import KnowledgeFile
from desktop_app.context.trimming import TrimPolicy
from desktop_app.core.errors import ContextDeskError
from desktop_app.core.ports import ApprovalPolicy, ToolOutcome
from desktop_app.tools import confined
from desktop_app.tools.process import DEFAULT_TIMEOUT_S, run_command
from desktop_app.tools.registry import Tool, ToolContext
from desktop_app.tools.workspace import check_request, confine, display

READ_LIMIT = 2_000_000  # bytes: bigger files are refused with a hint
LIST_LIMIT = 500


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _workspace(ctx: ToolContext) -> Path:
    if ctx.workspace is None:
        raise ContextDeskError(
            "No workspace",
            "This chat has no workspace folder; the user can choose one in Settings.",
        )
    return ctx.workspace


def _path(args: dict[str, Any], ctx: ToolContext) -> Path:
    return confine(_workspace(ctx), str(args.get("path", ".")))


# -- handlers ----------------------------------------------------------------------------------


def current_time(args: dict[str, Any], ctx: ToolContext) -> str:
    now = datetime.now().astimezone()
    utc = datetime.now(UTC).isoformat(timespec="seconds")
    return f"{now.isoformat(timespec='seconds')} (local, {now.tzname()}); {utc} UTC"


def pin_fact(args: dict[str, Any], ctx: ToolContext) -> str:
    fields = tuple((str(k), str(v)) for k, v in (args.get("fields") or {}).items())
    if ctx.on_pin is None:
        return "Pinning is not available in this chat."
    return ctx.on_pin(str(args["text"]), fields)


def list_files(args: dict[str, Any], ctx: ToolContext) -> str:
    request = str(args.get("path", "."))
    if request != ".":
        check_request(request)
    if confined.supported():
        entries, shown = confined.list_folder(_workspace(ctx), request)
    else:
        entries, shown = _list_by_path(_path(args, ctx), ctx)
    entries.sort(key=lambda e: (e.kind != "folder", e.name.lower()))
    lines = [_entry(e) for e in entries[:LIST_LIMIT]]
    more = f"\n… and {len(entries) - LIST_LIMIT} more" if len(entries) > LIST_LIMIT else ""
    header = f"{shown}: {len(entries)} entries"
    return header + ("\n" + "\n".join(lines) if lines else "") + more


def _entry(entry: confined.Entry) -> str:
    if entry.kind == "link":
        return f"{entry.name} -> (a link; followed only if it stays in the workspace)"
    if entry.kind == "folder":
        return f"{entry.name}/"
    return f"{entry.name}  ({entry.size:,} bytes)"


def read_file(args: dict[str, Any], ctx: ToolContext) -> str:
    request = str(args["path"])
    check_request(request)
    if confined.supported():
        data, _ = confined.read_bytes(_workspace(ctx), request, READ_LIMIT)
    else:
        data = _read_by_path(_path(args, ctx), request)
    if b"\x00" in data[:8192]:
        raise ContextDeskError("Binary file", f"{request} looks binary; read_file reads text.")
    return data.decode("utf-8", "replace")


def write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    request = str(args["path"])
    check_request(request)
    content = str(args["content"])
    if confined.supported():
        shown = confined.write_bytes(_workspace(ctx), request, content.encode("utf-8"))
    else:
        shown = _write_by_path(ctx, request, content)
    return f"Wrote {len(content):,} characters to {shown}."


# -- where a folder's descriptor cannot be used (Windows): by resolved path -------------------


def _list_by_path(folder: Path, ctx: ToolContext) -> tuple[list[confined.Entry], str]:
    if not folder.is_dir():
        raise ContextDeskError("Not a folder", f"{folder.name} is not a folder in the workspace.")
    entries = [
        confined.Entry(
            p.name,
            "link" if p.is_symlink() else "folder" if p.is_dir() else "file",
            p.stat().st_size if p.is_file() else 0,
        )
        for p in folder.iterdir()
    ]
    return entries, display(_workspace(ctx), folder)


def _read_by_path(path: Path, request: str) -> bytes:
    if not path.is_file():
        raise ContextDeskError("No such file", f"{request} does not exist in the workspace.")
    size = path.stat().st_size
    if size > READ_LIMIT:
        raise ContextDeskError(
            "File too large", f"{request} is {size:,} bytes; read_file reads up to {READ_LIMIT:,}."
        )
    return path.read_bytes()


def _write_by_path(ctx: ToolContext, request: str, content: str) -> str:
    path = confine(_workspace(ctx), request)
    path.parent.mkdir(parents=True, exist_ok=True)
    confine(_workspace(ctx), request)  # again: the folders now exist
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return display(_workspace(ctx), path)


def edit_file(args: dict[str, Any], ctx: ToolContext) -> str:
    text = read_file(args, ctx)
    old, new = str(args["old_string"]), str(args["new_string"])
    count = text.count(old)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise ContextDeskError(
            "Edit not applied", f"old_string {where} in {args['path']}; it must occur exactly once."
        )
    write_file({"path": args["path"], "content": text.replace(old, new, 1)}, ctx)
    return f"Edited {args['path']}: replaced {len(old):,} characters with {len(new):,}."


def command(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    timeout = float(args.get("timeout") or DEFAULT_TIMEOUT_S)
    result = run_command(
        str(args["command"]), _workspace(ctx), ctx.cancel, timeout, extra_env=ctx.command_env
    )
    if result.timed_out:
        return ToolOutcome(
            f"{result.output}\n[killed after {timeout:g} s: the command did not finish]",
            is_error=True,
        )
    status = f"[exit code {result.exit_code}]"
    return ToolOutcome(
        f"{result.output}\n{status}" if result.output else status, is_error=result.exit_code != 0
    )


# -- descriptions for the approval dialog --------------------------------------------------------


def describe_write(args: dict[str, Any], ctx: ToolContext) -> str:
    return f"Write {len(str(args.get('content', ''))):,} characters to {_path(args, ctx)}"


def describe_edit(args: dict[str, Any], ctx: ToolContext) -> str:
    return f"Edit {_path(args, ctx)}: replace {len(str(args.get('old_string', ''))):,} characters"


def describe_command(args: dict[str, Any], ctx: ToolContext) -> str:
    return f"Run in {_workspace(ctx)}:\n{args.get('command', '')}"


def describe_path(args: dict[str, Any], ctx: ToolContext) -> str:
    return str(_path(args, ctx))


# -- the tools ------------------------------------------------------------------------------------

PATH = {"type": "string", "minLength": 1, "description": "A path relative to the workspace folder."}

CURRENT_TIME = Tool("current_time", "The current date and time.", _obj({}, []), current_time)
PIN_FACT = Tool(
    "pin_fact",
    "Propose a fact to pin: it is then sent verbatim with every message and never summarized. "
    "Use for amounts, dates, ids, names and the user's constraints that must not be lost.",
    _obj({"text": {"type": "string", "minLength": 1}, "fields": {"type": "object"}}, ["text"]),
    pin_fact,
)
LIST_FILES = Tool(
    "list_files",
    "List a folder of the workspace.",
    _obj({"path": PATH}, []),
    list_files,
    describe=describe_path,
)
READ_FILE = Tool(
    "read_file",
    "Read a text file of the workspace.",
    _obj({"path": PATH}, ["path"]),
    read_file,
    trim=TrimPolicy(cap_tokens=8000),
    describe=describe_path,
)
WRITE_FILE = Tool(
    "write_file",
    "Create or overwrite a text file in the workspace.",
    _obj({"path": PATH, "content": {"type": "string"}}, ["path", "content"]),
    write_file,
    policy=ApprovalPolicy.ASK,
    describe=describe_write,
)
EDIT_FILE = Tool(
    "edit_file",
    "Replace one exact occurrence of old_string with new_string in a workspace file.",
    _obj(
        {
            "path": PATH,
            "old_string": {"type": "string", "minLength": 1},
            "new_string": {"type": "string"},
        },
        ["path", "old_string", "new_string"],
    ),
    edit_file,
    policy=ApprovalPolicy.ASK,
    describe=describe_edit,
)
RUN_COMMAND = Tool(
    "run_command",
    "Run a shell command in the workspace folder (no input; output is capped).",
    _obj(
        {
            "command": {"type": "string", "minLength": 1},
            "timeout": {"type": "number", "minimum": 1, "maximum": 3600},
        },
        ["command"],
    ),
    command,
    policy=ApprovalPolicy.ASK,
    timeout=DEFAULT_TIMEOUT_S + 10,
    describe=describe_command,
)


def builtin_tools(*, files: bool = True, commands: bool = False) -> list[Tool]:
    """The built-ins a chat offers: file tools when it has a workspace; run_command only
    when the user turned it on."""
    tools = [CURRENT_TIME, PIN_FACT]
    if files:
        tools += [LIST_FILES, READ_FILE, WRITE_FILE, EDIT_FILE]
    if commands:
        tools.append(RUN_COMMAND)
    return tools


def read_project_file(files: Sequence[KnowledgeFile]) -> Tool:
    """The project's knowledge files, read by name when the project sends them on demand
    (they are only listed in the prompt). Reading is free of side effects: no asking."""
    by_name = {f.name: f for f in files}

    def read(args: dict[str, Any], ctx: ToolContext) -> str:
        name = str(args["name"])
        file = by_name.get(name)
        if file is None:
            known = ", ".join(by_name) or "none"
            raise ContextDeskError("No such file", f"No project file is named {name!r} ({known}).")
        if file.document and not file.text.strip():
            return (
                f"{name} is a scanned PDF with no text layer: it can be read only as a "
                "document, which this project sends when its knowledge is sent whole."
            )
        return file.text

    return Tool(
        "read_project_file",
        "Read one of the project's knowledge files, by the name the prompt lists.",
        _obj({"name": {"type": "string", "enum": list(by_name)}}, ["name"]),
        read,
        trim=TrimPolicy(cap_tokens=8000),
    )
