"""Who and what events are about, in words: summary sentences, object timelines across tenants (Qt-free)."""

from tenant_events.entities.sentences import (
    Mention,
    NameLookup,
    Sentence,
    StoredLookup,
    describe,
    describe_all,
    describe_stored,
)

__all__ = ["Mention", "NameLookup", "Sentence", "StoredLookup", "describe", "describe_all", "describe_stored"]
