"""Sign-in: PKCE, RFC 8252 loopback listener, token validation and refresh, keyring seam."""
