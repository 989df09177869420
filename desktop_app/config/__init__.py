"""Paths, settings, state and secrets (keyring, never plaintext without consent)."""
