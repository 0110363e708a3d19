"""Object timelines and the "All tenants" view on big stores (issue "Know your tenant": bench figures).

Builds --stores tenant databases of --events events each from the simulator's own tenant generator (seeded per
tenant, every event type), written through the real StoreWriter, then indexed (full-text and entity directory)
as the app's idle indexer does. Then, medians over --runs:

  timeline   first screen (50 rows, sentences with names, the object's state) of the object whose timeline is
             nearest --object-events long (goal < 100 ms for ~10,000 in a 1M store); peer: the same object's
             first screen through the table's full-text search for its id (EventReader, newest first)
  all        first screen (100 rows) of all tenants by event time (goal < 150 ms for 3 × 1M), a deep page
             (keyset from the middle) and filtered first screens; peer: one store's first screen
             (EventReader.page_before), the view the app shows per tenant today
  window     the same through the window's parts, painted offscreen: the timeline pane (its title and 100
             entries with sentences, read over every store as the app does; then its state, read next) and the
             "All tenants" table (200 rows with sentences); peer: one tenant's table model over its store, first
             page (--ui-only: just these)

    .venv/bin/python bench/entities.py --events 1000000 --stores 3 --runs 7 --keep /tmp/bench-entities

With --keep the stores are kept in that directory and reused when present.
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

TENANTS = ("acme", "globex", "initech", "umbrella", "hooli")


def build(path: Path, n: int, seed: int, mean_gap_s: float = 0.5) -> collections.Counter[tuple[str, str]]:
    """A store of n generated events, `mean_gap_s` apart on average (bench/access.py spreads a million over
    months); returns how many events name each entity (wire/references.py)."""
    from tenant_events.simulator.generator import TenantLife
    from tenant_events.simulator.world import iso_ms
    from tenant_events.store import Batch, EventRow, StoreWriter
    from tenant_events.wire import EventMessage, decode_frame
    from tenant_events.wire.references import references

    life = TenantLife(seed, tenant_id=f"ten_{seed:016d}")
    rng = random.Random(seed)
    ts = datetime(2026, 1, 1, tzinfo=UTC).timestamp() + rng.random()
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    writer = StoreWriter(path)
    started = time.perf_counter()
    batch: list[Any] = []
    for i in range(n):
        ts += rng.expovariate(1 / mean_gap_s)
        kind, data = life.next_event(ts)
        env = {
            "specversion": "1.0",
            "type": kind,
            "source": "urn:sim:bench.sim.local",
            "id": f"evt_{seed:04d}{i:012d}",
            "time": iso_ms(ts),
            "data": data,
            "xtenant": "bench",
            "xstream": "est_" + "b" * 16,
        }
        raw = orjson.dumps({"offset": f"o{i}", "event": env}).decode()
        message = decode_frame(kind, raw)
        assert isinstance(message, EventMessage)
        batch.append(EventRow.from_message(message, raw, time.time()))
        counts.update((r.kind, r.id) for r in references(kind, data))
        if len(batch) == 1000:
            writer.commit_sync(Batch(events=batch, cursor=str(i)))
            batch = []
    if batch:
        writer.commit_sync(Batch(events=batch, cursor=str(n)))
    stored = time.perf_counter() - started
    writer.index_all_sync()  # full-text index, directory and access history, as the idle indexer would
    writer.close()
    print(
        f"  {path.stem}: {n:,} events stored in {stored:.0f} s, indexed in "
        f"{time.perf_counter() - started - stored:.0f} s",
        flush=True,
    )
    return counts


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def timeline_figures(
    path: Path, counts: collections.Counter[tuple[str, str]], target: int, runs: int
) -> None:
    from tenant_events.entities.sentences import describe_all
    from tenant_events.store import EventFilter, EventReader
    from tenant_events.store.entity_reader import DirectoryReader

    kind, eid = min(counts, key=lambda k: (abs(counts[k] - target), k))
    print(f"\ntimeline of {kind} {eid} in store {path.stem}", flush=True)
    with DirectoryReader(path) as directory, EventReader(path) as events:

        def rows() -> None:
            page = directory.timeline(kind, eid, None, 50)
            payloads = [(e.type, orjson.loads(e.raw or "{}")["event"]["data"]) for e in page]
            describe_all(payloads, directory)

        def state() -> None:
            directory.state(kind, eid)

        def first_screen() -> None:
            rows()
            state()

        def deep() -> None:
            directory.timeline(kind, eid, middle, 50)

        def peer() -> None:
            events.page_before(EventFilter(text=eid), None, 50)

        everything = directory.timeline(kind, eid, None, 100_000)
        middle = everything[len(everything) // 2].seq
        known = directory.state(kind, eid)
        links = (
            len(known.links) - sum(1 for link in known.links if not link.current) + known.ended_total
            if known
            else 0
        )
        print("| timeline | median ms |\n|---|---:|")
        print(
            f"| first screen: 50 events with their sentences, and the state | {median_ms(first_screen, runs):.1f} |"
        )
        print(f"| … the 50 events with their sentences | {median_ms(rows, runs):.1f} |")
        print(f"| … the state ({links:,} links) | {median_ms(state, runs):.1f} |")
        print(f"| a page from the middle (50 events) | {median_ms(deep, runs):.1f} |")
        print(f"| peer: the table's text search for the id, first 50 | {median_ms(peer, runs):.1f} |")
        print(f"timeline holds {len(everything):,} events (goal: first screen < 100 ms)")


def all_tenants_figures(stores: dict[str, Path], runs: int) -> None:
    from tenant_events.store import EventFilter, EventReader
    from tenant_events.store.all_tenants import AllTenantsReader

    everything = EventFilter()
    filters = {
        "no filter": everything,
        "one common type (user.created)": EventFilter(types=frozenset({"user.created"})),
        "one rare type (organization.deleted)": EventFilter(types=frozenset({"organization.deleted"})),
        "organization family (10 types)": EventFilter(
            types=frozenset(t for t in _types() if t.startswith("organization."))
        ),
        "text (common word)": EventFilter(text="example"),
        "no test events": EventFilter(include_test=False),
    }
    with AllTenantsReader(stores) as all_tenants, EventReader(next(iter(stores.values()))) as one:
        total = all_tenants.count()
        newest = all_tenants.page_before(everything, None, 1)[0]
        print(f"\nall tenants: {len(stores)} stores, {total:,} events", flush=True)
        print("| all tenants, first screen (100 rows) | median ms |\n|---|---:|")
        for name, flt in filters.items():
            print(
                f"| {name} | {median_ms(lambda f=flt: all_tenants.page_before(f, None, 100), runs):.1f} |",
                flush=True,
            )
        middle_ms = (newest.time_ms + all_tenants.page_after(everything, _oldest(), 1)[0].time_ms) // 2
        from tenant_events.store.all_tenants import AllTenantsKey

        key = AllTenantsKey(middle_ms, "", 0)
        print(
            f"| a page from the middle (keyset) | {median_ms(lambda: all_tenants.page_before(everything, key, 100), runs):.1f} |"
        )
        print(
            f"| peer: one store's first screen (EventReader) | "
            f"{median_ms(lambda: one.page_before(everything, None, 100), runs):.1f} |"
        )
        print("goal: all tenants' first screen < 150 ms")


def ui_figures(
    stores: dict[str, Path], counts: collections.Counter[tuple[str, str]], target: int, runs: int
) -> None:
    """The window's parts, painted offscreen: the timeline pane's first screen (title and 100 entries with
    sentences, over every store as the app reads it; the state follows on its own) and the "All tenants" table's
    first screen (200 rows with sentences)."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication, QTableView

    from tenant_events.entities.all_tenants_pages import AllTenantsPages
    from tenant_events.entities.objects import ObjectSpec
    from tenant_events.entities.timeline_pages import TimelineSource
    from tenant_events.store import EventFilter, EventReader
    from tenant_events.ui.window.all_tenants.all_tenants_model import AllTenantsTableModel
    from tenant_events.ui.window.table.event_table_model import EventTableModel
    from tenant_events.ui.window.timeline.timeline_pane import TimelinePane
    from tenant_events.view.tenant_reader import TenantReader

    app = QApplication.instance() or QApplication([])
    kind, eid = min(counts, key=lambda k: (abs(counts[k] - target), k))
    source = TimelineSource(stores)
    pane = TimelinePane()
    pane.resize(760, 860)
    pane.show()

    def timeline_screen() -> None:
        pane.show_screen(source.first(ObjectSpec(kind, eid)))
        app.processEvents()  # the pending layout (column widths) and paint, as the app's loop would run them

    def timeline_state() -> None:
        screen = source.first(ObjectSpec(kind, eid), 1)
        pane.show_state(source.state(screen))
        app.processEvents()

    def cold(fn: Callable[[], object]) -> float:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1000

    first_ms = cold(timeline_screen)
    print(
        f"\nwindow parts (offscreen Qt): timeline of {kind} {eid} ({counts[(kind, eid)]:,} events in "
        f"{next(iter(stores))}), over {len(stores)} stores",
        flush=True,
    )
    print("| window part, first screen painted | median ms | first run ms |\n|---|---:|---:|")
    print(
        f"| timeline pane: its title and 100 entries with sentences | {median_ms(timeline_screen, runs):.1f} | "
        f"{first_ms:.1f} |"
    )
    print(f"| … then its state (read next, on its own) | {median_ms(timeline_state, runs):.1f} | |")
    pages = AllTenantsPages(stores)
    model = AllTenantsTableModel()
    view = QTableView()
    view.setModel(model)
    view.resize(1280, 800)
    view.show()

    def all_tenants_screen(f: Any = EventFilter()) -> None:  # noqa: B008 - frozen
        model.reset(pages.first(f, 200), False)
        app.processEvents()

    first_ms = cold(all_tenants_screen)
    print(
        f"| All tenants: 200 rows with sentences, {len(stores)} stores | {median_ms(all_tenants_screen, runs):.1f} | "
        f"{first_ms:.1f} |"
    )
    typed = EventFilter(types=frozenset({"organization.member.added"}))
    print(
        f"| … filtered to organization.member.added | {median_ms(lambda: all_tenants_screen(typed), runs):.1f} | |"
    )
    with EventReader(next(iter(stores.values()))) as reader:
        one = EventTableModel()
        peer = QTableView()
        peer.setModel(one)
        peer.resize(1280, 800)
        peer.show()

        one.set_reader(TenantReader(reader))

        def one_screen() -> None:
            one.reload(count_later=True)  # as the window does: the first page now, the total on a worker
            app.processEvents()

        print(
            f"| peer: one tenant's table (the app's per-tenant view) | {median_ms(one_screen, runs):.1f} | |"
        )
        one.set_reader(None)
    pages.close()
    source.close()
    app.processEvents()
    print("goals: timeline first screen < 100 ms; All tenants first screen < 150 ms")


def _oldest() -> Any:
    from tenant_events.store.all_tenants import AllTenantsKey

    return AllTenantsKey(-1, "", 0)


def _types() -> list[str]:
    from tenant_events.wire.event_types import EVENT_TYPE_NAMES

    return sorted(EVENT_TYPE_NAMES)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000, help="events per store")
    ap.add_argument("--stores", type=int, default=3, choices=range(1, len(TENANTS) + 1))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--object-events", type=int, default=10_000, help="timeline length to look for")
    ap.add_argument("--keep", type=Path, help="keep (and reuse) the stores in this directory")
    ap.add_argument("--ui-only", action="store_true", help="only the window parts' figures")
    args = ap.parse_args()
    import os
    import tempfile

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-entities-"))
    root.mkdir(parents=True, exist_ok=True)
    print("load average at start:", " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    stores: dict[str, Path] = {}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for index, tenant in enumerate(TENANTS[: args.stores]):
        path = root / f"{tenant}-{args.events}.sqlite3"
        counts_file = path.with_suffix(".counts.json")
        if path.exists() and counts_file.exists():
            loaded = orjson.loads(counts_file.read_bytes())
            mine = collections.Counter({(k, i): n for k, i, n in loaded})
        else:
            path.unlink(missing_ok=True)
            mine = build(path, args.events, seed=index + 1)
            counts_file.write_bytes(orjson.dumps([[k, i, n] for (k, i), n in mine.items()]))
        stores[tenant] = path
        if index == 0:
            counts = mine
    if not args.ui_only:
        timeline_figures(stores[TENANTS[0]], counts, args.object_events, args.runs)
        all_tenants_figures(stores, args.runs)
    ui_figures(stores, counts, args.object_events, args.runs)
    print("load average at end:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
