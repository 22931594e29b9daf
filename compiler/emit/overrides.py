"""`overrides`: one `codex -c` value per line, LF-separated.

Codex splits a `-c` key on `.` with no quoting, so a key never carries a path or `:token`:
each profile is one `permissions.<id>={...}` line whose inline-table value holds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .extras import extra_tables, extra_top
from .tomltext import inline, string, value

if TYPE_CHECKING:
    from ..models.compiled import CompiledBundle


def override_lines(bundle: CompiledBundle) -> list[str]:
    """The `-c` values in the order a launcher passes them (selection first)."""
    lines = ["default_permissions=" + string(bundle.default_profile_id)]
    for profile in bundle.profiles:
        table = inline(profile.codex_table())
        lines.append(f"permissions.{profile.profile_id}={table}")
    lines += [f"{k}={value(v)}" for k, v in extra_top(bundle).items()]
    for name, table_value in extra_tables(bundle).items():
        if name == "projects":  # keys are paths: the whole table goes in one value
            lines.append(f"projects={inline(table_value)}")
            continue
        # features.*, the parent tables, mcp_servers.<name>: bare keys (the models pin them)
        lines += [f"{name}.{k}={value(v)}" for k, v in table_value.items()]
    return lines


def render_overrides(bundle: CompiledBundle) -> str:
    """All `-c` values, one per line, ending in LF."""
    return "".join(line + "\n" for line in override_lines(bundle))
