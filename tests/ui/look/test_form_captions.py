"""Every caption of the app's forms is drawn whole: the ink of its text fits the label (a glyph whose ink runs
past its advance, the "b" of "Tenant on the hub" in DejaVu Sans, was cut off by a pixel)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from tenant_events.settings.hubs import HubProfile
from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog
from tenant_events.ui.dialogs.connect_tenant import ConnectTenantDialog
from tenant_events.ui.dialogs.team_archive_dialog import TeamArchiveDialog
from tenant_events.ui.dialogs.time_range_dialog import TimeRangeDialog

pytestmark = pytest.mark.gui

HUB = HubProfile(name="acme", hub_urls=["nats://127.0.0.1:4222"], hub_tenant="acme")


def _ink_right(label: QLabel) -> int:
    """The rightmost column the label's text inks, drawn as QLabel draws it but with room to spare: the font's
    metrics say the text fits where its drawing does not."""
    room = label.contentsRect().adjusted(0, 0, 40, 0)
    image = QImage(room.right() + 1, label.height(), QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.setFont(label.font())
    painter.setPen(Qt.GlobalColor.black)
    flags = label.alignment() | Qt.TextFlag.TextShowMnemonic
    painter.drawText(room, int(flags.value), label.text())
    painter.end()
    white = QColor(Qt.GlobalColor.white).rgb()
    inked = [x for x in range(image.width()) for y in range(image.height()) if image.pixel(x, y) != white]
    return max(inked, default=-1)


def _cut(widget: QWidget) -> list[str]:
    """The captions whose text's ink runs past the label's right edge."""
    out = []
    for form in widget.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            label = item.widget() if item is not None else None
            if isinstance(label, QLabel) and label.isVisible() and label.text():
                right = _ink_right(label)
                if right >= label.width():
                    out.append(f"{label.text()!r}: inked to x={right}, label {label.width()} px wide")
    return out


@pytest.mark.parametrize(
    "make",
    [ConnectHubDialog, ConnectTenantDialog, lambda: TeamArchiveDialog(HUB), TimeRangeDialog],
    ids=["hub", "tenant", "team-archive", "time-range"],
)
def test_no_caption_is_cut(qtbot, make: Callable[[], QWidget]) -> None:
    dialog = make()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert _cut(dialog) == []
