"""Where sign-ins are kept and how a browser is opened: the seams the app and the CLI pick (tests pass a memory
store and act as the browser). Handed out here so the front ends import nothing from auth/."""

from tenant_events.auth.browser import open_in_background, open_in_browser
from tenant_events.auth.loopback import LoopbackListener
from tenant_events.auth.secret_store import (
    MemorySecretStore,
    OpenedStore,
    PendingSecretStore,
    SecretStore,
    open_secret_store,
)
from tenant_events.auth.sign_in import SignInOptions

__all__ = [
    "LoopbackListener",
    "MemorySecretStore",
    "OpenedStore",
    "PendingSecretStore",
    "SecretStore",
    "SignInOptions",
    "open_in_background",
    "open_in_browser",
    "open_secret_store",
]
