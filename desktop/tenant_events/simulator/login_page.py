"""HTML of the hosted login page, its error page and the form_post reply; every value is escaped.

The page contract the tests rely on: one `<form method="post" action="/authorize/decision">` with a
hidden `txn` and two submit buttons `action=allow` ("Continue as demo admin") and `action=deny` (Cancel).
"""

from __future__ import annotations

from html import escape

_STYLE = (
    "body{font-family:system-ui,sans-serif;background:#f4f5f7;display:flex;justify-content:center;"
    "padding-top:10vh}main{background:#fff;padding:2rem 2.5rem;border-radius:8px;"
    "box-shadow:0 2px 12px #0002;max-width:26rem}button{font-size:1rem;padding:.6rem 1.2rem;"
    "margin:.3rem}.allow{background:#0059d6;color:#fff;border:0;border-radius:4px}"
)


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><main>{body}</main></body></html>"
    )


def login_page(txn: str, client_name: str, tenant: str, scopes: list[str]) -> str:
    items = "".join(f"<li>{escape(s)}</li>" for s in scopes)
    return _page(
        f"Sign in to {tenant}",
        f"<h1>Sign in to {escape(tenant)}</h1>"
        f"<p><b>{escape(client_name)}</b> wants to access your account:</p><ul>{items}</ul>"
        '<form method="post" action="/authorize/decision">'
        f'<input type="hidden" name="txn" value="{escape(txn, quote=True)}">'
        '<button class="allow" type="submit" name="action" value="allow">Continue as demo admin</button>'
        '<button type="submit" name="action" value="deny">Cancel</button></form>'
        "<p><small>Local tenant simulator: no password needed.</small></p>",
    )


def error_page(title: str, detail: str) -> str:
    return _page(title, f"<h1>{escape(title)}</h1><p>{escape(detail)}</p>")


def form_post_page(redirect_uri: str, params: dict[str, str]) -> str:
    """response_mode=form_post: the browser POSTs the result to the redirect URI (OAuth 2.0 Form Post)."""
    inputs = "".join(
        f'<input type="hidden" name="{escape(k, quote=True)}" value="{escape(v, quote=True)}">'
        for k, v in params.items()
    )
    return _page(
        "Submit this form",
        f'<form method="post" action="{escape(redirect_uri, quote=True)}">{inputs}'
        '<noscript><button type="submit">Continue</button></noscript></form>'
        "<script>document.forms[0].submit()</script>",
    )
