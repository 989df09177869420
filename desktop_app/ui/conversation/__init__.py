"""One open chat's conversation: its pane, its messages, its composer."""
