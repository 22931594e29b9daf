"""`catalog`: the reviewed adapter catalog `profiles/adapters.toml`, read and validated.

The catalog (schemas/adapters-catalog.schema.json) records, per ACP adapter build (npm package,
version, Codex core), the launch method that the end-to-end matrix (`profilec e2e`) observed
keeping the credential deny for new, loaded and resumed sessions and every
`permission-profile:*` mode, plus the built-in modes that lose it.
tests/integration/test_e2e_acp.py re-runs the matrix and fails when the catalog disagrees. A
run reads it once through its edge (`adapters_of`) and hands it to whatever needs it: the launch
document (emit/launch.py), the e2e matrix check, the audit's launcher section.
"""

from __future__ import annotations

import os

from pydantic import ValidationError

from ..errors import PolicyError
from ..inputs import Inputs
from ..models.launch import AdapterCatalog
from ..readers import parse_toml, validation_message

CATALOG_FILE = "adapters.toml"


def load_catalog(profiles_dir: str | None = None) -> AdapterCatalog:
    """`<profiles_dir>/adapters.toml` (default: the shipped one), outside a run: through an
    edge of its own."""
    return adapters_of(Inputs.unrooted(profiles_dir))


def adapters_of(inp: Inputs) -> AdapterCatalog:
    """The adapter catalog of the run's policy directory, read through its edge (reviewed
    policy: no trust check, a PolicyError when unreadable) and validated: a run reads it once
    and hands it to the renderer (`render_launch_with`)."""
    path = os.path.join(inp.profiles_dir, CATALOG_FILE)
    return catalog_from_bytes(inp.policy_file(path).data, where=path)


def catalog_from_bytes(raw: bytes, *, where: str) -> AdapterCatalog:
    """Parse and validate the adapter catalog's bytes (read from `where`)."""
    path = where
    data = parse_toml(raw, where=path)
    try:
        catalog = AdapterCatalog.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(f"schema violation: {validation_message(exc)}", where=path) from None
    for entry in catalog.adapters:
        both = set(entry.approval_modes_held) & set(entry.approval_modes_lost)
        if both:
            raise PolicyError(
                f"{entry.package} {entry.version}: mode {sorted(both)[0]} both held and lost",
                where=path,
            )
        held = entry.method
        if held is not None and held not in entry.holding_methods:
            raise PolicyError(
                f"{entry.package} {entry.version}: launch_method {held} is not in holding_methods",
                where=path,
            )
        if held is None and entry.holding_methods:
            raise PolicyError(
                f"{entry.package} {entry.version}: methods hold but no launch_method is chosen",
                where=path,
            )
    return catalog
