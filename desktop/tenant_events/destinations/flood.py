"""A flood folds into one delivery per destination: the firings of one grouped rule queued within FOLD_S of each
other (a script touching 8 organizations, one alert per organization) go out as one message (message.py
`folded_message`) and are all marked delivered by its answer; a failure leaves each to be retried as it was.

Only a grouped rule's alerts fold here: an ungrouped rule's firings within seconds already fold into its one open
alert as versions (coalescing), so separate alerts of it so close together are what a rule with
`coalesce_minutes: 0` asks for — each said on its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tenant_events.alerts.presentation import FOLD_S
from tenant_events.store.outbox import Delivery
from tenant_events.values.alerts import StoredAlert


async def flood_of(
    read: Callable[[int], Awaitable[StoredAlert | None]],
    alert: StoredAlert,
    deliveries: list[Delivery],
    i: int,
    taken: set[int],
    silenced: Callable[[StoredAlert], bool],
) -> list[tuple[Delivery, StoredAlert]]:
    """The later firings among `deliveries` of the rule of `deliveries[i]` (whose alert is `alert`), queued within
    FOLD_S of it, to be said with it; their indexes are added to `taken`. `read(alert id)`: the stored alert."""
    first = deliveries[i]
    if first.kind != "firing" or not alert.group_key:
        return []
    fold: list[tuple[Delivery, StoredAlert]] = []
    for j in range(i + 1, len(deliveries)):
        d = deliveries[j]
        if j in taken or d.kind != "firing" or d.alert_id == first.alert_id:
            continue
        if abs(d.queued_at - first.queued_at) > FOLD_S:
            continue
        other = await read(d.alert_id)
        if other is not None and other.rule_id == alert.rule_id and other.group_key and not silenced(other):
            fold.append((d, other))
            taken.add(j)
    return fold
