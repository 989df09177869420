"""The context engine: pinned facts, policies, compaction, and the request projection."""
