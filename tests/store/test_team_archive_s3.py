"""A team archive whose files are in S3-compatible object storage (moto's server, checking every request's
signature and its user's policy): what a wrong key, a read-only key, a missing bucket and an endpoint out of reach
do, said in one line that names the bucket and never holds the secret; and the keys reaching a later command
through the keyring only (docs/archive.md "Team archive"). Moving and reading an S3 lake, two viewers and a mover
killed mid-move are test_team_archive.py's tests, each run over a bucket as over a folder."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import orjson
import pytest

from helpers.fixtures_postgres import RELAY_PASSWORD, VIEWER_PASSWORD, Postgres
from helpers.fixtures_s3 import KEY_ID_ENV, SECRET_ENV, Files, ObjectStorage
from helpers.history import history
from helpers.team_lake import filled_store, lake_ids
from tenant_events.errors import ConfigError, NetworkError
from tenant_events.store import duck
from tenant_events.store.archive_lake import attach, check_storage, use_password
from tenant_events.store.lake_storage import use_keys
from tenant_events.values.team_archive import Lake

ROOT = Path(__file__).resolve().parents[2]
DAY = 86400.0
CATALOG = "postgres:dbname=lake host=127.0.0.1 user=viewer"  # (not reached: the storage is checked first)
REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_wrong_keys_a_missing_bucket_and_an_endpoint_out_of_reach_each_say_so_without_the_secret(
    object_storage: ObjectStorage,
):
    bucket = object_storage.new_bucket()
    endpoint = object_storage.endpoint

    def place(prefix: str, name: str = bucket.name, at: str = endpoint) -> Lake:
        return Lake(CATALOG, f"s3://{name}/{prefix}", at, "us-east-1", "path")

    read = place("read-only")
    use_keys(read, bucket.viewer)
    check_storage(read)  # a viewer's read-only keys may list it
    cases = [
        (
            place("wrong-secret"),
            (bucket.relay[0], "wrong-Secret-9f2c7Q"),
            ConfigError,
            "access denied to bucket",
        ),
        (place("unknown-key"), ("AKIAUNKNOWN123456789", "unknown-Secret-7d1e"), ConfigError, "access denied"),
        (
            place("lake", "no-such-bucket"),
            object_storage.admin,
            ConfigError,
            "bucket 'no-such-bucket' does not",
        ),
        (
            place("lake", at=f"http://127.0.0.1:{_closed_port()}"),
            bucket.relay,
            NetworkError,
            "cannot be reached",
        ),
    ]
    for lake, keys, kind, said in cases:
        use_keys(lake, keys)
        with pytest.raises(kind) as caught:
            check_storage(lake)
        text = str(caught.value) + caught.value.hint
        assert said in text and "\n" not in text, text
        assert lake.bucket in text or kind is NetworkError, text
        assert keys[1] not in text and keys[0] not in text, text
    # the relay's keys for a bucket it may not use: access denied, naming the bucket (not "does not exist")
    other = place("lake", "team-elsewhere")
    use_keys(other, bucket.relay)
    with pytest.raises(ConfigError, match="access denied to bucket 'team-elsewhere'"):
        check_storage(other)


_WRITER = """
import json, sys
from pathlib import Path
from tenant_events.errors import UserFixableError
from tenant_events.store import StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_lake import use_password
from tenant_events.store.lake_storage import use_keys
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake
lake = Lake(**json.loads(sys.argv[2]))
use_password(lake.catalog, sys.stdin.readline().strip())
use_keys(lake, (sys.stdin.readline().strip(), sys.stdin.readline().strip()))
writer = StoreWriter(Path(sys.argv[1]))
try:
    keep(writer, Retention(keep_live_days=30, settle_seconds=0), move_rows=400, lake=lake, fence=lambda: True)
    print("moved")
except UserFixableError as exc:
    print(f"refused: {exc}")
finally:
    writer.close()
"""


def test_a_viewers_read_only_keys_cannot_write_the_bucket(
    postgres: Postgres, object_storage: ObjectStorage, tmp_path: Path
):
    """Even through a catalog user allowed to write, a process holding a viewer's read-only keys writes no file:
    the storage refuses it, and the move writes nothing (the relay's keys then move everything)."""
    files = Files(object_storage, object_storage.new_bucket())
    name = postgres.new_lake()
    lake = files.lake(postgres.catalog(name, "relay"), tmp_path)
    use_password(lake.catalog, RELAY_PASSWORD)
    files.use(lake, "relay")
    rows = history(900, time.time() - 60 * DAY, 60 * DAY / 900, seed=21)
    relay = filled_store(tmp_path / "relay.sqlite3", rows, lake)
    home = tmp_path / "home"  # where DuckDB would keep a persistent secret (~/.duckdb): it must keep none
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.pathsep.join([str(ROOT / "desktop"), *sys.path])}

    def move(role: str) -> str:
        keys = files.keys(role)
        assert keys is not None
        out = subprocess.run(
            [sys.executable, "-c", _WRITER, str(relay), json.dumps(dataclasses.asdict(lake))],
            input="\n".join([RELAY_PASSWORD, *keys]) + "\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert keys[1] not in out.stdout + out.stderr
        return out.stdout.strip()

    said = move("viewer")
    assert said.startswith("refused: ") and f"access denied to bucket '{lake.bucket}'" in said, said
    assert lake_ids(lake) == [] and files.parquet_files(tmp_path) == []
    assert move("relay") == "moved"
    assert [p for p in home.rglob("*")] == [], "DuckDB wrote into the home folder"
    held = lake_ids(lake)
    assert len(held) > 400 and held == [r.event_id for r in rows[: len(held)]]
    # keys changed after the lake was attached in this process (new ones saved in the app) are used from then on
    use_keys(lake, files.keys("viewer"))
    attach(lake, read_only=True)  # (attached by lake_ids above: the cached alias, its secret made anew)
    cur = duck.cursor()
    try:
        with pytest.raises(duckdb.Error, match="AccessDenied"):
            cur.execute(f"COPY (SELECT 1 AS x) TO '{lake.data_path}/written-with-a-viewers-key.parquet'")
    finally:
        cur.close()


def _cli(*args: str, env: dict[str, str], data: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in (KEY_ID_ENV, SECRET_ENV)}
    return subprocess.run(
        [sys.executable, "-m", "tenant_events", *args, "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**base, **env},
    )


def _written(data: Path) -> str:
    return "".join(p.read_bytes().decode("latin-1") for p in data.rglob("*") if p.is_file())


@pytest.mark.dbus
@pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)")
def test_the_command_line_says_what_is_wrong_in_one_line_and_the_keys_reach_later_commands_by_keyring(
    postgres: Postgres, object_storage: ObjectStorage, tmp_path: Path
):
    bucket = object_storage.new_bucket()
    name = postgres.new_lake()
    catalog = postgres.catalog(name, "viewer")
    place = f"s3://{bucket.name}/lake"
    team = ["--team-archive", catalog, "--team-archive-path", place]
    at = ["--team-archive-endpoint", object_storage.endpoint]
    stream = [
        "stream",
        "--hub",
        f"nats://127.0.0.1:{_closed_port()}",
        "--hub-tenant",
        "acme",
        "--name",
        "acme",
    ]
    data = tmp_path / "data"
    wrong = "wrong-Secret-5b8e1K"
    cases = [
        (
            [*team, *at],
            {KEY_ID_ENV: bucket.viewer[0], SECRET_ENV: wrong},
            3,
            f"access denied to bucket '{bucket.name}'",
        ),
        ([*team[:3], "s3://Team_Bucket/lake", *at], {}, 3, "--team-archive-path: names no valid bucket"),
        (
            [*team, "--team-archive-endpoint", "ftp://127.0.0.1"],
            {},
            3,
            "--team-archive-endpoint: is not an endpoint",
        ),
        (
            [*team, "--team-archive-endpoint", f"http://127.0.0.1:{_closed_port()}"],
            {},
            6,
            "cannot be reached",
        ),
        (
            [*team[:3], "s3://no-such-bucket/lake", *at],
            {KEY_ID_ENV: object_storage.admin[0], SECRET_ENV: object_storage.admin[1]},
            3,
            "bucket 'no-such-bucket' does not exist",
        ),
        ([*team[:3], str(tmp_path), "--team-archive-region", "us-east-1"], {}, 3, "is for files in object"),
    ]
    for options, env, code, said in cases:
        out = _cli(*stream, *options, env=env, data=data)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == code and len(lines) == 1 and said in lines[0], (options, out.stderr)
        for secret in (wrong, object_storage.admin[1], bucket.viewer[1]):
            assert secret not in out.stdout + out.stderr
    assert wrong not in _written(data) and object_storage.admin[1] not in _written(data)
    # a viewer's database read with the lake: `export` finds the storage's keys (and the password) in the keyring
    from tenant_events.auth.secret_store import open_secret_store
    from tenant_events.tenant.team_archive import keep_keys, keep_password

    files = Files(object_storage, bucket)
    relay_lake = files.lake(postgres.catalog(name, "relay"), tmp_path)
    viewer_lake = dataclasses.replace(relay_lake, catalog=catalog)
    use_password(relay_lake.catalog, RELAY_PASSWORD)
    files.use(relay_lake, "relay")
    rows = history(700, time.time() - 60 * DAY, 60 * DAY / 700, seed=23)
    from tenant_events.store import StoreWriter
    from tenant_events.store.archive_keeper import keep
    from tenant_events.values.retention import Retention

    writer = StoreWriter(filled_store(tmp_path / "relay.sqlite3", rows, relay_lake))
    try:
        keep(
            writer,
            Retention(keep_live_days=30, settle_seconds=0),
            move_rows=300,
            lake=relay_lake,
            fence=lambda: True,
        )
    finally:
        writer.close()
    moved = lake_ids(relay_lake)
    assert moved
    secrets = open_secret_store().store
    keep_password(secrets, catalog, VIEWER_PASSWORD)
    keep_keys(secrets, viewer_lake, bucket.viewer)
    viewer_data = tmp_path / "viewer"
    (viewer_data / "tenants").mkdir(parents=True)
    filled_store(viewer_data / "tenants" / "acme.sqlite3", rows[len(moved) - 50 :], viewer_lake)
    out = _cli("export", "--jsonl", "-", env={}, data=viewer_data)
    assert out.returncode == 0, out.stderr
    assert [orjson.loads(line)["event"]["id"] for line in out.stdout.splitlines()] == [
        r.event_id for r in rows
    ]
    keep_keys(
        secrets, viewer_lake, (bucket.viewer[0], wrong)
    )  # keys the storage refuses: one line, no secret
    out = _cli("export", "--jsonl", "-", env={}, data=viewer_data)
    assert out.returncode == 3 and f"access denied to bucket '{bucket.name}'" in out.stderr, out.stderr
    assert wrong not in out.stdout + out.stderr and wrong not in _written(viewer_data)
    keep_keys(secrets, viewer_lake, None)
