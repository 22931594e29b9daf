"""Renderers: each formats a CompiledBundle and decides nothing (looked up in profilec.formats)."""

from __future__ import annotations
