"""`profilec check`: coverage proof (coverage), lints (lint), config stack (configstack), result."""

from __future__ import annotations

from .checker import CheckInputs, from_bundle, run_check
from .configstack import ConfigStack, Layer, parse_override_lines
from .lint import RULE_BY_ID, RULES
from .result import CheckFinding, CheckReport, Rule

__all__ = [
    "RULES",
    "RULE_BY_ID",
    "CheckFinding",
    "CheckInputs",
    "CheckReport",
    "ConfigStack",
    "Layer",
    "Rule",
    "from_bundle",
    "parse_override_lines",
    "run_check",
]
