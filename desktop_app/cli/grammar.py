"""The grammar of the `contextdesk` commands (all but the window's: `cli/parser.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop_app.chats import CHAT_FIELDS, PROJECT_DEFAULT_FIELDS
from desktop_app.config.settings import SETTINGS

# `project set PROJECT KEY=VALUE`: a project's own fields (KEY → its attribute)
PROJECT_KEYS = {
    "name": "name",
    "instructions": "instructions",
    "budget": "knowledge_budget",
    "knowledge": "knowledge_mode",
    "model": "model",
    "workspace": "workspace",
    "spend_cap": "spend_cap",  # the most its chats may cost together; 0: no cap
}


def add_commands(sub: Any) -> None:
    """Every command's parser, added to the top-level parser's subparsers."""
    chat = sub.add_parser("chat", help="create, list, show, change or delete chats").add_subparsers(
        dest="chat_command", metavar="ACTION", required=True
    )
    new = chat.add_parser("new", help="create a chat; prints its id")
    new.add_argument("--title", default="New chat")
    new.add_argument("--model")
    new.add_argument("--system", default="")
    new.add_argument("--context-window", type=int)
    new.add_argument(
        "--threshold", type=float, help="auto-compaction threshold, 0–1 (default 0.87)"
    )
    new.add_argument("--keep-recent", type=int, help="recent turns kept whole (default 10)")
    new.add_argument("--project", help="in this project (its id, an id prefix, or its name)")
    move = chat.add_parser("move", help="move a chat into a project (or out: --none)")
    move.add_argument("chat")
    move.add_argument("project", nargs="?")
    move.add_argument("--none", action="store_true", help="out of its project")
    listing = chat.add_parser("list", help="chats by last activity")
    listing.add_argument("--json", action="store_true")
    show = chat.add_parser("show", help="a chat and its messages")
    show.add_argument("chat")
    show.add_argument("--json", action="store_true")
    change = chat.add_parser(
        "set", help=f"change a chat: KEY=VALUE with KEY in {', '.join(CHAT_FIELDS)}"
    )
    change.add_argument("chat")
    change.add_argument("pairs", nargs="+", metavar="KEY=VALUE")
    delete = chat.add_parser("delete", help="move a chat to the trash")
    delete.add_argument("chat")

    send = sub.add_parser("send", help="send one message; the reply streams to stdout")
    send.add_argument("chat")
    send.add_argument("text")
    send.add_argument("--json", action="store_true", help="print the turn's result as JSON")
    send.add_argument(
        "--allow-tools",
        default="",
        metavar="NAME,…",
        help="tools that ask may run without asking (an MCP tool as SERVER.TOOL)",
    )
    send.add_argument(
        "--attach",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="attach a file: a PDF as a document the model reads page by page, or a text file",
    )
    send.add_argument(
        "--as",
        dest="attach_as",
        choices=("document", "text"),
        default="document",
        help="a PDF as a document (its pages, as the model sees them) or as its text (fewer "
        "tokens; no pictures) (document)",
    )
    send.add_argument(
        "--resource",
        action="append",
        default=[],
        metavar="SERVER:URI",
        help="attach an MCP server's resource to the message (see `mcp resources`)",
    )
    send.add_argument(
        "--over-budget",
        action="store_true",
        help="send even if it crosses a hard spending cap (this once)",
    )
    repl = sub.add_parser(
        "repl", help="talk in the terminal (/pin /facts /compact /context /request /export /quit)"
    )
    repl.add_argument("chat")
    repl.add_argument(
        "--allow-tools",
        default="",
        metavar="NAME,…",
        help="tools that ask may run without asking (an MCP tool as SERVER.TOOL)",
    )

    number = "its number in the branch shown, from 1 (as `chat show` and `branch` number them)"
    edit = sub.add_parser(
        "edit",
        help="rewrite message N as TEXT: a new branch beside it, answered (like send)",
    )
    edit.add_argument("chat")
    edit.add_argument("number", type=int, metavar="N", help=f"a message of yours: {number}")
    edit.add_argument("text")
    regenerate = sub.add_parser(
        "regenerate",
        help="answer again the message reply N answers (default: the last reply), as a new branch",
    )
    regenerate.add_argument("chat")
    regenerate.add_argument(
        "number", nargs="?", type=int, metavar="N", help=f"a reply of Claude's: {number}"
    )
    retry = sub.add_parser(
        "retry", help="answer again after a failed or interrupted last reply, beside it"
    )
    retry.add_argument("chat")
    for turn in (edit, regenerate, retry):
        _turn_options(turn)
    for name, text in (
        ("exclude", "leave message N out of the context (the transcript keeps it)"),
        ("include", "put message N back into the context"),
    ):
        change = sub.add_parser(name, help=text)
        change.add_argument("chat")
        change.add_argument("number", type=int, metavar="N", help=number)
        change.add_argument(
            "--dry-run",
            action="store_true",
            help="print the body of the next request as it would be; change nothing",
        )

    pin = sub.add_parser("pin", help="pin a fact: sent verbatim with every message")
    pin.add_argument("chat")
    pin.add_argument("text")
    facts = sub.add_parser("facts", help="the chat's pinned facts")
    facts.add_argument("chat")
    facts.add_argument("--json", action="store_true")
    unpin = sub.add_parser("unpin", help="remove a pinned fact, or reject a suggested one")
    unpin.add_argument("chat")
    unpin.add_argument("fact_id")
    accept = sub.add_parser("accept", help="pin a fact Claude or an import suggested (see `facts`)")
    accept.add_argument("chat")
    accept.add_argument("fact_id")
    accept.add_argument("--text", help="pin it in these words instead")

    handing = sub.add_parser(
        "handoff",
        help="continue a chat in a new one: its pinned facts, a summary, its last turns "
        "verbatim and its project; prints the new chat's id",
    )
    handing.add_argument("chat")
    handing.add_argument(
        "--keep-turns", type=int, default=2, help="the last turns carried verbatim (2)"
    )
    handing.add_argument(
        "--no-model",
        action="store_true",
        help="no summary request: an extractive digest of decisions, numbers, ids and "
        "questions instead",
    )
    handing.add_argument(
        "--move-facts", action="store_true", help="move the pinned facts (default: copy them)"
    )
    handing.add_argument(
        "--drop-fact", action="append", default=[], metavar="FACT_ID", help="leave this fact"
    )
    handing.add_argument(
        "--dry-run", action="store_true", help="show what the new chat would start with"
    )
    handing.add_argument("--json", action="store_true")

    compact = sub.add_parser("compact", help="summarize older turns (preview with --dry-run)")
    compact.add_argument("chat")
    compact.add_argument(
        "--instructions", default="", help='what the summary should focus on, e.g. "the SQL schema"'
    )
    compact.add_argument(
        "--dry-run",
        action="store_true",
        help="show the preview and the fidelity warnings; change nothing",
    )
    context = sub.add_parser(
        "context", help="what the next request holds: sections, and every block's tokens and state"
    )
    context.add_argument("chat")
    context.add_argument("--json", action="store_true")
    context.add_argument("--request", action="store_true", help="print the exact next request body")
    context.add_argument(
        "--draft",
        default="",
        metavar="TEXT",
        help="with --request: the body `send CHAT TEXT` would send",
    )

    requests = sub.add_parser(
        "requests",
        help="every request the chat sent, as sent, with the usage reported; with --find, "
        "which requests carried a text and what stopped it being sent",
    )
    requests.add_argument("chat", nargs="?", help="(with --find alone: every chat)")
    requests.add_argument("number", nargs="?", type=int, help="print this request's body")
    requests.add_argument(
        "--diff",
        nargs=2,
        metavar=("A", "B"),
        help="two requests side by side (numbers, or `next` for the one a send would make)",
    )
    requests.add_argument(
        "--find",
        metavar="TEXT",
        help="the requests that carried TEXT (a fact, an order number, a file name), the "
        "last one, and, if the next request does not carry it, what stopped it",
    )
    requests.add_argument("--json", action="store_true")

    branch = sub.add_parser(
        "branch",
        help="a chat's branches (its edited messages and regenerated replies), or show one",
    )
    branch.add_argument("chat")
    branch.add_argument("number", nargs="?", type=int, help="show this branch (as numbered)")
    branch.add_argument("--json", action="store_true")

    spend = sub.add_parser("spend", help="what the requests of every chat cost, by the price table")
    spend.add_argument("period", nargs="?", choices=("today", "month", "all"), default="month")
    spend.add_argument(
        "--by",
        choices=("day", "model", "chat", "project"),
        help="one row per day, model, chat or project: tokens and money by kind",
    )
    spend.add_argument("--json", action="store_true")

    prices = sub.add_parser(
        "prices",
        help="the price table (per million tokens), or enter a model's price",
        description="With no ACTION, every model's price and the table's date and source. "
        "`prices set MODEL input=… output=… [cache_write_5m=… cache_write_1h=… cache_read=… "
        "batch_input=… batch_output=…]` enters or corrects one model's price (kept in "
        "prices.json in the config folder, over the bundled table); cache rates left out "
        "follow the API's multipliers.",
    )
    prices.add_argument("action", nargs="?", choices=("set",))
    prices.add_argument("model", nargs="?")
    prices.add_argument("pairs", nargs="*", metavar="KEY=VALUE")
    prices.add_argument("--json", action="store_true")

    export = sub.add_parser("export", help="a chat as JSON (contextdesk.chat) or Markdown")
    export.add_argument("chat")
    export.add_argument(
        "-o", "--output", type=Path, help="write here (atomically) instead of stdout"
    )
    export.add_argument("--format", choices=("json", "md"), default="json")
    export.add_argument(
        "--with-requests",
        action="store_true",
        help="JSON only: every request the chat sent, as sent, with its usage",
    )
    search = sub.add_parser(
        "search",
        help="find text in every chat's titles and messages (exit 1 when nothing matches)",
        description="One line per hit: the chat's id, its title, the message's number in the "
        "chat (# for a title) and the text around the match. Across chats the newest "
        "messages come first; within one chat (--chat), in order. Messages are searched "
        "for pieces of 3 or more characters; shorter text matches titles only.",
    )
    search.add_argument("text")
    search.add_argument("--chat", help="search this chat only")
    search.add_argument("--json", action="store_true")
    search.add_argument("--limit", type=int, default=200, help="at most this many hits (200)")
    importing = sub.add_parser(
        "import",
        help="import contextdesk.chat files, Messages API request bodies, or another app's "
        "export — Claude's, ChatGPT's (conversations.json, its shards, a folder, the zip or "
        "its numbered zips), Open WebUI's, LibreChat's, SillyTavern's; prints each new chat's id",
    )
    importing.add_argument(
        "file", type=Path, nargs="+", help="one or more: several numbered zips of one export"
    )
    importing.add_argument(
        "--from",
        dest="source",
        choices=("claude", "chatgpt", "openwebui", "librechat", "sillytavern"),
        help="the export's app (detected when not given)",
    )
    importing.add_argument(
        "--model", help="the Claude model an export's chats go on with (default: Settings')"
    )
    importing.add_argument(
        "--json",
        action="store_true",
        help="print each new chat (messages, versions, the next request's tokens and cost) "
        "and every repair as JSON",
    )

    settings = sub.add_parser(
        "settings",
        help="show or change the settings (what the Settings dialog has)",
        description="With no KEY, every setting; KEY shows one; KEY=VALUE changes it (checked "
        "as the Settings dialog checks it). Keys: "
        + ", ".join(f"{spec.key} ({spec.help})" for spec in SETTINGS)
        + ".",
    )
    settings.add_argument("pairs", nargs="*", metavar="KEY[=VALUE]")
    settings.add_argument("--json", action="store_true")

    _add_mcp(sub)
    _add_project(sub)

    check = sub.add_parser(
        "check",
        help="check a Messages-API history file and show its repair",
        description="FILE holds a `messages` array or a whole request body. Exit status: 0 valid, 1 problems found, 2 unreadable.",
    )
    check.add_argument("file", type=Path)
    check.add_argument("--fix", type=Path, metavar="OUT", help="write the repaired JSON to OUT")


def _turn_options(parser: Any) -> None:
    """What a command that starts a turn takes besides `send`'s own: `send`'s options,
    and --dry-run."""
    parser.add_argument("--json", action="store_true", help="print the turn's result as JSON")
    parser.add_argument(
        "--allow-tools",
        default="",
        metavar="NAME,…",
        help="tools that ask may run without asking (an MCP tool as SERVER.TOOL)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the body of the request it would send; change nothing",
    )
    parser.add_argument(
        "--over-budget",
        action="store_true",
        help="send even if it crosses a hard spending cap (this once)",
    )


def _add_mcp(sub: Any) -> None:
    mcp = sub.add_parser(
        "mcp", help="MCP tool servers: list, add, remove, test, import"
    ).add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    listing = mcp.add_parser("list", help="the configured servers")
    listing.add_argument("--json", action="store_true")
    add = mcp.add_parser(
        "add",
        help="add a server: NAME -- COMMAND [ARGS…] (stdio) or NAME --url URL (Streamable HTTP)",
        description="Values of --env and --header are kept in the system keyring, not in the "
        "settings file.",
    )
    add.add_argument("name")
    add.add_argument("--url", default="", help="a Streamable HTTP server's endpoint")
    add.add_argument("--header", action="append", default=[], metavar="K=V")
    add.add_argument("--env", action="append", default=[], metavar="K=V")
    add.add_argument("--timeout", type=float, default=0, help="seconds a call may take (60)")
    add.add_argument("server_command", nargs="*", metavar="-- COMMAND [ARGS…]")
    remove = mcp.add_parser("remove", help="remove a server (and its secrets)")
    remove.add_argument("name")
    test = mcp.add_parser("test", help="start a server and list its tools with their tokens")
    test.add_argument("name")
    test.add_argument("--json", action="store_true")
    resources = mcp.add_parser("resources", help="a server's resources (attach with --resource)")
    resources.add_argument("name")
    resources.add_argument("--json", action="store_true")
    prompts = mcp.add_parser("prompts", help="a server's prompts and their arguments")
    prompts.add_argument("name")
    prompts.add_argument("--json", action="store_true")
    importing = mcp.add_parser("import", help="add the servers of Claude desktop's config")
    importing.add_argument("file", nargs="?", type=Path, help="(default: Claude desktop's own)")
    importing.add_argument(
        "--env-in-file",
        action="store_true",
        help="without a system keyring: keep the servers' env values in mcp.json (readable "
        "only by you) instead of refusing",
    )


def _add_project(sub: Any) -> None:
    project = sub.add_parser(
        "project", help="projects: instructions, facts and files shared by their chats"
    ).add_subparsers(dest="project_command", metavar="ACTION", required=True)
    new = project.add_parser("new", help="create a project; prints its id")
    new.add_argument("name")
    new.add_argument("--instructions", default="")
    listing = project.add_parser("list", help="every project")
    listing.add_argument("--json", action="store_true")
    show = project.add_parser("show", help="a project: its layers, files and chats")
    show.add_argument("project")
    show.add_argument("--json", action="store_true")
    change = project.add_parser(
        "set",
        help="change a project: " + ", ".join(f"{k}=…" for k in PROJECT_KEYS) + ", or what its "
        "new chats start with (max_tokens=…, thinking=…, …)",
        description="budget: the share of a chat's window the knowledge may take (0.3); "
        "knowledge: whole, chosen or on_demand. New chats of the project start with "
        + ", ".join(PROJECT_DEFAULT_FIELDS)
        + " when set (KEY= with no value goes back to Settings').",
    )
    change.add_argument("project")
    change.add_argument("pairs", nargs="+", metavar="KEY=VALUE")
    delete = project.add_parser("delete", help="delete a project (its chats stay, in none)")
    delete.add_argument("project")
    pin = project.add_parser("pin", help="pin a fact for every chat of the project")
    pin.add_argument("project")
    pin.add_argument("text")
    unpin = project.add_parser("unpin", help="remove a project fact, or reject a suggested one")
    unpin.add_argument("project")
    unpin.add_argument("fact_id")
    accept = project.add_parser("accept", help="pin a suggested project fact (an import's)")
    accept.add_argument("project")
    accept.add_argument("fact_id")
    accept.add_argument("--text", help="pin it in these words instead")
    add_file = project.add_parser("add-file", help="add a knowledge file (text, or a PDF)")
    add_file.add_argument("project")
    add_file.add_argument("file", type=Path)
    add_file.add_argument(
        "--as",
        dest="as_",
        choices=("text", "document"),
        default="text",
        help="a PDF as its text (the default) or as a document Claude reads page by page",
    )
    remove_file = project.add_parser("remove-file", help="remove a knowledge file")
    remove_file.add_argument("project")
    remove_file.add_argument("file", help="its id, an id prefix, or its name")
    choose = project.add_parser("choose", help="send only these files (when all do not fit)")
    choose.add_argument("project")
    choose.add_argument("files", nargs="+")
    export = project.add_parser("export", help="the project, its files and chats, as JSON")
    export.add_argument("project")
    export.add_argument("-o", "--output", type=Path)
    importing = project.add_parser("import", help="import a project export; prints its id")
    importing.add_argument("file", type=Path)
