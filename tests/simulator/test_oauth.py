"""The authorization server over real HTTP: discovery, code + PKCE with a test acting as the browser,
single-use codes, refresh rotation and reuse detection, revoke, client credentials, logout, ID-token knobs."""

from __future__ import annotations

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from helpers.browser import act_as_browser, login_redirect
from simulator.oauth_client import authorize_url, exchange, pkce_pair, query, refresh

CALLBACK = "http://127.0.0.1:53999/callback"


def keyset(sim) -> KeySet:
    return KeySet.import_key_set(httpx.get(f"{sim.auth_url}/.well-known/jwks.json").json())


def sign_in(sim, **kw) -> dict:
    verifier, challenge = pkce_pair()
    url = act_as_browser(authorize_url(sim, challenge=challenge, **kw), deliver=False)
    reply = exchange(sim, query(url)["code"], verifier)
    assert reply.status_code == 200, reply.text
    return reply.json()


def events_status(sim, token: str) -> httpx.Response:
    with (
        httpx.Client(timeout=5) as c,
        c.stream("GET", sim.events_url, headers={"Authorization": f"Bearer {token}"}) as r,
    ):
        r.read() if r.status_code != 200 else None
        return r


def test_discovery_is_shaped_like_auth0(simulator):
    doc = httpx.get(f"{simulator.auth_url}/.well-known/openid-configuration").json()
    assert doc["issuer"] == simulator.auth_url + "/" == simulator.issuer
    assert doc["authorization_endpoint"] == simulator.auth_url + "/authorize"
    assert doc["token_endpoint"] == simulator.auth_url + "/oauth/token"
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["id_token_signing_alg_values_supported"] == ["RS256"]
    assert doc["response_types_supported"] == ["code"]
    jwks = httpx.get(doc["jwks_uri"]).json()
    assert [k["alg"] for k in jwks["keys"]] == ["RS256"] and "d" not in jwks["keys"][0]


def test_code_flow_with_pkce_end_to_end(simulator):
    verifier, challenge = pkce_pair()
    url = act_as_browser(
        authorize_url(simulator, challenge=challenge, state="s-42", nonce="n-42"), deliver=False
    )
    assert url.startswith(CALLBACK + "?")
    params = query(url)
    assert params["state"] == "s-42"
    tokens = exchange(simulator, params["code"], verifier).json()
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 300
    assert tokens["refresh_token"] and tokens["id_token"]
    ks = keyset(simulator)
    id_token = jwt.decode(tokens["id_token"], ks, algorithms=["RS256"])
    claims = id_token.claims
    assert id_token.header["alg"] == "RS256"
    assert claims["iss"] == simulator.issuer and claims["aud"] == simulator.demo_client_id
    assert claims["azp"] == simulator.demo_client_id and claims["nonce"] == "n-42"
    assert {"exp", "iat", "auth_time", "name", "email", "picture", "sub"} <= set(claims)
    access = jwt.decode(tokens["access_token"], ks, algorithms=["RS256"]).claims
    assert simulator.audience in access["aud"] and "read:events" in access["scope"].split()
    assert access["exp"] - access["iat"] == 300
    assert events_status(simulator, tokens["access_token"]).status_code == 200
    info = httpx.get(
        f"{simulator.auth_url}/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert info.status_code == 200 and info.json()["sub"] == claims["sub"]


def test_cancel_returns_access_denied_with_state(simulator):
    url = act_as_browser(authorize_url(simulator, state="cancel-me"), action="deny", deliver=False)
    assert query(url) == {
        "error": "access_denied",
        "error_description": "User did not authorize the request",
        "state": "cancel-me",
    }


def test_any_port_loopback_for_the_demo_client_and_exact_match_otherwise(simulator):
    for uri in (
        "http://127.0.0.1:1/callback",
        "http://localhost:65000/callback",
        "http://[::1]:8080/callback",
    ):
        assert httpx.get(authorize_url(simulator, redirect_uri=uri)).status_code == 200, uri
        assert query(login_redirect(authorize_url(simulator, redirect_uri=uri)).headers["location"])["code"]
    for uri in (
        "http://127.0.0.1:8080/other",
        "http://evil.example:8080/callback",
        "https://127.0.0.1:8080/callback",
    ):
        page = httpx.get(authorize_url(simulator, redirect_uri=uri))
        assert page.status_code == 400 and "Callback URL mismatch" in page.text, uri
    exact = dict(client_id="tenant-events-exact")
    assert (
        httpx.get(
            authorize_url(simulator, redirect_uri="http://127.0.0.1:8719/callback", **exact)
        ).status_code
        == 200
    )
    assert (
        httpx.get(
            authorize_url(simulator, redirect_uri="http://127.0.0.1:8722/callback", **exact)
        ).status_code
        == 400
    )


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"audience": "https://elsewhere/api/"}, "access_denied"),
        ({"prompt": "none"}, "login_required"),
    ],
)
def test_authorize_errors_go_back_to_the_client(simulator, change, error):
    reply = httpx.get(authorize_url(simulator, state="e1", **change))
    assert reply.status_code == 302
    params = query(reply.headers["location"])
    assert params["error"] == error and params["state"] == "e1"


def test_pkce_is_required(simulator):
    url = authorize_url(simulator).replace("code_challenge=", "x=")
    params = query(httpx.get(url).headers["location"])
    assert params["error"] == "invalid_request" and "code_challenge" in params["error_description"]


def test_unknown_client_gets_a_page_not_a_redirect(simulator):
    page = httpx.get(authorize_url(simulator, client_id="nobody"))
    assert page.status_code == 400 and "nobody" in page.text


def test_codes_are_single_use_and_bound_to_the_verifier(simulator):
    verifier, challenge = pkce_pair()
    code = query(act_as_browser(authorize_url(simulator, challenge=challenge), deliver=False))["code"]
    wrong = exchange(simulator, code, pkce_pair()[0])
    assert wrong.status_code == 403 and wrong.json()["error"] == "invalid_grant"
    # the failed attempt used the code up (single use)
    again = exchange(simulator, code, verifier)
    assert again.status_code == 403 and again.json()["error_description"] == "Invalid authorization code"


def test_replayed_code_revokes_its_refresh_tokens(simulator):
    verifier, challenge = pkce_pair()
    code = query(act_as_browser(authorize_url(simulator, challenge=challenge), deliver=False))["code"]
    first = exchange(simulator, code, verifier).json()
    assert exchange(simulator, code, verifier).status_code == 403
    assert refresh(simulator, first["refresh_token"]).status_code == 403


def test_expired_code(make_simulator):
    sim = make_simulator(code_ttl=0)
    verifier, challenge = pkce_pair()
    code = query(act_as_browser(authorize_url(sim, challenge=challenge), deliver=False))["code"]
    reply = exchange(sim, code, verifier)
    assert reply.status_code == 403 and reply.json()["error"] == "invalid_grant"


def test_refresh_rotation_and_reuse_revokes_the_family(simulator):
    rt1 = sign_in(simulator)["refresh_token"]
    r2 = refresh(simulator, rt1)
    assert r2.status_code == 200
    rt2 = r2.json()["refresh_token"]
    assert rt2 != rt1 and r2.json()["id_token"]
    rt3 = refresh(simulator, rt2).json()["refresh_token"]
    reuse = refresh(simulator, rt1)
    assert reuse.status_code == 403
    assert reuse.json() == {
        "error": "invalid_grant",
        "error_description": "Unknown or invalid refresh token.",
    }
    assert refresh(simulator, rt3).status_code == 403, "reuse must revoke the newest token of the family too"
    other = sign_in(simulator)["refresh_token"]
    assert refresh(simulator, other).status_code == 200, "other sign-ins are not affected"


def test_refresh_may_narrow_the_scope_but_not_widen_it(simulator):
    rt = sign_in(simulator, scope="openid offline_access read:events")["refresh_token"]
    narrowed = refresh(simulator, rt, scope="openid offline_access")
    assert narrowed.status_code == 200 and narrowed.json()["scope"] == "openid offline_access"
    wider = refresh(
        simulator, narrowed.json()["refresh_token"], scope="openid offline_access read:events email"
    )
    assert wider.status_code == 403


def test_revoke(simulator):
    rt = sign_in(simulator)["refresh_token"]
    url = f"{simulator.auth_url}/oauth/revoke"
    assert httpx.post(url, data={"client_id": simulator.demo_client_id, "token": rt}).status_code == 200
    assert refresh(simulator, rt).status_code == 403
    assert (
        httpx.post(url, data={"client_id": simulator.demo_client_id, "token": "unknown"}).status_code == 200
    )
    assert httpx.post(url, data={"client_id": simulator.demo_client_id}).status_code == 400


def test_no_offline_access_means_no_refresh_token(simulator):
    assert "refresh_token" not in sign_in(simulator, scope="openid read:events")


def cc(sim, client_id, secret, audience=None, **extra):
    return httpx.post(
        f"{sim.auth_url}/oauth/token",
        json={
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": secret,
            "audience": audience or sim.audience,
            **extra,
        },
    )


def test_client_credentials(simulator):
    reply = cc(simulator, simulator.service_client_id, simulator.service_client_secret)
    assert reply.status_code == 200 and reply.json()["scope"] == "read:events"
    assert "refresh_token" not in reply.json() and "id_token" not in reply.json()
    assert events_status(simulator, reply.json()["access_token"]).status_code == 200
    basic = httpx.post(
        f"{simulator.auth_url}/oauth/token",
        data={"grant_type": "client_credentials", "audience": simulator.audience},
        auth=(simulator.service_client_id, simulator.service_client_secret),
    )
    assert basic.status_code == 200
    assert cc(simulator, simulator.service_client_id, "wrong").status_code == 401
    assert (
        cc(simulator, simulator.service_client_id, simulator.service_client_secret, "https://x/").status_code
        == 403
    )


def test_non_global_and_scopeless_clients_produce_the_spec_errors(simulator):
    ng = cc(simulator, "tenant-events-nonglobal", simulator.client_secret("tenant-events-nonglobal")).json()
    r = events_status(simulator, ng["access_token"])
    assert r.status_code == 401 and r.json()["message"] == "Client is not global."
    ns = cc(simulator, "tenant-events-noscope", simulator.client_secret("tenant-events-noscope"), scope="")
    r = events_status(simulator, ns.json()["access_token"])
    assert r.status_code == 403 and r.json()["message"] == "Insufficient scope; expected any of: read:events."


def test_demo_client_may_not_use_client_credentials(simulator):
    reply = httpx.post(
        f"{simulator.auth_url}/oauth/token",
        data={"grant_type": "client_credentials", "client_id": simulator.demo_client_id},
    )
    assert reply.status_code == 403 and reply.json()["error"] == "unauthorized_client"


def test_prompt_none_uses_the_browser_session_and_form_post(simulator):
    with httpx.Client(timeout=5) as browser:
        login = login_redirect(authorize_url(simulator), client=browser)
        assert login.status_code == 302
        silent = browser.get(authorize_url(simulator, prompt="none", state="quiet"))
        assert silent.status_code == 302 and "code" in query(silent.headers["location"])
        posted = browser.get(authorize_url(simulator, prompt="none", response_mode="form_post"))
        assert posted.status_code == 200 and 'method="post"' in posted.text and 'name="code"' in posted.text
        out = browser.get(
            f"{simulator.auth_url}/v2/logout",
            params={"returnTo": "http://127.0.0.1:53999/", "client_id": simulator.demo_client_id},
        )
        assert out.status_code == 302 and out.headers["location"] == "http://127.0.0.1:53999/"
        after = browser.get(authorize_url(simulator, prompt="none"))
        assert query(after.headers["location"])["error"] == "login_required"
    bad = httpx.get(f"{simulator.auth_url}/v2/logout", params={"returnTo": "https://evil.example/"})
    assert bad.status_code == 400


def test_id_token_fault_knobs(simulator):
    simulator.faults(id_token_alg="HS256")
    token = sign_in(simulator)["id_token"]
    assert (
        jwt.decode(token, __import__("joserfc.jwk", fromlist=["OctKey"]).OctKey.import_key(b"s" * 32)).header[
            "alg"
        ]
        == "HS256"
    )
    simulator.faults(
        id_token_alg="RS256",
        id_token_issuer="https://wrong/",
        id_token_audience="someone-else",
        id_token_expired=True,
    )
    claims = jwt.decode(sign_in(simulator)["id_token"], keyset(simulator), algorithms=["RS256"]).claims
    assert (
        claims["iss"] == "https://wrong/"
        and claims["aud"] == "someone-else"
        and claims["exp"] < claims["iat"] + 7200
    )
    simulator.faults(reset=True)
    claims = jwt.decode(sign_in(simulator)["id_token"], keyset(simulator), algorithms=["RS256"]).claims
    assert claims["iss"] == simulator.issuer


def test_userinfo_rejects_a_token_without_the_userinfo_audience(simulator):
    r = httpx.get(
        f"{simulator.auth_url}/userinfo", headers={"Authorization": f"Bearer {simulator.mint_token()}"}
    )
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
