"""Sigma in and out: Sigma detection and correlation rules (read with pySigma) become alert rules, and alert
rules are written as Sigma files that read back to the same rules. See reader.py, importer.py and writer.py."""

from tenant_events.alerts.sigma_rules.importer import Imported, merge_imported
from tenant_events.alerts.sigma_rules.reader import SigmaEntry, SigmaRefused, read_sigma
from tenant_events.alerts.sigma_rules.writer import NotExpressible, rule_documents, rule_yaml

__all__ = [
    "Imported",
    "NotExpressible",
    "SigmaEntry",
    "SigmaRefused",
    "merge_imported",
    "read_sigma",
    "rule_documents",
    "rule_yaml",
]
