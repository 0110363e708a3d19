"""The inbox's detail label is rich text: what an alert quotes (an imported rule's name, event fields) is
escaped, so markup in a tenant's data reads as written and never becomes a link or an image."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from tenant_events.ui.alerts.inbox_window import why_html

pytestmark = pytest.mark.gui


def test_markup_in_a_rule_name_or_event_field_is_shown_as_written(qtbot):
    label = QLabel()
    qtbot.addWidget(label)
    label.setText(
        why_html(
            "<i>Rule</i>", "critical", "acme", 'organization <a href="https://x">Pay here</a> & <img src=x>'
        )
    )
    shown = label.text()
    assert "<a href" not in shown and "<img" not in shown and "<i>" not in shown
    assert "&lt;a href=" in shown and "&amp; &lt;img src=x&gt;" in shown
    assert shown.startswith("<b>&lt;i&gt;Rule&lt;/i&gt;</b> · critical · acme<br>")
