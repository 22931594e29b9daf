"""Generate the JSON Schemas in `schemas/` from the models (`python -m profilec.schemagen`).

Every published format has a model in compiler/models/ (one module per format family, listed in
its docstring), except launch-request (Codex's own JSON-RPC, see LAUNCH_REQUEST). The committed
files are the published contract; tests/unit/test_schemas.py fails when a model changes without
its schema being regenerated, checks schema and model accept and reject the same documents, and
validates real emitted output (and hand-read inputs) against both.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel, RootModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .models.acp import AcpLaunchConfig
from .models.audit import DiffReport, Explanation
from .models.bundle import BundleDocument, BundleProvenance, LockFile
from .models.canary import CanaryReportDocument
from .models.check import CheckReport, RuleCatalogue
from .models.compat import CompatibilityMatrix
from .models.compiled import CompiledBundle
from .models.launch import AdapterCatalog, LaunchDocument
from .models.mcp import VouchedMcpServers
from .models.mounts import BackendCatalog, MountPlan, PlanLayout
from .models.overrides import CodexOverrideLines
from .models.policy import ModeMap, ModeProfilePolicy, ParentPolicy, TrustedBasePolicy
from .models.profilec_config import ProfilecConfig
from .models.requirements import ManagedRequirements
from .models.roots import RootsManifest
from .models.run import ProviderConfig
from .models.session import SessionAllowList, SessionConfig
from .models.watch import WatchEvent
from .resources import PUBLISHED_REF, SCHEMA_SUFFIX, schema_id, schemas_dir

DRAFT = "https://json-schema.org/draft/2020-12/schema"


MODEL_SCHEMAS: dict[str, type[BaseModel] | type[RootModel[Any]]] = {
    "roots-manifest.schema.json": RootsManifest,
    "policy-profile.schema.json": ModeProfilePolicy,
    "mode-map.schema.json": ModeMap,
    "compiled-bundle.schema.json": CompiledBundle,
    "plan-layout.schema.json": PlanLayout,
    "mount-plan.schema.json": MountPlan,
    "backends.schema.json": BackendCatalog,
    "check-report.schema.json": CheckReport,
    "bundle-provenance.schema.json": BundleProvenance,
    "lock.schema.json": LockFile,
    "explain.schema.json": Explanation,
    "diff.schema.json": DiffReport,
    "compat-matrix.schema.json": CompatibilityMatrix,
    "adapters-catalog.schema.json": AdapterCatalog,
    "trusted-base.schema.json": TrustedBasePolicy,
    "parent-policy.schema.json": ParentPolicy,
    "session-allowlist.schema.json": SessionAllowList,
    "vouched-mcp.schema.json": VouchedMcpServers,
    "acp-launch.schema.json": AcpLaunchConfig,
    "overrides.schema.json": CodexOverrideLines,
    "session-config.schema.json": SessionConfig,
    "watch-event.schema.json": WatchEvent,
    "provider-config.schema.json": ProviderConfig,
    "canary-report.schema.json": CanaryReportDocument,
    "bundle.schema.json": BundleDocument,
    "launch.schema.json": LaunchDocument,
    "profilec-config.schema.json": ProfilecConfig,
    "rules.schema.json": RuleCatalogue,
    "requirements.schema.json": ManagedRequirements,
}

#: The one schema not generated from a model. A launch-request line is Codex's own protocol
#: (JSON-RPC 2.0 to `codex app-server`), not a profilec format: profilec reads only `method` and
#: `params` of a request and skips responses, and every other member is Codex's to define. The
#: schema states exactly that: open objects told apart by whether `method` is present. A model
#: would be all `extra="allow"` and could not state "a response has no `method`" (`not
#: required`), so it would describe less than this does. The reader is
#: compiler/check/lints/launcher.py.
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
    "launch-request.schema.json": LAUNCH_REQUEST,
}


class _Generator(GenerateJsonSchema):
    """Pydantic's generator, but a map with constrained keys is closed.

    Pydantic states `dict[Pattern, V]` as `patternProperties`, which lets any other key through
    unchecked; the models refuse such keys, so the schema says `propertyNames` instead."""

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        out = super().dict_schema(schema)
        patterns = out.pop("patternProperties", None)
        if patterns:
            ((pattern, values),) = patterns.items()
            out["propertyNames"] = {**out.get("propertyNames", {}), "pattern": pattern}
            out["additionalProperties"] = values
        return out


def build(name: str) -> dict[str, Any]:
    """The schema document for one file name in schemas/."""
    if name in MODEL_SCHEMAS:
        body = MODEL_SCHEMAS[name].model_json_schema(mode="validation", schema_generator=_Generator)
    else:
        body = dict(STATIC_SCHEMAS[name])
    return {"$schema": DRAFT, "$id": schema_id(name), **_absolute_refs(body)}


def _absolute_refs(node: Any) -> Any:
    """Point every `$ref` that names another schema file at that schema's `$id`.

    The source tables spell a cross-file reference as the file name; the shipped documents carry
    the id (`urn:profilec:schema:<name>`), which resolves through the shipped registry only
    (relative references do not resolve against a URN)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == PUBLISHED_REF:
                out["$ref"] = schema_id(value)
            elif key == "$ref" and isinstance(value, str) and value.endswith(SCHEMA_SUFFIX):
                out[key] = schema_id(value)
            else:
                out[key] = _absolute_refs(value)
        return out
    if isinstance(node, list):
        return [_absolute_refs(item) for item in node]
    return node


def render(name: str) -> str:
    """Deterministic text of one schema file."""
    return json.dumps(build(name), indent=2, sort_keys=True) + "\n"


def all_names() -> list[str]:
    """Every schema file this module owns."""
    return sorted([*MODEL_SCHEMAS, *STATIC_SCHEMAS])


def main() -> int:
    """Write every schema into the shipped schemas/ (the source tree's folder in a checkout)."""
    out = schemas_dir()
    out.mkdir(exist_ok=True)
    for name in all_names():
        (out / name).write_text(render(name), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
