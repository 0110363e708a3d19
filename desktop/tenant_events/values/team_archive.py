"""Where a team's shared archive is (docs/archive.md "Team archive"): what the settings, the command line, the
hub viewer and the store hand each other."""

from __future__ import annotations

from dataclasses import dataclass

S3_SCHEME = "s3://"


@dataclass(frozen=True)
class Lake:
    """DuckLake's catalog (`postgres:` and libpq's words, never a password) and where its files are: a shared
    folder, or a place in S3-compatible object storage (`s3://bucket/prefix`) with, for a service other than
    AWS, its endpoint (`https://host:port`), region and URL style. Never the storage's keys (the keyring's)."""

    catalog: str
    data_path: str
    endpoint: str = ""  # empty: AWS itself
    region: str = ""  # empty: us-east-1
    url_style: str = ""  # path or vhost; empty: path with an endpoint, vhost on AWS

    @property
    def in_object_storage(self) -> bool:
        return self.data_path.startswith(S3_SCHEME)

    @property
    def bucket(self) -> str:
        """The bucket of an object-storage lake ("" for a folder)."""
        return self.data_path.removeprefix(S3_SCHEME).split("/", 1)[0] if self.in_object_storage else ""
