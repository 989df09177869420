"""Every way a Messages-API call can fail, as one `ContextDeskError` a person can act on.

The SDK raises per-status exceptions, a mid-stream `error` event arrives as a status-200
`APIStatusError`, and a dropped stream can surface as a raw `httpx2` transport error.
All of them end here. `retryable` says whether trying again could help: a 4xx never can,
since the same request would be rejected the same way.
"""

from __future__ import annotations

from typing import Any

from desktop_app.core.errors import ContextDeskError, ErrorKind


def _details(exc: Any) -> str:
    parts = [f"{type(exc).__name__}: {exc}"]
    for name in ("status_code", "request_id", "type", "api_message"):
        value = getattr(exc, name, None)
        if value:
            parts.append(f"{name}: {value}")
    return "\n".join(parts)


def map_error(exc: BaseException, base_url: str) -> ContextDeskError:
    """The ContextDeskError for an SDK or transport exception (import-free: it looks at
    class names and attributes, so `anthropic` need not be loaded to call it)."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    api_message = getattr(exc, "api_message", None) or str(exc)
    details = _details(exc)

    def error(
        title: str, message: str, kind: ErrorKind, retryable: bool = False
    ) -> ContextDeskError:
        return ContextDeskError(title, message, retryable=retryable, details=details, kind=kind)

    if status == 200 or (
        status is None and getattr(exc, "type", None)
    ):  # an `error` event mid-stream
        if getattr(exc, "type", None) == "overloaded_error":
            return error(
                "Claude is overloaded",
                "The reply stopped because the service is busy. "
                "What arrived is kept; Retry in a moment.",
                ErrorKind.OVERLOADED,
                True,
            )
        return error(
            "The reply stream failed",
            f"The server sent an error mid-reply: {api_message}",
            ErrorKind.STREAM_ERROR,
            True,
        )
    if status == 401:
        return error(
            "The API key was not accepted",
            "Check the key in Settings: it may be mistyped, revoked or for another organisation.",
            ErrorKind.AUTH,
        )
    if status == 403:
        return error(
            "Access denied",
            f"The key may not use this model or feature: {api_message}",
            ErrorKind.PERMISSION,
        )
    if status == 404:
        return error(
            "Not found",
            f"The server does not know this model or endpoint ({api_message}). "
            "Pick another model in Settings, or check the base URL.",
            ErrorKind.UNKNOWN_MODEL,
        )
    if status == 413:
        return error(
            "The request is too large",
            "Remove large images or attachments from the context, or compact the chat.",
            ErrorKind.REQUEST_TOO_LARGE,
        )
    if status == 429:
        return error(
            "Rate limited",
            "Too many requests or tokens per minute for this key. "
            "ContextDesk already retried; wait a minute, then Retry.",
            ErrorKind.RATE_LIMIT,
            True,
        )
    if status == 529 or name == "OverloadedError":
        return error(
            "Claude is overloaded",
            "The service is busy right now. ContextDesk already retried; Retry in a minute.",
            ErrorKind.OVERLOADED,
            True,
        )
    if status is not None and status >= 500:
        return error(
            "The API had a server error",
            f"The server answered {status}. ContextDesk already retried; Retry later.",
            ErrorKind.SERVER_ERROR,
            True,
        )
    if status == 400 and "prompt is too long" in api_message:
        return error(
            "The conversation is too long for the model",
            f"{api_message}. Compact the chat or exclude old messages.",
            ErrorKind.CONTEXT_OVERFLOW,
        )
    if status is not None and 400 <= status < 500:
        return error(
            "The API rejected the request",
            f"{api_message} (HTTP {status}). Sending it again would fail the same way.",
            ErrorKind.INVALID_REQUEST,
        )
    if name == "APITimeoutError":
        return error(
            "The server did not answer in time",
            f"No reply from {base_url} before the timeout. Retry, or check the server.",
            ErrorKind.TIMEOUT,
            True,
        )
    if name == "APIConnectionError" or name.startswith("Connect"):
        return error(
            "Cannot reach the server",
            f"Could not connect to {base_url}. Check your "
            "network connection, or the base URL in Settings.",
            ErrorKind.CONNECTION,
            True,
        )
    return error(
        "The connection dropped",
        f"The reply stopped because the connection to "
        f"{base_url} broke ({name}). What arrived is kept; Retry to ask again.",
        ErrorKind.STREAM_CUT,
        True,
    )
