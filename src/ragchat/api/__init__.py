"""The HTTP server: FastAPI app (``create_app``) and ``serve`` for ``ragchat serve``."""

from ragchat.api.app import create_app
from ragchat.api.serve import serve

__all__ = ["create_app", "serve"]
