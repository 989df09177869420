"""SQLite storage: chats, messages, blocks with their raw JSON, facts, summaries."""
