"""What a *.updated event changed: from previous_object, from the earlier event, or the fields it set."""

from __future__ import annotations

from tenant_events.view.update_diff import (
    MISSING,
    Change,
    diff_objects,
    earlier_query,
    identity,
    short_value,
    update_diff,
)

USER = {
    "user_id": "auth0|abc",
    "email": "a@example.com",
    "blocked": False,
    "logins_count": 1,
    "app_metadata": {"plan": "free", "seats": 2},
    "created_at": "t0",
    "updated_at": "t1",
}


def test_previous_object_gives_exact_changes_with_nested_paths():
    after = {
        **USER,
        "blocked": True,
        "app_metadata": {"plan": "pro", "seats": 2},
        "updated_at": "t2",
        "last_login": "t2",
    }
    del after["logins_count"]
    diff = update_diff("user.updated", {"object": after, "previous_object": USER})
    assert diff is not None and diff.source == "previous_object"
    assert diff.changes == [
        Change("blocked", False, True),
        Change("app_metadata.plan", "free", "pro"),
        Change("updated_at", "t1", "t2"),
        Change("last_login", MISSING, "t2"),
        Change("logins_count", 1, MISSING),
    ]
    assert [c.kind for c in diff.changes][-2:] == ["added", "removed"]


def test_earlier_object_or_fields_set():
    after = {**USER, "email_verified": True}
    earlier = update_diff("user.updated", {"object": after}, earlier_object=USER)
    assert earlier is not None and earlier.source == "earlier_event"
    assert earlier.changes == [Change("email_verified", MISSING, True)]
    alone = update_diff("user.updated", {"object": after})
    assert alone is not None and alone.source == "fields_set"
    assert "user_id" not in [c.path for c in alone.changes] and alone.changes[0] == Change(
        "email", MISSING, USER["email"]
    )
    assert update_diff("user.created", {"object": after}) is None
    assert update_diff("user.updated", {"no": "object"}) is None


def test_identity_and_where_the_earlier_state_is():
    q = earlier_query("user.updated", {"object": USER})
    assert q is not None and q.types == {"user.created", "user.updated"} and q.text == "auth0|abc"
    con = {"object": {"organization": {"id": "org_1"}, "connection": {"id": "con_9"}, "show_as_button": True}}
    q = earlier_query("organization.connection.updated", con)
    assert q is not None and q.types == {"organization.connection.added", "organization.connection.updated"}
    assert q.key == ("org_1", "con_9") == identity("organization.connection.added", con)
    assert earlier_query("group.updated", {"object": {"name": "x"}}) is None  # no id: nothing to look for
    assert earlier_query("user.deleted", {"object": USER}) is None


def test_values_are_shown_short():
    assert short_value(MISSING) == "—" and short_value(None) == "null" and short_value(True) == "true"
    assert short_value("x" * 100).endswith("…") and len(short_value("x" * 100)) == 60
    assert diff_objects({"a": {"b": 1}}, {"a": 2}) == [Change("a", {"b": 1}, 2)]
