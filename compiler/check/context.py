"""The lint context every `@lint` function takes, and the `@lint` registry.

A lint is a function `(ctx: LintContext) -> None` in a family module of compiler/check/lints/,
decorated with `@lint` and preceded by the `rule(...)` declarations of the ids it fires
(compiler/check/rules.py). `LintContext` holds the check's inputs and what the checker derived
from them (the merged stack, each mode's resolution, the Codex version); `ctx.add` fills a
finding's severity from its rule and its location from the layer. compiler/check/lints/
__init__.py runs every registered lint, family by family.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..models.check import CheckFinding
from .rules import rule_by_id

if TYPE_CHECKING:
    from .check_inputs import CheckInputs
    from .configstack import Layer
    from .resolution import ModeEval

#: A lint: reads the context, adds findings to it.
Lint = Callable[["LintContext"], None]

#: Every registered lint, by the module that defines it, in definition order.
_LINTS: dict[str, list[Lint]] = {}


def lint(fn: Lint) -> Lint:
    """Register `fn` as a lint of its family module (run by compiler/check/lints/run_lints)."""
    _LINTS.setdefault(fn.__module__, []).append(fn)
    return fn


def lints_of(module: str) -> tuple[Lint, ...]:
    """The lints `module` registered, in definition order."""
    return tuple(_LINTS.get(module, ()))


def perms_of(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `permissions` table of a config (empty when absent or not a table)."""
    p = data.get("permissions")
    return p if isinstance(p, Mapping) else {}


class LintContext:
    """The lint context and its findings."""

    def __init__(
        self,
        inp: CheckInputs,
        merged: Mapping[str, Any],
        modes: Sequence[ModeEval],
        codex_version: str,
    ) -> None:
        self.inp = inp
        self.merged = merged
        self.modes = modes
        self.codex_version = codex_version
        self.items: list[CheckFinding] = []
        self._lstat: dict[str, os.stat_result | int] = {}

    def lstat(self, path: str) -> os.stat_result | int:
        """Cached lstat: the stat result, or the errno when it failed. Never opens."""
        hit = self._lstat.get(path)
        if hit is None:
            try:
                hit = os.lstat(path)
            except OSError as exc:
                hit = exc.errno or errno.ENOENT
            self._lstat[path] = hit
        return hit

    def add(
        self,
        rule: str,
        message: str,
        *,
        layer: Layer | None = None,
        needles: tuple[str, ...] = (),
        file: str | None = None,
        **kw: Any,
    ) -> None:
        line = layer.line_of(*needles) if layer is not None and needles else None
        self.items.append(
            CheckFinding(
                rule=rule,
                severity=rule_by_id(rule).severity,
                message=message,
                file=file or (layer.file if layer else None),
                line=line,
                **kw,
            )
        )
