"""Captions of a form shown whole.

QLabel is as wide as its text's advances, but in some fonts the last glyph's ink runs past its advance (the "b"
of "Tenant on the hub" in DejaVu Sans at 9 pt, by a pixel), and the label cut it off. A form's captions get a
little room on their right for it.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtWidgets import QFormLayout, QLabel

ROOM_PX: Final = 2


def whole_captions(form: QFormLayout) -> QFormLayout:
    """`form`, each of its captions (made before this call) with room on its right for the last glyph's ink."""
    for row in range(form.rowCount()):
        item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        label = item.widget() if item is not None else None
        if isinstance(label, QLabel):
            label.setContentsMargins(0, 0, ROOM_PX, 0)
    return form
