"""The simulator's Starlette application: routes of the event stream (docs/event-stream.md), the auth API (Auth0-shaped) and the
loopback admin endpoints; JSON bodies for 404/405 like the management API's."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tenant_events.simulator import admin, authorize, token_endpoint
from tenant_events.simulator.events_api import EventsEndpoint
from tenant_events.simulator.http_errors import json_error
from tenant_events.simulator.state import SimState

log = logging.getLogger(__name__)


def create_app(state: SimState) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        live = asyncio.ensure_future(state.activity.run_live())
        acted = asyncio.ensure_future(state.player.play(state.scenario))
        try:
            yield
        finally:
            live.cancel()
            acted.cancel()
            await asyncio.gather(live, acted, return_exceptions=True)
            state.log.flush()

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 404:
            return json_error(404, f"Not found: {request.url.path}")
        if status == 405:
            return json_error(405, f"Method {request.method} not allowed on {request.url.path}")
        return json_error(status, str(getattr(exc, "detail", "Error")))

    async def discovery(request: Request) -> Response:
        return authorize.discovery(state)

    async def jwks(request: Request) -> Response:
        return authorize.jwks(state)

    routes = [
        Route("/api/v2/events", EventsEndpoint(state)),  # raw ASGI: it answers every method itself
        Route("/.well-known/openid-configuration", discovery),
        Route("/.well-known/jwks.json", jwks),
        Route("/authorize", authorize.authorize),
        Route("/authorize/decision", authorize.decision, methods=["POST"]),
        Route("/oauth/token", token_endpoint.token, methods=["POST"]),
        Route("/oauth/revoke", token_endpoint.revoke, methods=["POST"]),
        Route("/userinfo", token_endpoint.userinfo, methods=["GET", "POST"]),
        Route("/v2/logout", authorize.logout),
        Route("/_sim/faults", admin.faults, methods=["GET", "POST"]),
        Route("/_sim/emit", admin.emit, methods=["POST"]),
        Route("/_sim/scenario", admin.scenario, methods=["POST"]),
        Route("/_sim/stats", admin.stats),
        Route("/_sim/token", admin.token, methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: not_found})
    app.state.sim = state
    return app
