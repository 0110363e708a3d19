"""asyncio + httpx, SSE frames by sse_decoder.py: connect, decode into wire objects, commit with the cursor, reconnect."""
