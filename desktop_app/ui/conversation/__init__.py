"""One open chat's conversation: its pane, its session, its messages, its composer."""
