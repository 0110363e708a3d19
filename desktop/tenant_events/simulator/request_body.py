"""Request bodies of the auth API: `application/x-www-form-urlencoded` (RFC 6749 §4.1.3) or JSON (the auth API:
"POST parameters are sent as JSON"). Parsed with the stdlib, so no multipart parser is needed."""

from __future__ import annotations

from urllib.parse import parse_qsl

import orjson
from starlette.requests import Request


async def read_params(request: Request) -> dict[str, str]:
    """Body parameters as strings; a malformed body gives an empty dict (the caller reports what is missing)."""
    raw = await request.body()
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    try:
        return dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
    except (UnicodeDecodeError, ValueError):
        return {}
