"""The MCP servers the user configured, kept as Claude desktop keeps them.

`mcp.json` in the config folder has Claude desktop's shape — `{"mcpServers": {NAME:
{"command", "args", "env"} or {"url", "headers"}}}` — with one difference: the values of
`env` and `headers` are secrets (tokens, keys), so the file holds only their names, as
`"@keyring"`, and the values live in the system keyring (service "ContextDesk MCP"). A
keyring that cannot be used is an error that changes nothing; there is no silent
fallback to the file. Only when the user chooses it — importing Claude desktop's servers
on a system without a keyring — are `env` values kept in the file itself (readable only
by them), said with a warning.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from desktop_app.config.errors import KeyringUnavailable, McpConfigError, SecretsNeedKeyring
from desktop_app.config.files import write_json_atomically
from desktop_app.config.secrets import call_keyring
from desktop_app.core.errors import ContextDeskError, ErrorKind, file_error

FILE_NAME = "mcp.json"
IN_KEYRING = "@keyring"
KEYRING_SERVICE = "ContextDesk MCP"
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,40}")  # it becomes part of the API's tool names
# A header as HTTP allows it (RFC 9110 §5.1, §5.5): a value with a line break would end
# the header and start another, so it is refused — never sent, and never quoted in an error.
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}")
HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")  # printable ASCII, space and tab
ENV_NAME = re.compile(r"[^=\x00-\x1f\x7f]{1,200}")
HIDDEN = "•••"  # a secret value, where an error or a server's output quoted it
MIN_HIDDEN = 6  # shorter values ("1", "true") are not hidden: they would blank common words
# What one server's tool definitions may add to every request: past either limit its tools
# are withheld (a server with 3,000 tools, or a 2 MB description, would make every send
# "too long", which compacting cannot help). The test server's 100 extra tools fit.
DEFAULT_MAX_TOOLS = 200
DEFAULT_MAX_TOOL_TOKENS = 20_000
MAX_LIMIT = 1_000_000
DEFAULT_CALL_TIMEOUT = 60.0  # seconds a tool call may take
DEFAULT_START_TIMEOUT = 30.0  # seconds a server may take to start and list its tools
MAX_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class McpServer:
    """One server: a command to run (stdio) or a URL (Streamable HTTP)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # names; the values are in the keyring
    # (name, value) kept in mcp.json itself: the user chose it, having no keyring
    file_env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    url: str = ""
    headers: tuple[str, ...] = ()  # names; the values are in the keyring
    cwd: str = ""
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    max_tools: int = DEFAULT_MAX_TOOLS  # more, and its tools are withheld
    max_tool_tokens: int = DEFAULT_MAX_TOOL_TOKENS  # their definitions' tokens, the same

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def where(self) -> str:
        """What runs, as the user would type it."""
        if self.url:
            return self.url
        return " ".join([self.command, *(_quoted(a) for a in self.args)])

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if self.url:
            entry["type"] = "http"
            entry["url"] = self.url
            if self.headers:
                entry["headers"] = dict.fromkeys(self.headers, IN_KEYRING)
        else:
            entry["command"] = self.command
            entry["args"] = list(self.args)
            if self.env or self.file_env:
                entry["env"] = dict.fromkeys(self.env, IN_KEYRING) | dict(self.file_env)
            if self.cwd:
                entry["cwd"] = self.cwd
        if self.call_timeout != DEFAULT_CALL_TIMEOUT:
            entry["timeout"] = self.call_timeout
        if self.start_timeout != DEFAULT_START_TIMEOUT:
            entry["startTimeout"] = self.start_timeout
        if self.max_tools != DEFAULT_MAX_TOOLS:
            entry["maxTools"] = self.max_tools
        if self.max_tool_tokens != DEFAULT_MAX_TOOL_TOKENS:
            entry["maxToolTokens"] = self.max_tool_tokens
        return entry


@dataclass(frozen=True, slots=True)
class Secrets:
    """A server's secret values, read from the keyring when it starts."""

    env: dict[str, str] = field(default_factory=dict, repr=False)
    headers: dict[str, str] = field(default_factory=dict, repr=False)

    def hide(self, text: str) -> str:
        """`text` (an error, a server's last words) with these values replaced."""
        return hide_values(text, [*self.env.values(), *self.headers.values()])

    def check(self, server: str) -> None:
        """Refuse names and values that cannot be sent as they are (without quoting a
        value: it is a secret)."""
        for name in self.env:
            check_env_name(name, server)
        for name, value in self.env.items():
            if "\x00" in value:  # the OS cannot pass it to a process
                raise McpConfigError(
                    f"The value of {server!r}'s environment variable {name} holds a NUL "
                    "character, which cannot be passed to a process."
                )
        for name, value in self.headers.items():
            check_header_name(name, server)
            if not HEADER_VALUE.fullmatch(value):
                raise McpConfigError(
                    f"The value of {server!r}'s header {name} holds a line break, another "
                    "control character or a character outside ASCII, which a header cannot "
                    "carry: it was refused (not sent). Give the value without them."
                )


def hide_values(text: str, values: list[str]) -> str:
    """`text` with each value replaced by HIDDEN — as it is, as Python quotes it in an
    error (`'a\\r\\nb'`, `b'a\\r\\nb'`), and line by line."""
    forms = {form for value in values for form in _quoted_forms(value)}
    for form in sorted(forms, key=len, reverse=True):  # longest first: no part is left
        if len(form) >= MIN_HIDDEN:
            text = text.replace(form, HIDDEN)
    return text


def _quoted_forms(value: str) -> set[str]:
    as_bytes = value.encode("utf-8", "backslashreplace")
    return {value, repr(value)[1:-1], repr(as_bytes)[2:-1], *value.splitlines()}


def check_header_name(name: str, server: str) -> str:
    if not HEADER_NAME.fullmatch(name):
        raise McpConfigError(
            f"{name!r} cannot name a header of {server!r}: use letters, digits and "
            "!#$%&'*+-.^_`|~ only (no spaces, line breaks or other control characters)."
        )
    return name


def check_env_name(name: str, server: str) -> str:
    if not ENV_NAME.fullmatch(name):
        raise McpConfigError(
            f"{name!r} cannot name an environment variable of {server!r}: no '=', line "
            "breaks or other control characters."
        )
    return name


@dataclass(frozen=True, slots=True)
class McpFile:
    """mcp.json as read: the servers that can be used, and the entries skipped with why —
    kept in the file as they are when it is written again, for the user to mend."""

    servers: dict[str, McpServer]
    skipped: dict[str, str]  # name: why
    raw: dict[str, Any]  # every entry as the file has it, in its order

    @property
    def names(self) -> set[str]:
        return {*self.servers, *self.skipped}

    def with_server(self, server: McpServer) -> McpFile:
        skipped = {n: why for n, why in self.skipped.items() if n != server.name}
        return replace(self, servers=self.servers | {server.name: server}, skipped=skipped)

    def without(self, name: str) -> McpFile:
        return McpFile(
            {n: s for n, s in self.servers.items() if n != name},
            {n: why for n, why in self.skipped.items() if n != name},
            {n: e for n, e in self.raw.items() if n != name},
        )

    def entries(self) -> dict[str, Any]:
        """What the file holds: each server as it is now, a skipped entry as it was."""
        entries = {n: self.raw[n] for n in self.raw if n in self.skipped or n in self.servers}
        entries |= {n: s.to_json() for n, s in self.servers.items()}
        return entries


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What importing Claude desktop's servers did."""

    added: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # "NAME: why"
    warnings: tuple[str, ...] = ()  # e.g. an env value that was null, left out
    in_file: tuple[str, ...] = ()  # servers whose env values are kept in mcp.json


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name) or "__" in name:
        raise McpConfigError(
            f"{name!r} cannot name a server: use up to 40 letters, digits, '-' or '_' (not "
            "'__': it becomes part of the tool names sent to the model, mcp__SERVER__TOOL)."
        )
    return name


class McpConfig:
    """The servers in `mcp.json`, and their secrets in the keyring."""

    def __init__(self, config_dir: Path, *, keyring_timeout: float = 5.0) -> None:
        self.path = config_dir / FILE_NAME
        self.keyring_timeout = keyring_timeout

    def read(self) -> McpFile:
        """The file, entry by entry: an entry that cannot be used is skipped with its
        reason, and the others load. Only a file that cannot be read at all (not JSON,
        no "mcpServers" object) is an error."""
        raw = self._entries()
        servers: dict[str, McpServer] = {}
        skipped: dict[str, str] = {}
        for name, entry in raw.items():
            try:
                servers[name] = server_from_json(check_name(name), entry, where=str(self.path))
            except McpConfigError as exc:
                skipped[name] = exc.message.removeprefix(f"{self.path}: ")
        return McpFile(servers, skipped, raw)

    def servers(self) -> dict[str, McpServer]:
        """The servers that can be used, in the file's order ({} when there is no file)."""
        return self.read().servers

    def skipped(self) -> dict[str, str]:
        """The entries that cannot be used, each with why."""
        return self.read().skipped

    def _entries(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:  # the disk's trouble, not a value given wrong
            raise file_error("MCP servers not read", self.path, exc) from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise McpConfigError(f"{self.path} is not valid JSON ({exc}).") from exc
        entries = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise McpConfigError(f'{self.path} has no "mcpServers" object.')
        return entries

    def server(self, name: str) -> McpServer:
        file = self.read()
        servers = file.servers
        if name in file.skipped:
            raise McpConfigError(f"{name!r} is skipped: {file.skipped[name]}")
        if name not in servers:
            known = ", ".join(servers) or "none are configured"
            raise ContextDeskError(
                "No such MCP server",
                f"{name!r} is not configured ({known}).",
                kind=ErrorKind.NOT_FOUND,
            )
        return servers[name]

    def add(
        self,
        server: McpServer,
        secrets: Secrets | None = None,
        *,
        replace: bool = False,
    ) -> None:
        """Add (or, with `replace`, change) a server; its secrets go to the keyring first,
        so a keyring that fails leaves the file as it was."""
        check_name(server.name)
        secrets = secrets or Secrets()
        secrets.check(server.name)
        file = self.read()
        if server.name in file.names and not replace:
            raise McpConfigError(f"A server named {server.name!r} is already configured.")
        if bool(server.url) == bool(server.command):
            raise McpConfigError("A server needs a command to run, or a URL — one of them.")
        for what, seconds in (("call", server.call_timeout), ("start", server.start_timeout)):
            if not 0 < seconds <= MAX_SECONDS:
                raise McpConfigError(
                    f"A {what} timeout must be more than 0 and at most {MAX_SECONDS:g} s."
                )
        server = _with_secret_names(server, secrets)
        try:
            for kind, values in (("env", secrets.env), ("header", secrets.headers)):
                for key, value in values.items():
                    call_keyring(
                        "set_password",
                        KEYRING_SERVICE,
                        _account(server.name, kind, key),
                        value,
                        timeout=self.keyring_timeout,
                    )
        except KeyringUnavailable as exc:
            raise ContextDeskError(
                "The system keyring is not available",
                f"{exc.why}. The server {server.name!r} was not added: the values of its "
                "environment variables and headers are kept only in the keyring.",
                kind=ErrorKind.KEYRING,
            ) from exc
        self._save(file.with_server(server))

    def remove(self, name: str) -> McpServer:
        """Remove a server (a skipped entry too: its secrets, if any, stay in the keyring)."""
        file = self.read()
        if name not in file.names:
            self.server(name)  # raises: not configured
        self._save(file.without(name))
        server = file.servers.get(name) or McpServer(name)
        for kind, keys in (("env", server.env), ("header", server.headers)):
            for key in keys:  # best effort: the server is gone whatever the keyring says
                with contextlib.suppress(KeyringUnavailable):
                    call_keyring(
                        "delete_password",
                        KEYRING_SERVICE,
                        _account(name, kind, key),
                        timeout=self.keyring_timeout,
                    )
        return server

    def secrets(self, server: McpServer) -> Secrets:
        """The server's secret values (on a worker: the keyring may take seconds)."""
        if server.env or server.headers:
            secrets = self._read_secrets(server)
        else:
            secrets = Secrets(dict(server.file_env))
        secrets.check(server.name)  # (set by hand in the keyring, or by an older version)
        return secrets

    def _read_secrets(self, server: McpServer) -> Secrets:
        try:
            env = {k: self._secret(server.name, "env", k) for k in server.env}
            headers = {k: self._secret(server.name, "header", k) for k in server.headers}
        except KeyringUnavailable as exc:
            raise ContextDeskError(
                "The system keyring is not available",
                f"{exc.why}. {server.name!r} needs values kept there to start.",
                kind=ErrorKind.KEYRING,
            ) from exc
        return Secrets(env | dict(server.file_env), headers)

    def _secret(self, name: str, kind: str, key: str) -> str:
        value = call_keyring(
            "get_password", KEYRING_SERVICE, _account(name, kind, key), timeout=self.keyring_timeout
        )
        if value is None:
            what = "environment variable" if kind == "env" else "header"
            raise ContextDeskError(
                "A secret is missing",
                f"The keyring has no value for {name!r}'s {what} {key}. Add the server again "
                "with it.",
                kind=ErrorKind.NOT_FOUND,  # (the keyring works: the value is not in it)
            )
        return str(value)

    def import_claude_desktop(
        self, path: Path | None = None, *, env_in_file: bool = False
    ) -> ImportReport:
        """Add the servers of Claude desktop's config. A server already configured here is
        kept as it is. Environment values go to the keyring; when it cannot keep them,
        `SecretsNeedKeyring` is raised and nothing is added — unless `env_in_file`: then
        they are kept in mcp.json (readable only by the user)."""
        path = path or claude_desktop_config()
        entries = _claude_desktop_servers(path)
        existing = self.read().names
        skipped: list[str] = []
        warnings: list[str] = []
        chosen: list[tuple[str, McpServer, Secrets]] = []
        for raw_name, entry in entries.items():
            name = re.sub(r"[^A-Za-z0-9_-]", "-", str(raw_name)).replace("__", "_")[:40]
            name = name or "server"
            if name in existing or name in {n for n, _, _ in chosen}:
                skipped.append(f"{raw_name}: a server named {name!r} is already configured")
                continue
            try:
                server = server_from_json(name, entry, where=str(path), values_allowed=True)
            except ContextDeskError as exc:
                skipped.append(f"{raw_name}: {exc.message}")
                continue
            env, env_warnings = _values(entry.get("env"), "env")
            headers, header_warnings = _values(entry.get("headers"), "header")
            warnings += [f"{raw_name}: {w} ({path})" for w in (*env_warnings, *header_warnings)]
            server = replace(server, env=tuple(env), headers=tuple(headers))
            chosen.append((str(raw_name), server, Secrets(env, headers)))
        if not env_in_file:
            self._refuse_without_keyring([(n, s) for n, _, s in chosen], path)
        added: list[str] = []
        in_file: list[str] = []
        for raw_name, server, secrets in chosen:
            if env_in_file and secrets.env:
                server = replace(server, env=(), file_env=tuple(secrets.env.items()))
                secrets = Secrets(headers=secrets.headers)
            try:
                self.add(server, secrets)
            except ContextDeskError as exc:
                skipped.append(f"{raw_name}: {exc.message}")
                continue
            added.append(server.name)
            if server.file_env:
                in_file.append(server.name)
        return ImportReport(tuple(added), tuple(skipped), tuple(warnings), tuple(in_file))

    def _refuse_without_keyring(self, chosen: list[tuple[str, Secrets]], path: Path) -> None:
        """Before anything is added: servers with values need a keyring that works."""
        needing = [name for name, secrets in chosen if secrets.env or secrets.headers]
        if not needing:
            return
        try:
            call_keyring("get_password", KEYRING_SERVICE, "(probe)", timeout=self.keyring_timeout)
        except KeyringUnavailable as exc:
            raise SecretsNeedKeyring(exc.why, needing, path) from exc

    def _save(self, file: McpFile) -> None:
        write_json_atomically(self.path, {"mcpServers": file.entries()}, mode=0o600)


def server_from_json(
    name: str, entry: Any, *, where: str, values_allowed: bool = False
) -> McpServer:
    """One `mcpServers` entry. Our own file keeps secrets as "@keyring"; Claude desktop's
    holds values (`values_allowed`), which the caller moves to the keyring."""
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where}: the server {name!r} is not a JSON object.")
    kind = str(entry.get("type") or ("http" if entry.get("url") else "stdio"))
    if kind == "sse":
        raise McpConfigError(
            f"{where}: {name!r} uses the SSE transport, which ContextDesk does not support "
            "(Streamable HTTP and stdio are)"
        )
    if kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        raise McpConfigError(f"{where}: the server {name!r} has an unknown type {kind!r}.")
    env, file_env = _env(entry.get("env"), name, where, values_allowed)
    headers = _names(entry.get("headers"), name, "headers", where, values_allowed)
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpConfigError(f"{where}: {name!r}'s args must be a list of strings.")
    command, url = str(entry.get("command") or ""), str(entry.get("url") or "")
    if bool(command) == bool(url):
        raise McpConfigError(f"{where}: {name!r} needs a command or a url, one of them.")
    return McpServer(
        name=name,
        command=command,
        args=tuple(args),
        env=env,
        file_env=file_env,
        url=url,
        headers=headers,
        cwd=str(entry.get("cwd") or ""),
        call_timeout=_seconds(entry.get("timeout"), DEFAULT_CALL_TIMEOUT),
        start_timeout=_seconds(entry.get("startTimeout"), DEFAULT_START_TIMEOUT),
        max_tools=_limit(entry, "maxTools", DEFAULT_MAX_TOOLS, name, where),
        max_tool_tokens=_limit(entry, "maxToolTokens", DEFAULT_MAX_TOOL_TOKENS, name, where),
    )


def _claude_desktop_servers(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ContextDeskError(
            "No Claude desktop configuration",
            f"{path} does not exist.",
            kind=ErrorKind.NOT_FOUND,
        ) from exc
    except (OSError, ValueError) as exc:
        raise McpConfigError(f"{path} could not be read as JSON ({exc}).") from exc
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise McpConfigError(f'{path} has no "mcpServers" object.')
    return entries


def _values(values: Any, what: str) -> tuple[dict[str, str], list[str]]:
    """Claude desktop's `env` (or `headers`) values as strings, and warnings: a null is
    left out (never the string "None"), a number or true/false becomes its JSON text, a
    list or an object is left out — each said."""
    if not isinstance(values, dict):
        return {}, []
    kept: dict[str, str] = {}
    warnings: list[str] = []
    for key, value in values.items():
        name = str(key)
        if isinstance(value, str):
            kept[name] = value
        elif value is None:
            warnings.append(f"{what} {name} is null; it was left out")
        elif isinstance(value, (bool, int, float)):
            kept[name] = json.dumps(value)
            warnings.append(f"{what} {name} is not a string; it was given as {kept[name]!r}")
        else:
            kind = "a list" if isinstance(value, list) else "an object"
            warnings.append(f"{what} {name} is {kind}, not a string; it was left out")
    return kept, warnings


def claude_desktop_config() -> Path:
    """Where Claude desktop keeps its configuration on this system."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "Claude" / "claude_desktop_config.json"


def _names(
    values: Any, server: str, what: str, where: str, values_allowed: bool
) -> tuple[str, ...]:
    if values is None:
        return ()
    if not isinstance(values, dict):
        raise McpConfigError(f"{where}: {server!r}'s {what} must be an object.")
    if not values_allowed and any(v != IN_KEYRING for v in values.values()):
        raise McpConfigError(
            f"{where}: {server!r}'s {what} values must be {IN_KEYRING!r} (they are kept in the "
            "keyring; add the server with `contextdesk mcp add` to set them)."
        )
    check = check_header_name if what == "headers" else check_env_name
    return tuple(check(str(k), server) for k in values)


def _env(
    values: Any, server: str, where: str, values_allowed: bool
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """`env` in mcp.json: names kept in the keyring ("@keyring"), and values the user
    chose to keep in the file. (Claude desktop's: every name; the import takes the
    values.)"""
    if values_allowed or values is None:
        return _names(values, server, "env", where, values_allowed), ()
    if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
        raise McpConfigError(f"{where}: {server!r}'s env must be an object of strings.")
    in_keyring = tuple(check_env_name(str(k), server) for k, v in values.items() if v == IN_KEYRING)
    in_file = tuple(
        (check_env_name(str(k), server), v) for k, v in values.items() if v != IN_KEYRING
    )
    return in_keyring, in_file


def _with_secret_names(server: McpServer, secrets: Secrets) -> McpServer:
    return replace(
        server,
        env=tuple(dict.fromkeys([*server.env, *secrets.env])),
        headers=tuple(dict.fromkeys([*server.headers, *secrets.headers])),
    )


def _seconds(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and 0 < value <= MAX_SECONDS else default


def _limit(entry: dict[str, Any], key: str, default: int, server: str, where: str) -> int:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_LIMIT:
        raise McpConfigError(
            f"{where}: {server!r}'s {key} must be a whole number from 1 to {MAX_LIMIT:,}."
        )
    return value


def _account(server: str, kind: str, key: str) -> str:
    return f"{server}/{kind}/{key}"


def _quoted(arg: str) -> str:
    return arg if arg and not re.search(r"\s|['\"]", arg) else json.dumps(arg)
