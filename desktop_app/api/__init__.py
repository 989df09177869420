"""The Anthropic SDK adapter (a `ChatBackend`) and the local Messages-API simulator."""
