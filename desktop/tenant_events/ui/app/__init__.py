"""The running app: start-up, one session per tenant, sign-in, first run, crash notices."""
