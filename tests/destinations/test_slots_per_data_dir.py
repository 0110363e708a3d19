"""A destination's URL belongs to its data dir (the real keyring under ./run test): two data dirs with a
destination of the same name each send to their own URL; the settings file holds nothing a guess at the URL can
be checked against; a URL an older version kept in the slot every data dir shared is taken over only by the data
dir whose settings name exactly that URL; the keyring keeps a URL whole or refuses it."""

from __future__ import annotations

import hashlib
import json
import os
import uuid

import pytest

from helpers.fixtures_engine import cli
from tenant_events.auth.secret_store import MAX_SECRET, MemorySecretStore
from tenant_events.destinations.registry import destination_url, make_destination, save_destination, slot
from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"


def _run(data, *args, stdin=None):
    proc = cli(*args, "--data-dir", str(data), stdin=-1 if stdin is not None else None)
    out, err = proc.communicate(stdin, timeout=60)
    return proc.returncode, out, err


@pytest.mark.dbus
@pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)")
def test_two_data_dirs_with_a_destination_of_the_same_name_send_to_their_own(tmp_path, httpserver):
    httpserver.expect_request("/a", method="POST").respond_with_data("ok")
    httpserver.expect_request("/b", method="POST").respond_with_data("ok")
    name = f"ops-{uuid.uuid4().hex[:8]}"
    dirs = {"a": tmp_path / "a", "b": tmp_path / "b"}
    try:
        for path, data in dirs.items():
            code, _, err = _run(
                data, "destinations", "add", name, stdin=f"json://127.0.0.1:{httpserver.port}/{path}\n"
            )
            assert code == 0, err
        for data in dirs.values():  # a's test after b saved its URL, and b's
            code, _, err = _run(data, "destinations", "test", name)
            assert code == 0, err
    finally:
        for data in dirs.values():
            _run(data, "destinations", "remove", name)
    assert [request.path for request, _ in httpserver.log] == ["/a", "/b"]


@pytest.mark.dbus
@pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)")
def test_the_settings_file_holds_nothing_a_guess_can_be_checked_against(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    name = f"ops-{uuid.uuid4().hex[:8]}"
    password = "hunter2"  # a password from a word list: an unsalted hash of the URL would give it away
    url = f"json://alerts:{password}@127.0.0.1:{httpserver.port}/hook"
    dirs = [tmp_path / "a", tmp_path / "b"]
    try:
        for data in dirs:
            code, _, err = _run(data, "destinations", "add", name, stdin=url + "\n")
            assert code == 0, err
        texts = [(data / "settings.json").read_text() for data in dirs]
    finally:
        for data in dirs:
            _run(data, "destinations", "remove", name)
    for text in texts:
        assert password not in text
        for guess in ("secret", "password", password, "letmein"):  # a guess checked against every hash form
            candidate = url.replace(password, guess)
            for digest in (
                hashlib.sha256(candidate.encode()).hexdigest(),
                hashlib.sha1(candidate.encode()).hexdigest(),
            ):
                assert digest[:16] not in text, guess
    ids = [json.loads(text)["destinations"][0]["fingerprint"] for text in texts]
    assert ids[0] != ids[1]  # the same URL, two random ids: not derived from it


def test_an_older_versions_shared_slot_is_taken_over_only_for_the_url_the_settings_name(tmp_path):
    store = MemorySecretStore()
    store.persistent = True
    mine, theirs = "json://127.0.0.1:1/mine?+X-Key=k1", "json://127.0.0.1:1/theirs?+X-Key=k2"
    a, b = AppPaths.resolve(tmp_path / "a").ensure(), AppPaths.resolve(tmp_path / "b").ensure()
    for paths, url in ((a, mine), (b, mine)):
        save_destination(paths, store, make_destination("ops", url), url)
        _as_an_older_version_left_it(paths, store, url)
    store.set("destination:ops", theirs)  # the shared slot: the data dir saved last wins it
    profile_b = load_settings(b).destinations[0]
    with pytest.raises(UserFixableError, match="its URL is not in the keyring"):
        destination_url(store, b, profile_b)  # its settings name another URL: not taken
    store.set("destination:ops", mine)
    profile_a = load_settings(a).destinations[0]
    assert destination_url(store, a, profile_a) == mine  # taken over into a's own slot
    assert store.get(slot(a, "ops")) == mine
    for paths in (a, b):  # the old hash has left both settings files, matched or not
        text = paths.settings_file.read_text()
        assert hashlib.sha256(mine.encode()).hexdigest()[:16] not in text
        assert json.loads(text)["destinations"][0]["fingerprint"].startswith("r")


def _as_an_older_version_left_it(paths: AppPaths, store: MemorySecretStore, url: str) -> None:
    """The profile with the URL's unsalted hash, the URL in the shared slot only."""
    text = json.loads(paths.settings_file.read_text())
    text["destinations"][0]["fingerprint"] = hashlib.sha256(url.encode()).hexdigest()[:16]
    paths.settings_file.write_text(json.dumps(text))
    store.delete(slot(paths, "ops"))
    store.set("destination:ops", url)


def test_a_url_longer_than_the_keyring_keeps_is_refused_up_front(tmp_path):
    code, _, err = _run(
        tmp_path, "destinations", "add", "ops", stdin=f"json://127.0.0.1:1/{'x' * MAX_SECRET}\n"
    )
    assert code == 3, err
    assert err.strip() == (
        f"tenant-events: destination url: the URL is {MAX_SECRET + 19:,} characters; the keyring keeps at most "
        f"{MAX_SECRET:,}"
    )
    assert not (tmp_path / "settings.json").exists() or "ops" not in (tmp_path / "settings.json").read_text()
