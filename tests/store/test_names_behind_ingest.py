"""Names do not wait behind ingest: a batch bigger than a live one (a reconnect's backlog) is left to the indexer,
which still runs while live traffic keeps the writer busy, and an alert about such a batch is worded with the
names it holds, not the ids. A catch-up alert's later events are worded once the indexer has brought the
directory up to them (bringing it up for each would keep the whole directory during a backlog)."""

from __future__ import annotations

import time

from helpers.entity_events import Tenant, simulated_rows
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Evaluator, RuleEngine, load_rules
from tenant_events.store import AlertInbox, Batch, StoreWriter
from tenant_events.store.directory import LIVE_BATCH
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.indexer import FTS_CHUNK


def test_the_indexer_catches_up_while_live_batches_keep_coming(tmp_path):
    path = tmp_path / "demo.sqlite3"
    rows, _life = simulated_rows(LIVE_BATCH + 400)
    writer = StoreWriter(path)
    try:
        writer.commit_sync(
            Batch(events=rows[:-20], cursor="backlog")
        )  # a catch-up's batch: left to the indexer
        with DirectoryReader(path) as reader:
            for i, row in enumerate(rows[-20:]):  # then live events every 0.2 s: never 0.5 s without a batch
                writer.commit_sync(Batch(events=[row], cursor=f"live{i}"))
                time.sleep(0.2)
                if reader.watermark() == len(rows) - 19 + i:
                    break
            else:
                raise AssertionError(f"the directory stayed at {reader.watermark()} of {len(rows)} stored")
    finally:
        writer.close()


def test_under_traffic_every_turn_goes_to_indexing_when_nothing_else_is_to_do(tmp_path, monkeypatch):
    """A store with nothing moved to the archive has no moved rows to take out of its full-text index: under live
    traffic (one idle turn before each batch here) each turn indexes a chunk of a catch-up, none is spent on a
    clean-up with nothing to do (each such turn is another INDEX_AT_LEAST_EVERY for the names to wait)."""
    from tenant_events.store import writer as writer_module

    for name in ("IDLE_BEFORE_INDEXING", "INDEX_AT_LEAST_EVERY"):  # no turn but the ones asked for below
        monkeypatch.setattr(writer_module, name, 3600.0)
    path = tmp_path / "demo.sqlite3"
    rows, _life = simulated_rows(2 * FTS_CHUNK + 100)
    writer = StoreWriter(path)
    try:
        writer.commit_sync(
            Batch(events=rows[:-2], cursor="backlog")
        )  # a catch-up's batch: left to the indexer
        monkeypatch.setattr(writer_module, "INDEX_AT_LEAST_EVERY", 0.0)  # a turn before every batch
        for i, row in enumerate(rows[-2:]):
            writer.commit_sync(Batch(events=[row], cursor=f"live{i}"))
        with DirectoryReader(path) as reader:
            assert reader.watermark() >= 2 * FTS_CHUNK, "a turn went to something other than indexing"
    finally:
        writer.close()


def pack_evaluator() -> Evaluator:
    """The built-in pack, with every hour outside working hours."""
    rules = load_rules([], BUILTIN_RULES).rules
    around_the_clock = WorkingHours(start="00:00", end="00:00", timezone="UTC")
    return Evaluator(RuleEngine(rules, hours=around_the_clock, profile="demo"))


def test_an_alert_about_a_catch_up_batch_names_who_and_where(tmp_path):
    path = tmp_path / "demo.sqlite3"
    t = Tenant()
    grace, stark, admin = "auth0|3de8f2ea3c49aa", "org_0000000000stark", "rol_admin0000000001"
    filler = [t.row("user.created", t.user(f"auth0|filler{i:04d}", f"f{i}@example.com")) for i in range(80)]
    rows = [
        *filler,
        t.row("user.created", t.user(grace, "grace.hopper@example.com", "Grace Hopper")),
        t.row("organization.created", t.org(stark, "stark", "Stark Industries")),
        t.row("organization.member.added", {"organization": {"id": stark}, "user": {"user_id": grace}}),
        t.row(
            "organization.member.role.assigned",
            {
                "organization": {"id": stark},
                "user": {"user_id": grace},
                "role": {"id": admin, "name": "admin"},
            },
        ),
    ]
    assert len(rows) > LIVE_BATCH
    evaluator = pack_evaluator()
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=rows, cursor="backlog"))
        writer.run_alert_job(evaluator.step).result()
    finally:
        writer.close()
    with AlertInbox(path) as inbox:
        (grant,) = [a for a in inbox.alerts() if a.rule_id == "admin-role"]
    assert grant.detail == "grace.hopper@example.com added to organization Stark Industries as admin"


def test_a_catch_up_alerts_later_event_is_worded_with_names_once_the_indexer_reached_it(
    tmp_path, monkeypatch
):
    from tenant_events.store import writer as writer_module

    for name in ("IDLE_BEFORE_INDEXING", "INDEX_AT_LEAST_EVERY"):  # the idle-time indexer waits to be asked
        monkeypatch.setattr(writer_module, name, 3600.0)
    path = tmp_path / "demo.sqlite3"
    t = Tenant()
    stark, admin = "org_0000000000stark", "rol_admin0000000001"

    def granted(uid: str, email: str) -> list:
        return [
            t.row("user.created", t.user(uid, email)),
            t.row(
                "organization.member.role.assigned",
                {
                    "organization": {"id": stark},
                    "user": {"user_id": uid},
                    "role": {"id": admin, "name": "admin"},
                },
            ),
        ]

    filler = [t.row("user.created", t.user(f"auth0|filler{i:04d}", f"f{i}@example.com")) for i in range(60)]
    first = [*filler, t.row("organization.created", t.org(stark, "stark", "Stark Industries"))]
    first += granted("auth0|grace0000000001", "grace@example.com")
    second = [
        *[t.row("user.updated", t.user(f"auth0|filler{i:04d}", f"g{i}@example.com")) for i in range(60)]
    ]
    second += granted("auth0|linus0000000002", "linus@example.com")
    evaluator = pack_evaluator()
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=first, cursor="backlog-1"))
        writer.run_alert_job(evaluator.step).result()
        writer.commit_sync(Batch(events=second, cursor="backlog-2"))
        folded = writer.run_alert_job(evaluator.step).result()
        (alert,) = [a for a in folded.updated if a.rule_id == "admin-role"]
        assert alert.catch_up and "auth0|linus0000000002" in alert.detail  # the directory had not reached it
        writer.index_all_sync()
        named = writer.run_alert_job(evaluator.step).result()  # (no new event: the next step says it again)
        renamed = {a.id: a.detail for a in named.updated}  # (off-hours holds the same event)
        assert renamed[alert.id] == "linus@example.com added to organization Stark Industries as admin"
        assert not named.raised and not named.refired
    finally:
        writer.close()
    with AlertInbox(path) as inbox:
        (stored,) = [a for a in inbox.alerts() if a.rule_id == "admin-role"]
    assert stored.detail == "linus@example.com added to organization Stark Industries as admin"


def test_a_growing_alert_is_said_with_the_names_at_its_time_once_it_stops_not_at_every_chunk(tmp_path):
    """The rules behind the directory (a catch-up, the rules' own process): every chunk grows the catch-up's
    admin alert, whose latest event names an organization renamed since. Its history is read once, when the
    alert stops growing, not once per chunk (that was most of the rules' CPU behind the store)."""
    path = tmp_path / "demo.sqlite3"
    t = Tenant()
    stark, admin = "org_0000000000stark", "rol_admin0000000001"
    users = [f"auth0|grantee{i:010d}" for i in range(30)]
    rows = [t.row("organization.created", t.org(stark, "stark", "Stark Industries"))]
    rows += [t.row("user.created", t.user(uid, f"u{i}@example.com")) for i, uid in enumerate(users)]
    rows += [
        t.row(
            "organization.member.role.assigned",
            {"organization": {"id": stark}, "user": {"user_id": uid}, "role": {"id": admin, "name": "admin"}},
        )
        for uid in users
    ]
    rows.append(t.row("organization.updated", t.org(stark, "stark", "Stark Enterprises")))  # renamed after
    rules = load_rules([], BUILTIN_RULES).rules
    around_the_clock = WorkingHours(start="00:00", end="00:00", timezone="UTC")
    evaluator = Evaluator(RuleEngine(rules, hours=around_the_clock, profile="demo"), chunk=2)
    writer = StoreWriter(path)
    history: list[str] = []
    try:
        writer.commit_sync(Batch(events=rows, cursor="backlog"))
        writer.index_all_sync()  # the directory ahead of the rules: it knows the new name

        def step_counting(ledger):
            conn = ledger._conn
            conn.set_trace_callback(
                lambda sql: history.append(sql.split("instr(raw, ")[1][:30]) if "instr(raw" in sql else None
            )
            try:
                return evaluator.step(ledger)
            finally:
                conn.set_trace_callback(None)

        grown = writer.run_alert_job(step_counting).result()  # 31 chunks, the admin alert grew in 15
        (alert,) = [a for a in grown.raised if a.rule_id == "admin-role"]
        assert alert.catch_up and alert.event_count == 30
        growing = list(history)
        history.clear()
        stopped = writer.run_alert_job(step_counting).result()  # nothing new: it stopped growing
    finally:
        writer.close()
    # (each grant names the organization and the role, whose name every grant sets anew: both read as renamed)
    assert len(growing) == len(set(growing)) <= 2, (
        f"an entity's history read again while the alert grew: {growing}"
    )
    said = {a.id: a.detail for a in stopped.updated}
    assert said[alert.id] == "u29@example.com added to organization Stark Industries as admin", said
    assert len(history) == len(set(history)) <= 2, history
    with AlertInbox(path) as inbox:
        (stored,) = [a for a in inbox.alerts() if a.rule_id == "admin-role"]
    assert stored.detail == said[alert.id]
