"""HTTP error bodies of the management API: JSON `{statusCode, error, message}` (the contract leaves the body
shape open; this is the shape Auth0's Management API uses)."""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus

import orjson
from starlette.responses import Response


def error_body(status: int, message: str) -> bytes:
    return orjson.dumps({"statusCode": status, "error": HTTPStatus(status).phrase, "message": message})


def json_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return Response(
        error_body(status, message), status, headers=dict(headers or {}), media_type="application/json"
    )
