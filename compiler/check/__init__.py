"""`profilec check`: coverage proof (coverage), lints (lint), config stack (configstack), result."""

from __future__ import annotations

from .checker import CheckInputs, from_bundle, run_check
from .configstack import ConfigStack, Layer, parse_override_lines
from .result import CheckFinding, CheckReport, Rule
from .rules import all_rules, rule_by_id

RULES = all_rules()

__all__ = [
    "RULES",
    "CheckFinding",
    "CheckInputs",
    "CheckReport",
    "ConfigStack",
    "Layer",
    "Rule",
    "from_bundle",
    "parse_override_lines",
    "rule_by_id",
    "run_check",
]
