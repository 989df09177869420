"""Token counting: tiktoken with the bundled offline encoding, per-block cache, calibration."""
