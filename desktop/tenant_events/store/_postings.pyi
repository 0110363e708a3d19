from collections.abc import Callable, Mapping, Sequence

def json_lines(array: bytes, /) -> bytes: ...

class Postings:
    """An archive file's FTS5 tokens, each with the seqs of the events that hold it (_postings.c)."""

    longest: int
    terms: int
    def add(self, seqs: Sequence[int], /, *columns: Sequence[str]) -> None: ...
    def block(self) -> bytes: ...

class PairLists:
    """The pairs of seen words side by side in an archive file's events (pair_lists.c)."""

    longest: int
    def __init__(self, first_seen: Callable[[PairLists, int, str], tuple[bytes, bytes] | None]) -> None: ...
    def word(self, word: bytes, seq: int, /) -> None: ...
    def add(
        self,
        seq: int,
        event_id: str,
        summary: str,
        text: str,
        values: Sequence[Sequence[str] | None],
        spelled: Sequence[str],
        /,
    ) -> None: ...
    def block(self) -> bytes: ...

class FieldLists:
    """The field rows of an archive file's events (field_lists.c)."""

    longest: int
    def __init__(
        self,
        heads: tuple[tuple[str, str], ...],
        every: tuple[bool, ...],
        piece: int,
        user: int,
        email: int,
        cover: str,
    ) -> None: ...
    def add(self, seq: int, raw: str, fields: Sequence[Sequence[str] | None], /) -> list[str]: ...
    def count(self, counted: Mapping[str, int], /) -> None: ...
    def block(self, upto: str | None = None, /) -> bytes: ...

class FieldScan:
    """An event type's field values read from its JSON text (field_scan.c)."""

    def __init__(
        self,
        holders: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...],
        places: tuple[tuple[int, ...], ...],
        sql_text: Callable[[object], str | None],
    ) -> None: ...
    def scan(self, raw: str, /) -> list[list[str]] | None: ...
