"""Bundled tenant simulator (Starlette/uvicorn), written from spec 000/001, not from the client."""
