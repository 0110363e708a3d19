"""An alert delivered as e-mail through Apprise to a real local SMTP server (aiosmtpd)."""

from __future__ import annotations

import email
from email.header import decode_header, make_header
from email.message import Message

from aiosmtpd.controller import Controller

from helpers.deliveries import alert_write, free_port, run_worker, store_alerts, target


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.messages.append(email.message_from_bytes(envelope.content))  # type: ignore[attr-defined]
        return "250 OK"


def test_an_alert_arrives_as_an_email_that_reads_like_the_window(tmp_path):
    inbox = _Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        db = tmp_path / "acme.sqlite3"
        [alert_id] = store_alerts(db, [alert_write()])
        url = f"mailto://127.0.0.1:{controller.port}?from=alerts@example.com&to=oncall@example.com"
        run_worker(db, {"mail": target("mail", url)}, lambda: len(inbox.messages) == 1)
    finally:
        controller.stop()
    [msg] = inbox.messages
    assert msg["To"].endswith("oncall@example.com>") or msg["To"] == "oncall@example.com"
    assert str(make_header(decode_header(msg["Subject"]))) == "[critical] Mass deletion — acme"
    parts = [p for p in msg.walk() if p.get_content_type() == "text/plain"] or [msg]
    text = parts[0].get_payload(decode=True).decode()
    assert "25 users deleted in 40 s" in text
    assert f"tenant-events://alert/acme/{alert_id}" in text
