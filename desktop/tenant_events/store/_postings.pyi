from collections.abc import Sequence

class Postings:
    """An archive file's FTS5 tokens, each with the seqs of the events that hold it (_postings.c)."""

    longest: int
    terms: int
    def add(self, seqs: Sequence[int], /, *columns: Sequence[str]) -> None: ...
    def block(self) -> bytes: ...

class PairLists:
    """The pairs of seen words side by side in an archive file's events (pair_lists.c)."""

    longest: int
    def word(self, word: bytes, seq: int, /) -> None: ...
    def unsure(self, seq: int, /) -> None: ...
    def add(
        self, seq: int, event_id: str, summary: str, text: str, marks: Sequence[tuple[bytes, bytes]], /
    ) -> None: ...
    def block(self) -> bytes: ...
