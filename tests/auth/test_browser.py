"""The frozen-app browser launch restores the host environment (PyInstaller keeps it in <NAME>_ORIG)."""

from __future__ import annotations

from tenant_events.auth.browser import host_environment


def test_frozen_app_restores_the_host_library_path():
    env = {
        "LD_LIBRARY_PATH": "/tmp/_MEI123/lib",
        "LD_LIBRARY_PATH_ORIG": "/usr/local/lib",
        "XDG_DATA_DIRS": "/tmp/_MEI123/share",
        "XDG_DATA_DIRS_ORIG": "/usr/share:/usr/local/share",
        "QT_PLUGIN_PATH": "/tmp/_MEI123/plugins",
        "HOME": "/home/u",
    }
    host = host_environment(env, frozen=True)
    assert host["LD_LIBRARY_PATH"] == "/usr/local/lib"
    assert host["XDG_DATA_DIRS"] == "/usr/share:/usr/local/share"
    assert "QT_PLUGIN_PATH" not in host  # had no host value: removed, not left pointing into the bundle
    assert not any(k.endswith("_ORIG") for k in host)
    assert host["HOME"] == "/home/u"


def test_frozen_app_without_an_orig_value_drops_the_bundle_library_path():
    host = host_environment({"LD_LIBRARY_PATH": "/tmp/_MEI9/lib"}, frozen=True)
    assert "LD_LIBRARY_PATH" not in host


def test_not_frozen_leaves_the_environment_alone():
    env = {"LD_LIBRARY_PATH": "/opt/x", "LD_LIBRARY_PATH_ORIG": "/y"}
    assert host_environment(env, frozen=False) == env
