"""The config layer's errors: the keyring, a setting, the MCP servers' configuration.

Light on purpose (the standard library and `core.errors` only): any module, a face's
too, can catch them without loading what raises them.
"""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.errors import ContextDeskError, ErrorKind


class KeyringUnavailable(ContextDeskError):
    """The keyring cannot be used; the message offers what can be done instead."""

    OPTIONS = (
        "Use the key for this session only",
        "Store it in a plaintext file (not recommended)",
    )

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(
            "The system keyring is not available",
            f"{why}. The key was not saved anywhere. You can use it for this session only, "
            "or, knowing anyone with access to your account could read it, store it in a "
            "plaintext file.",
            kind=ErrorKind.KEYRING,
        )


class BadSetting(ContextDeskError):
    def __init__(self, key: str, why: str) -> None:
        super().__init__("Bad setting", f"{key}: {why}", kind=ErrorKind.USAGE)
        self.key = key


class McpConfigError(ContextDeskError):
    def __init__(self, message: str) -> None:
        super().__init__("MCP servers", message, kind=ErrorKind.USAGE)


class SecretsNeedKeyring(ContextDeskError):
    """Servers to import have environment values and the keyring cannot keep them:
    nothing was imported. The faces offer to keep them in mcp.json instead (the command
    line's `--env-in-file`; the window asks)."""

    def __init__(self, why: str, servers: list[str], path: Path) -> None:
        self.servers = tuple(servers)
        super().__init__(
            "The system keyring is not available",
            f"{why}. {', '.join(repr(s) for s in servers)} in {path} "
            f"{'have' if len(servers) > 1 else 'has'} environment values (tokens, keys), "
            "which ContextDesk keeps in the keyring, so nothing was imported.",
            kind=ErrorKind.KEYRING,
        )
