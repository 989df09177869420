"""What an image costs before it is sent: the API's size limit and token formula, for the
composer's attachments and the message view's image blocks."""

from desktop_app.tokens.images import API_MAX_EDGE, FALLBACK_TOKENS, image_size, image_tokens

__all__ = ["API_MAX_EDGE", "FALLBACK_TOKENS", "image_size", "image_tokens"]
