"""asyncio + httpx-sse: connect, decode frames into wire objects, commit with the cursor, reconnect."""
