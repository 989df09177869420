"""ContextDesk: a desktop chat client for Claude whose memory is visible and steerable."""

__version__ = "0.1.0"
