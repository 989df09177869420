"""Names the faces need before any chat is open (light: nothing is imported here)."""

NEW_CHAT_TITLE = "New chat"

# `contextdesk chat set KEY=VALUE`: the chat's own settings (KEY → ChatInfo or
# ContextSettings field).
CHAT_FIELDS = {
    "title": "title",
    "model": "model",
    "system": "system_prompt",
    "context_window": "context_window",
    "threshold": "compaction_threshold",
    "keep_recent": "keep_recent_turns",
    "max_tokens": "max_tokens",
    "thinking": "thinking",  # adaptive, off, an effort or a budget: context/chat_settings.py
    "thinking_budget": "thinking_budget",
    "effort": "effort",
    "thinking_display": "thinking_display",
    "auto_compact": "auto_compact",
    "keep_first": "keep_first_message",
    "max_messages": "max_context_messages",
    "tool_result_cap": "tool_result_cap",
    "drop_old_thinking": "drop_old_thinking",
    "tools_off": "tools_off",
    "project_layers_off": "project_layers_off",
    "cache_ttl": "cache_ttl",  # 5m or 1h
    "spend_cap": "spend_cap",  # the most the chat may cost; 0: no cap
    "search_chats": "search_chats",  # off, project or all: chats/past_chats.py
    "web_search": "web_search",  # on or off: the API's web tools (core/server_tools.py)
    "web_fetch": "web_fetch",
    "web_max_uses": "web_max_uses",
    "web_domains": "web_domains",  # only these domains (comma-separated)
    "web_blocked_domains": "web_blocked_domains",  # never these
}

# `contextdesk project set PROJECT KEY=VALUE`: the settings new chats of a project start
# with (the chat's own title, model, prompt and layer switches are not a project's).
PROJECT_DEFAULT_FIELDS = {
    key: name
    for key, name in CHAT_FIELDS.items()
    if key not in ("title", "model", "system", "project_layers_off", "spend_cap")
}

# The message the next request is shown with when the composer is empty (a request always
# ends with the user's words).
ONE_WORD = "Hello"
