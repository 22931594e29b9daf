"""`bundle`: one deterministic JSON document with everything compiled, and a content hash.

Paths and decisions only (resolved chains are paths, never contents). It holds every compiled
profile (`compiled`, which carries the resolved root chains), the launcher outputs, the mount
plan when a plan layout was given, the provenance of every entry (file, line, root, hop), the
profilec version and the Codex version range whose rules were verified. The hash is sha256 over
the canonical JSON of every other field, so same inputs give same bytes and the same hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..bundle.provenance import bundle_provenance
from ..emit.acp_json import render_acp_json
from ..emit.codex_toml import render_toml
from ..emit.overrides import override_lines
from ..models.bundle import BundleDocument
from ..models.compiled import CompiledBundle
from ..settings import codex_version

PROFILEC_VERSION = "0.1.0"
#: The Codex releases whose access rules compiler/codex/ reproduces (oracle-tested).
CODEX_VERSION_RANGE = ">=0.171.0,<0.172.0"


def content_hash(body: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of `body` without its `content_hash` member."""
    rest = {k: v for k, v in body.items() if k != "content_hash"}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def bundle_document(
    bundle: CompiledBundle,
    *,
    provenance: dict[str, Any] | None = None,
    mount_plan: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The bundle as a JSON-ready dict, hash included.

    `provenance` defaults to what the bundle alone knows (no file lines); profilec.bundle.load
    adds the policy and manifest lines and the input hashes.
    """
    if provenance is None:
        provenance = bundle_provenance(bundle, None).model_dump(mode="json")
    body: dict[str, Any] = {
        "schema_version": 1,
        "profilec_version": PROFILEC_VERSION,
        "codex_version": codex_version(),
        "codex_version_range": CODEX_VERSION_RANGE,
        "compiled": bundle.model_dump(mode="json"),
        "launcher": {
            "config_overrides": override_lines(bundle),
            "acp": json.loads(render_acp_json(bundle)),
            # Also what `--format codex-home` writes as CODEX_HOME/config.toml.
            "config_toml": render_toml(bundle),
        },
        "mount_plan": mount_plan,
        "provenance": provenance,
    }
    body["content_hash"] = content_hash(body)
    return BundleDocument.model_validate(body).model_dump(mode="json")


def dumps(doc: dict[str, Any]) -> str:
    """Sorted, indented, LF-terminated JSON (the bytes every bundle and lock file uses)."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_bundle(bundle: CompiledBundle) -> str:
    """Sorted, indented, LF-terminated."""
    return dumps(bundle_document(bundle))
