"""Generate the JSON Schemas in `schemas/` from the models (`python -m compiler.schemagen`).

The committed files are the published contract; tests/unit/test_schemas.py fails when a model
changes without its schema being regenerated, and checks both accept and reject the same docs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .check.result import CheckReport
from .e2e.matrix import CompatibilityMatrix
from .emit.launch import LAUNCH_SCHEMA, AdapterCatalog
from .models import CompiledBundle, ModeMap, ModeProfilePolicy, RootsManifest
from .mounts.models import BackendCatalog, MountPlan, PlanLayout

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://profilec.invalid/schemas/"

MODEL_SCHEMAS: dict[str, type[BaseModel]] = {
    "roots-manifest.schema.json": RootsManifest,
    "policy-profile.schema.json": ModeProfilePolicy,
    "mode-map.schema.json": ModeMap,
    "compiled-bundle.schema.json": CompiledBundle,
    "plan-layout.schema.json": PlanLayout,
    "mount-plan.schema.json": MountPlan,
    "backends.schema.json": BackendCatalog,
    "check-report.schema.json": CheckReport,
    "compat-matrix.schema.json": CompatibilityMatrix,
    "adapters-catalog.schema.json": AdapterCatalog,
}

ACP_LAUNCH: dict[str, Any] = {
    "title": "AcpLaunchConfig",
    "description": "CODEX_ACP_PERMISSION_PROFILE_CONFIG: -c lines and ACP mode -> profile id.",
    "type": "object",
    "additionalProperties": False,
    "required": ["configOverrides", "modeProfiles"],
    "properties": {
        "configOverrides": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*=.+$"},
            "minItems": 1,
        },
        "modeProfiles": {
            "type": "object",
            "required": ["read-only", "agent", "agent-full-access"],
            "additionalProperties": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$"},
        },
    },
}

OVERRIDES: dict[str, Any] = {
    "title": "CodexOverrideLines",
    "description": (
        "The `overrides` format: LF-separated `codex -c` values, shown as the array of its lines. "
        "Keys hold no path or :token (those sit inside inline-table values)."
    ),
    "type": "array",
    "minItems": 1,
    "items": {"type": "string", "pattern": "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*=[^\\n]+$"},
}

SESSION_CONFIG: dict[str, Any] = {
    "title": "SessionConfig",
    "description": (
        "Untrusted agent session config (CODEX_CONFIG). Any JSON object is read; keys starting "
        "permissions, default_permissions, sandbox_mode or sandbox_workspace_write are stripped."
    ),
    "type": "object",
}

BUNDLE_DOC: dict[str, Any] = {
    "title": "BundleDocument",
    "description": "`compile --format bundle`: compiled profiles, launcher outputs, content hash.",
    "type": "object",
    "additionalProperties": False,
    "required": ["schema_version", "profilec_version", "codex_version", "compiled", "launcher",
                 "content_hash"],
    "properties": {
        "schema_version": {"const": 1},
        "profilec_version": {"type": "string"},
        "codex_version": {"type": "string"},
        "compiled": {"$ref": "compiled-bundle.schema.json"},
        "launcher": {
            "type": "object",
            "additionalProperties": False,
            "required": ["config_overrides", "acp"],
            "properties": {
                "config_overrides": {"$ref": "overrides.schema.json"},
                "acp": {"$ref": "acp-launch.schema.json"},
            },
        },
        "content_hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    },
}

LAUNCH_REQUEST: dict[str, Any] = {
    "title": "LaunchRequest",
    "description": (
        "One line of `check --launch-requests` (JSON Lines, split on LF only): a JSON-RPC "
        "request a launcher sends to codex app-server. Lines without `method` are responses "
        "(they need `id` and `result` or `error`) and are skipped."
    ),
    "type": "object",
    "anyOf": [
        {
            "required": ["method"],
            "properties": {
                "method": {"type": "string"},
                "params": {"type": ["object", "null"]},
            },
        },
        {"required": ["id", "result"], "not": {"required": ["method"]}},
        {"required": ["id", "error"], "not": {"required": ["method"]}},
    ],
}

STATIC_SCHEMAS = {
    "bundle.schema.json": BUNDLE_DOC,
    "acp-launch.schema.json": ACP_LAUNCH,
    "overrides.schema.json": OVERRIDES,
    "session-config.schema.json": SESSION_CONFIG,
    "launch.schema.json": LAUNCH_SCHEMA,
    "launch-request.schema.json": LAUNCH_REQUEST,
}


def build(name: str) -> dict[str, Any]:
    """The schema document for one file name in schemas/."""
    if name in MODEL_SCHEMAS:
        body = MODEL_SCHEMAS[name].model_json_schema(mode="validation")
    else:
        body = dict(STATIC_SCHEMAS[name])
    return {"$schema": DRAFT, "$id": BASE_ID + name, **body}


def render(name: str) -> str:
    """Deterministic text of one schema file."""
    return json.dumps(build(name), indent=2, sort_keys=True) + "\n"


def all_names() -> list[str]:
    """Every schema file this module owns."""
    return sorted([*MODEL_SCHEMAS, *STATIC_SCHEMAS])


def main() -> int:
    """Write every schema into schemas/ (next to the package)."""
    out = Path(__file__).resolve().parent.parent / "schemas"
    out.mkdir(exist_ok=True)
    for name in all_names():
        (out / name).write_text(render(name), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
