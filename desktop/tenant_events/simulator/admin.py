"""Loopback-only test controls under `/_sim/`: fault knobs, emitting events, stats, minting tokens.

Not part of the real service; refused with 403 unless the caller is on a loopback address.
POST /_sim/faults  JSON knobs (faults.Faults fields, `id_token_alg|issuer|audience|expired|nonce|exp`,
                   `paused` for live generation, `rotate_after` seconds for connections opened from now on,
                   `reset: true`) → the resulting knobs
POST /_sim/emit    {"n": 5, "types": ["user.created"]?} → {"emitted", "last_seq", "latest_offset"}
POST /_sim/scenario  one scenario step, e.g. {"do": "mass_deletion", "n": 30, "over_s": 5} (scenarios.py); answers
                   once its events are in the log → {"do", "emitted", "last_seq", "latest_offset"}
GET  /_sim/stats   log position, connection and status counters, refresh outcomes (rotated/unknown/reused/…)
POST /_sim/token   {"scope": "read:events", "global_client": true, "ttl": 300} → {"access_token"}
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tenant_events.simulator.clients import NONGLOBAL_CLIENT_ID, SERVICE_CLIENT_ID
from tenant_events.simulator.event_types import TYPE_INDEX
from tenant_events.simulator.faults import Faults
from tenant_events.simulator.http_errors import json_error
from tenant_events.simulator.scenarios import parse_step
from tenant_events.simulator.state import SimState
from tenant_events.simulator.tokens import IdTokenFaults

_ID_KNOBS = {
    "id_token_alg": "alg",
    "id_token_issuer": "issuer",
    "id_token_audience": "audience",
    "id_token_expired": "expired",
    "id_token_nonce": "nonce",
    "id_token_exp": "exp",
}
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _number_text(value: object) -> str:
    """`id_token_exp`: a number as text ("nan" and "inf" included, which JSON bodies cannot carry)."""
    try:
        float(str(value))
        return str(value)
    except ValueError:
        raise ValueError(f"id_token_exp must be a number or nan/inf/-inf as text; got {value!r}") from None


async def _json(request: Request) -> dict[str, Any] | Response:
    if request.client is None or request.client.host not in LOOPBACK:
        return json_error(403, "The simulator's admin endpoints answer loopback callers only.")
    raw = await request.body()
    try:
        data = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError as exc:
        return json_error(400, f"Body is not JSON: {exc}")
    if not isinstance(data, dict):
        return json_error(400, "Body must be a JSON object.")
    return data


def knobs_view(state: SimState) -> dict[str, Any]:
    view = state.faults.as_dict()
    f = state.token_service.id_faults
    view.update({name: getattr(f, attr) for name, attr in _ID_KNOBS.items()})
    view["paused"] = state.activity.paused
    view["rotate_after"] = state.config.rotate_after
    return view


async def faults(request: Request) -> Response:
    state: SimState = request.app.state.sim
    data = await _json(request)
    if isinstance(data, Response):
        return data
    if data.pop("reset", False):
        state.faults = Faults()
        state.token_service.id_faults = IdTokenFaults()
    try:
        id_knobs = {_ID_KNOBS[k]: data.pop(k) for k in list(data) if k in _ID_KNOBS}
        if "alg" in id_knobs and id_knobs["alg"] not in ("RS256", "HS256"):
            raise ValueError(f"id_token_alg must be RS256 or HS256; got {id_knobs['alg']!r}")
        if id_knobs.get("exp") is not None:
            id_knobs["exp"] = _number_text(id_knobs["exp"])
        if "paused" in data:
            state.activity.paused = bool(data.pop("paused"))
        if "rotate_after" in data:
            rotate_after = data.pop("rotate_after")
            if (
                not isinstance(rotate_after, int | float)
                or isinstance(rotate_after, bool)
                or rotate_after < 0
            ):
                raise ValueError(f"rotate_after must be a number of seconds >= 0; got {rotate_after!r}")
            state.config = state.config.with_options(rotate_after=float(rotate_after))
        state.faults.update(**data)
    except ValueError as exc:
        return json_error(400, str(exc))
    state.token_service.id_faults = dataclasses.replace(state.token_service.id_faults, **id_knobs)
    return JSONResponse(knobs_view(state))


async def emit(request: Request) -> Response:
    state: SimState = request.app.state.sim
    data = await _json(request)
    if isinstance(data, Response):
        return data
    n = data.get("n", 1)
    types = data.get("types")
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 5_000_000:
        return json_error(400, f"n must be an integer from 0 to 5000000; got {n!r}")
    if types is not None:
        if not isinstance(types, list) or not types:
            return json_error(400, f"types must be a non-empty list of event type names; got {types!r}")
        unknown = [t for t in types if t not in TYPE_INDEX]
        if unknown:
            return json_error(400, f"Unsupported event type(s): {unknown!r}")
    last = state.activity.emit(n, tuple(types) if types else None)
    return JSONResponse({"emitted": n, "last_seq": last, "latest_offset": state.log.offset(last)})


async def scenario(request: Request) -> Response:
    state: SimState = request.app.state.sim
    data = await _json(request)
    if isinstance(data, Response):
        return data
    try:
        step = parse_step({**data, "at": 0})
    except ValueError as exc:
        return json_error(400, str(exc))
    last = await state.player.run(step)
    return JSONResponse(
        {"do": step.do, "emitted": step.n, "last_seq": last, "latest_offset": state.log.offset(last)}
    )


async def stats(request: Request) -> Response:
    state: SimState = request.app.state.sim
    c = state.counters
    body = {
        **state.log.stats(),
        "connections": c.connections,
        "connections_total": c.connections_total,
        "events_requests": c.requests,
        "status": {str(k): v for k, v in sorted(c.status.items())},
        "refresh": dict(state.auth.refresh_outcomes),
    }
    return JSONResponse(body)


async def token(request: Request) -> Response:
    state: SimState = request.app.state.sim
    data = await _json(request)
    if isinstance(data, Response):
        return data
    client_id = SERVICE_CLIENT_ID if data.get("global_client", True) else NONGLOBAL_CLIENT_ID
    access = state.token_service.mint_access(
        client_id=client_id,
        sub=f"{client_id}@clients",
        scope=str(data.get("scope", "read:events")),
        ttl=int(data.get("ttl", state.config.token_ttl)),
    )
    return JSONResponse({"access_token": access})
