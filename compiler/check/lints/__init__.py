"""Every lint of `profilec check`, one module per family.

A family module declares its rules with `rule(...)` (compiler/check/rules.py) and its lints
with `@lint` (compiler/check/context.py); a module that reads its own inputs (launcher files,
the canary report, the ownership probe, the managed requirements) also exports the function
the checker calls with them. Nothing lists the families: `families()` finds every module of
this package, the rule registry and `run_lints` both derive from it, so a new lint is a
function (and its `rule(...)`) dropped into the right family module.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..context import LintContext, lints_of


def families() -> tuple[str, ...]:
    """The dotted name of every family module, sorted, each imported (its rules declared)."""
    names = tuple(
        f"{__name__}.{m.name}" for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
    )
    for name in names:
        importlib.import_module(name)
    return names


def run_lints(ctx: LintContext) -> None:
    """Every registered lint over `ctx`, family by family, each in definition order."""
    for family in families():
        for fn in lints_of(family):
            fn(ctx)
