"""The one error of reading a Sigma file: what the rule model cannot hold, with the field it is about, so the
import names the exact place to change instead of approximating the rule."""

from __future__ import annotations


class Refusal(ValueError):
    """What cannot be expressed, with the field (and modifier) it is about: `where` is e.g. `data.x|base64`."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
