"""Bundled tenant simulator (Starlette/uvicorn), written from the contract in docs/event-stream.md, not from the client."""
