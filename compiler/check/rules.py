"""The lint rule registry: every rule's metadata, declared beside the code that emits it.

Each module that reports a rule declares it with `rule(...)` next to the function that fires it
(the ruff habit): id, name, severity, message, why, fix, the Codex version range, and the doc
anchor. The id is a constant of `profilec.rule_ids` (its one home), never a retyped "PCnnn".
`all_rules()` imports every such module (the machinery named below and every family module of
compiler/check/lints/, found by walking the package) and returns the registry, so the checker's
report, the SARIF rule table and docs/check.md's catalogue (checked by
tests/unit/test_rule_registry.py, printed by `rules.main()`) come from one place and cannot drift
from the rules.

`profilec rules` lists the same registry (`catalogue_text`, `catalogue_document`: one line or one
JSON object per rule, `schemas/rules.schema.json`; the model is compiler/models/check.py
RuleCatalogue).

Stable import path for other modules: `profilec.check.rules` (`rule`, `all_rules`,
`rule_by_id`, `DOCS_PAGE`, `catalogue_markdown`, `catalogue_text`, `catalogue_document`).
"""

from __future__ import annotations

import importlib
import sys

from ..codex.vocabulary import MEASURED_RANGE
from ..models.check import Rule, RuleCatalogue
from ..settings import codex_version

#: The page that documents every rule; a rule's `doc_anchor` is `DOCS_PAGE#pcNNN`.
DOCS_PAGE = "docs/check.md"
#: The check machinery that fires rules itself (the profile resolution, the coverage proof,
#: triage); every family module of profilec.check.lints declares the rest (`lints.families()`).
MACHINERY_RULE_MODULES = (
    "profilec.check.resolution",
    "profilec.check.coverage",
    "profilec.check.triage",
)
#: The lint package: each of its modules is a family that declares its rules.
LINTS_PACKAGE = "profilec.check.lints"

_REGISTRY: dict[str, Rule] = {}


def rule(
    id: str,
    name: str,
    severity: str,
    message: str,
    why: str,
    fix: str,
    versions: str | None = None,
    *,
    waivable: bool = True,
) -> str:
    """Declare a rule (once, beside its code); returns its id for the module to use.

    `waivable=False`: the finding says a protected root is reachable, a secret readable or the
    trusted side writable or steerable in some mode (or a mode's coverage was never proven);
    nothing a pull request, a model or a typo controls may accept it (compiler/check/waivers.py
    refuses such a waiver)."""
    if id in _REGISTRY:
        raise ValueError(f"rule {id} declared twice")  # a profilec bug, caught by the tests
    _REGISTRY[id] = Rule.model_validate(
        {
            "id": id,
            "name": name,
            "severity": severity,
            "message": message,
            "why": why,
            "fix": fix,
            "codex_versions": versions,
            "doc_anchor": f"{DOCS_PAGE}#{id.lower()}",
            "waivable": waivable,
        }
    )
    return id


def all_rules() -> tuple[Rule, ...]:
    """Every declared rule, sorted by id."""
    for module in MACHINERY_RULE_MODULES:
        importlib.import_module(module)
    importlib.import_module(LINTS_PACKAGE).families()
    return tuple(_REGISTRY[k] for k in sorted(_REGISTRY))


def rule_by_id(rule_id: str) -> Rule:
    """The declared rule with this id (KeyError for an unknown one)."""
    if rule_id not in _REGISTRY:
        all_rules()
    return _REGISTRY[rule_id]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def catalogue_markdown(rules: tuple[Rule, ...] | None = None) -> str:
    """docs/check.md's lint catalogue table (one row per rule), generated from the registry."""
    lines = [
        "| id | name | severity | waivable | Codex versions | message | why | fix |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rules if rules is not None else all_rules():
        versions = r.codex_versions or "all"
        if versions == MEASURED_RANGE:
            versions += " (measured)"
        lines.append(
            f'| <a id="{r.id.lower()}"></a>`{r.id}` | {r.name} | {r.severity} | '
            f"{'yes' if r.waivable else '**no**'} | {_cell(versions)} | {_cell(r.message)} | "
            f"{_cell(r.why)} | {_cell(r.fix)} |"
        )
    return "\n".join(lines) + "\n"


def catalogue_document(rules: tuple[Rule, ...] | None = None) -> RuleCatalogue:
    """The registry as the `profilec rules --format json` document."""
    return RuleCatalogue(
        codex_version=codex_version(), rules=rules if rules is not None else all_rules()
    )


def catalogue_text(rules: tuple[Rule, ...] | None = None) -> str:
    """The registry as `profilec rules` prints it: one line per rule, id, severity, whether a
    waiver may accept it, and its message (the rule's one-line summary)."""
    lines = [
        f"{r.id}  {r.severity:<7}  {'waivable' if r.waivable else 'not-waivable':<12}  "
        + r.message.replace("\n", " ")
        for r in (rules if rules is not None else all_rules())
    ]
    return "".join(line + "\n" for line in lines)


def main() -> None:
    """Print the catalogue table (`python3 -c 'from profilec.check.rules import main; main()'`)."""
    sys.stdout.write(catalogue_markdown())
