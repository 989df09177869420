"""The context panel: what the next request holds, its meter, its facts, its request."""
