""" "Connect to a team hub" in the real app against a server that offers no TLS (a NATS impostor on 127.0.0.1 that
records every byte it gets), and with a CA file that holds no certificate: Check says so under the field that
can fix it, and the impostor never receives the password."""

from __future__ import annotations

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, until
from helpers.nats_impostor import running_impostor
from tenant_events.auth.secret_store import MemorySecretStore

pytestmark = [pytest.mark.gui, pytest.mark.hub, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
PASSWORD = "never-for-an-impostor"


async def press_check(dialog) -> None:
    dialog.check_button.click()
    await until(lambda: not dialog.busy, 20, "the hub check to finish")


def test_check_says_when_a_hub_offers_no_tls_and_sends_it_nothing(qloop, ui_paths, tmp_path):
    (tmp_path / "not-a-cert.pem").write_text("not a certificate\n")

    async def scenario() -> None:
        with running_impostor() as fake:
            async with running_app(ui_paths, secret_store=MemorySecretStore()) as app:
                dialog = app.open_hub_connect()
                dialog.urls.setText(f"tls://127.0.0.1:{fake.port}")
                dialog.hub_tenant.setText("acme")
                dialog.auth.setCurrentIndex(dialog.auth.findData("password"))
                dialog.user.setText("viewer")
                dialog.secret.setText(PASSWORD)
                await press_check(dialog)
                said = dialog.error_text("urls")
                assert f"tls://127.0.0.1:{fake.port} offers no TLS, so nothing was sent to it" in said, said
                assert dialog.found.text() == ""
                dialog.add_button.click()  # Add checks again: nothing is saved, nothing is sent
                await until(lambda: not dialog.busy, 20, "the add to finish")
                assert "acme" not in app.sessions

                dialog.ca_file.setText(str(tmp_path / "not-a-cert.pem"))
                await press_check(dialog)
                assert "holds no PEM certificate" in dialog.error_text("ca_file"), dialog.error_text(
                    "ca_file"
                )
                dialog.reject()
            assert fake.connections >= 1 and fake.received == b"", bytes(fake.received[:200])

    run_async(qloop, scenario())
