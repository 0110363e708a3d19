"""The settings file: tenant and hub profiles and app preferences, validated, versioned, written atomically.

profiles.py       TenantProfile, make_profile (bad values → ConfigError naming the field), callback_urls,
                  tenant_kept (a profile name keeps its tenant)
hubs.py           HubProfile: a tenant followed through a team hub
preferences.py    NotificationSettings, RetentionSettings
document.py       Settings: the whole document, lookups by profile name
settings_file.py  load_settings / save_settings, the schema migrations
shared_file.py    SharedSettings: the app's saves keep what a command saved meanwhile (a three-way merge)
sync.py           SettingsSync: the app's copy, saved one at a time, following the file, the dialog's edits laid over it
"""

from tenant_events.settings.document import SCHEMA_VERSION, Settings
from tenant_events.settings.field_checks import known_event_types
from tenant_events.settings.hubs import HubProfile
from tenant_events.settings.preferences import NotificationSettings, RetentionSettings
from tenant_events.settings.profiles import (
    DEFAULT_SCOPES,
    TenantProfile,
    callback_urls,
    make_profile,
    same_tenant,
    slugify,
    tenant_kept,
)
from tenant_events.settings.settings_file import MIGRATIONS, load_settings, save_settings
from tenant_events.settings.shared_file import SharedSettings, file_stamp, read_current
from tenant_events.settings.sync import SettingsSync

__all__ = [
    "DEFAULT_SCOPES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "HubProfile",
    "NotificationSettings",
    "RetentionSettings",
    "Settings",
    "SettingsSync",
    "SharedSettings",
    "TenantProfile",
    "callback_urls",
    "file_stamp",
    "known_event_types",
    "load_settings",
    "make_profile",
    "read_current",
    "same_tenant",
    "save_settings",
    "slugify",
    "tenant_kept",
]
