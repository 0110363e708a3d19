"""The hub profile as the hub package names it; the model lives with the rest of the settings file.

settings/hubs.py holds it, so the settings layer needs nothing from the hub (whose NATS client sits above it).
"""

from tenant_events.settings.hubs import HubAuthKind, HubProfile, check_hub_url, split_hub_urls

__all__ = ["HubAuthKind", "HubProfile", "check_hub_url", "split_hub_urls"]
