"""A hostile identity provider's words are escaped and cut before anyone reads them (server_text.py): the
token endpoint's `error` and `error_description` over a real socket, and a callback's `error_description`
through the real loopback listener."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import quote

import httpx
import pytest

from helpers.fixtures_proving import http_response, raw_server
from tenant_events.auth.discovery import ProviderMetadata
from tenant_events.auth.errors import SignInFailed, TokenEndpointError
from tenant_events.auth.loopback import LoopbackListener
from tenant_events.auth.oauth_client import OAuthClient

HOSTILE = "\x1b[2J\x1b[31mPWNED\x1b[0m\rOVERWRITTEN\nsecond line\u202eevil\x00\x7f\x9b\x1b]0;title\x07"


def assert_shown_safely(text: str) -> None:
    assert text.isprintable(), repr(text[:300])
    assert "\\x1b[2J" in text and "\\r" in text and "\\n" in text and "\\u202e" in text
    assert len(text) <= 700, len(text)


def test_a_token_endpoint_error_full_of_escape_sequences_is_escaped_and_cut():
    body = json.dumps(
        {"error": "invalid_grant" + HOSTILE, "error_description": HOSTILE + "A" * 5000}
    ).encode()
    with raw_server(
        "127.0.0.1", http_response("400 Bad Request", {"Content-Type": "application/json"}, body)
    ) as idp:
        meta = ProviderMetadata(
            issuer=idp.url,
            authorization_endpoint=idp.url + "/authorize",
            token_endpoint=idp.url + "/oauth/token",
            jwks_uri=idp.url + "/jwks",
        )

        async def refresh() -> None:
            async with httpx.AsyncClient(timeout=10) as http:
                await OAuthClient(http, meta, "client").refresh("refresh-token")

        with pytest.raises(TokenEndpointError) as caught:
            asyncio.run(refresh())
    assert idp.requests
    assert_shown_safely(str(caught.value))
    assert "A" * 400 not in str(caught.value)


@pytest.mark.parametrize("error", ["access_denied", "weird" + HOSTILE], ids=["known-code", "hostile-code"])
def test_a_callback_error_description_full_of_escape_sequences_is_escaped(error):
    async def scenario() -> SignInFailed:
        async with LoopbackListener() as listener:
            waiter = asyncio.create_task(listener.wait("s1", 10))
            query = f"state=s1&error={quote(error)}&error_description={quote(HOSTILE + 'B' * 5000)}"
            async with httpx.AsyncClient(timeout=5) as client:
                page = await client.get(f"{listener.redirect_uri}?{query}")
            assert page.status_code == 200 and "\x1b" not in page.text
            with pytest.raises(SignInFailed) as caught:
                await waiter
            return caught.value

    failed = asyncio.run(scenario())
    assert_shown_safely(failed.message)
    assert "B" * 400 not in failed.message
    assert failed.code.isprintable()
