"""An S3-compatible object storage server of a test's own: moto's server (`python -m moto.server`) on 127.0.0.1
and a free port, for a team archive whose files are in a bucket.

It checks every request's signature and IAM policy like AWS does (moto's IAM enforcement, switched on by
INITIAL_NO_AUTH_ACTION_COUNT: only the first three requests — making the admin user, its key and its policy — go
unsigned). Each bucket gets two users: `relay` may do anything with it, `viewer` may only list and read it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from tenant_events.store.lake_storage import use_keys
from tenant_events.values.team_archive import Lake

Keys = tuple[str, str]  # (access key id, secret)
KEY_ID_ENV, SECRET_ENV = "TENANT_EVENTS_TEAM_ARCHIVE_KEY_ID", "TENANT_EVENTS_TEAM_ARCHIVE_SECRET"
_UNSIGNED_SETUP = 3  # create the admin user, its key, its policy


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _client(service: str, endpoint: str, keys: Keys) -> Any:
    import boto3

    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=keys[0],
        aws_secret_access_key=keys[1],
    )


def _policy(bucket: str, actions: list[str]) -> str:
    resources = [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": actions, "Resource": resources}],
        }
    )


@dataclass(frozen=True)
class Bucket:
    name: str
    relay: Keys  # may write
    viewer: Keys  # may list and read only


@dataclass
class ObjectStorage:
    endpoint: str  # http://127.0.0.1:PORT
    admin: Keys
    log: Path
    made: Iterator[int] = field(default_factory=lambda: count(1))

    def new_bucket(self) -> Bucket:
        """A bucket of its own, with a relay user that may write it and a viewer user that may only read it."""
        n = next(self.made)
        name = f"team-{n}"
        _client("s3", self.endpoint, self.admin).create_bucket(Bucket=name)
        iam = _client("iam", self.endpoint, self.admin)
        users: list[Keys] = []
        for role, actions in (("relay", ["s3:*"]), ("viewer", ["s3:GetObject", "s3:ListBucket"])):
            user = f"{role}-{n}"
            iam.create_user(UserName=user)
            key = iam.create_access_key(UserName=user)["AccessKey"]
            iam.put_user_policy(UserName=user, PolicyName="lake", PolicyDocument=_policy(name, actions))
            users.append((str(key["AccessKeyId"]), str(key["SecretAccessKey"])))
        return Bucket(name, users[0], users[1])

    def objects(self, bucket: str) -> list[str]:
        listed = _client("s3", self.endpoint, self.admin).list_objects_v2(Bucket=bucket)
        return sorted(str(o["Key"]) for o in listed.get("Contents", []))


@pytest.fixture(scope="session")
def object_storage() -> Iterator[ObjectStorage]:
    """The server, for the worker's tests (each takes buckets of its own), stopped after."""
    port = _free_port()
    home = Path(tempfile.mkdtemp(prefix="tenant-events-s3-"))
    log = home / "moto.log"
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(_UNSIGNED_SETUP)}
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=home,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "moto's server did not start listening in 120 s"
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}"
        iam = _client("iam", endpoint, ("AKIAIOSFODNN7EXAMPLE", "unsigned-setup"))
        iam.create_user(UserName="admin")
        key = iam.create_access_key(UserName="admin")["AccessKey"]
        iam.put_user_policy(
            UserName="admin",
            PolicyName="all",
            PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
            ),
        )
        yield ObjectStorage(endpoint, (str(key["AccessKeyId"]), str(key["SecretAccessKey"])), log)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(30)
        for leftover in home.iterdir():
            leftover.unlink()
        home.rmdir()


@dataclass(frozen=True)
class Files:
    """Where a test's lake keeps its files: a shared folder (no bucket), or a bucket of moto's server."""

    storage: ObjectStorage | None = None
    bucket: Bucket | None = None

    def lake(self, catalog: str, shared: Path) -> Lake:
        if self.bucket is None:
            return Lake(catalog, str(shared))
        assert self.storage is not None
        return Lake(catalog, f"s3://{self.bucket.name}/lake", self.storage.endpoint, "us-east-1", "path")

    def keys(self, role: str) -> Keys | None:
        """The relay's (read and write) or the viewer's (read-only) storage keys; None for a folder."""
        return None if self.bucket is None else (self.bucket.relay if role == "relay" else self.bucket.viewer)

    def parquet_files(self, shared: Path) -> list[str]:
        """The lake's data files where they are kept: in the shared folder, or in the bucket."""
        if self.storage is None or self.bucket is None:
            return sorted(str(p.relative_to(shared)) for p in shared.rglob("*.parquet"))
        return [key for key in self.storage.objects(self.bucket.name) if key.endswith(".parquet")]

    def options(self, catalog: str, shared: Path) -> tuple[str, ...]:
        """The command line's options for the lake of `catalog` (never its keys: `env`)."""
        lake = self.lake(catalog, shared)
        where = ("--team-archive", lake.catalog, "--team-archive-path", lake.data_path)
        if self.bucket is None:
            return where
        return (*where, "--team-archive-endpoint", lake.endpoint, "--team-archive-url-style", lake.url_style)

    def env(self, role: str) -> dict[str, str]:
        """`role`'s storage keys as a command is given them (empty for a folder)."""
        keys = self.keys(role)
        return {} if keys is None else {KEY_ID_ENV: keys[0], SECRET_ENV: keys[1]}

    def use(self, lake: Lake, role: str) -> None:
        """This process reads and writes `lake`'s place with `role`'s keys."""
        if self.bucket is not None:
            use_keys(lake, self.keys(role))


@pytest.fixture(params=["folder", "s3"])
def lake_files(request: pytest.FixtureRequest) -> Files:
    """Where a test's lake keeps its files, the test run once for each: a shared folder, then a bucket of moto's
    server (with a relay key and a read-only viewer key)."""
    if request.param == "folder":
        return Files()
    storage = request.getfixturevalue("object_storage")
    return Files(storage, storage.new_bucket())
