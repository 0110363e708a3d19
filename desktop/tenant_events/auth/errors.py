"""Why a sign-in failed, as one error type carrying an OAuth-style `code`.

SignInRequired (errors.py)
 └── SignInFailed          a browser sign-in or token call did not succeed; `code` names why:
      │                    state_mismatch, access_denied, timeout, cancelled, port_in_use, invalid_token,
      │                    invalid_grant, discovery_failed, ... (RFC 6749 §4.1.2.1 / §5.2 codes where one exists)
      └── TokenEndpointError   the token endpoint answered `{"error", "error_description"}` (any status:
                               Auth0 says 403 where RFC 6749 §5.2 says 400, so branch on `error`)
"""

from __future__ import annotations

from tenant_events.errors import SignInRequired
from tenant_events.server_text import shown


class SignInFailed(SignInRequired):
    """A sign-in step failed; the message says which value was wrong."""

    def __init__(self, code: str, message: str, hint: str = "sign in again") -> None:
        super().__init__(message, hint)
        self.code = code


class TokenEndpointError(SignInFailed):
    """An OAuth error body from the token, revoke or userinfo endpoint."""

    def __init__(self, error: str, description: str, status: int) -> None:
        # Both are the server's words, shown as they came: escaped and cut (server_text.py).
        error, description = shown(error, 80), shown(description)
        text = f"the tenant refused the request ({status} {error})"
        if description:
            text += f": {description}"
        super().__init__(error, text)
        self.error = error
        self.description = description
        self.status = status
