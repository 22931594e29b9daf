"""`bundle`: one deterministic JSON document with everything compiled, and a content hash.

Paths and decisions only (resolved chains are paths, never contents). The hash is sha256 over
the canonical JSON of every other field, so same inputs give same bytes and the same hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..models import CompiledBundle
from ..settings import codex_version
from .acp_json import render_acp_json
from .overrides import override_lines

PROFILEC_VERSION = "0.1.0"


def bundle_document(bundle: CompiledBundle) -> dict[str, Any]:
    """The bundle as a JSON-ready dict, hash included."""
    body: dict[str, Any] = {
        "schema_version": 1,
        "profilec_version": PROFILEC_VERSION,
        "codex_version": codex_version(),
        "compiled": bundle.model_dump(mode="json"),
        "launcher": {
            "config_overrides": override_lines(bundle),
            "acp": json.loads(render_acp_json(bundle)),
        },
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    body["content_hash"] = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return body


def render_bundle(bundle: CompiledBundle) -> str:
    """Sorted, indented, LF-terminated."""
    return json.dumps(bundle_document(bundle), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
