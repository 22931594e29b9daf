"""`profilec compile` imports only what compiling needs.

A fresh interpreter runs `main(["compile", ...])` and reports `sys.modules`. There is one CLI
(typer) and one model family (pydantic), so both load; what must not load is everything else:
docker, jsonschema, tomlkit, rich (help only), the report renderers, the checker, the canaries,
the mount planner, the e2e drivers, schema generation, the dev harness (`harness/`: the Codex
oracle and the differential tester, which never ship) and no other command's module. Without
`--session-config` the session sanitizer (compiler/session.py) does not load, nor without
`--vouched-mcp` the MCP parser (compiler/mcp.py); with them, each does. A plain compile hashes
nothing (no hashlib) and creates no RootModel, and the only dataclasses it creates are the ones
listed in COMPILE_DATACLASSES (each costs its class's generated methods in every process). The
negative controls copy the package, add one top-level import (or a dataclass) back to a
compile-path module, and show the same check failing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profilec.models.base import Frozen
from tests.helpers import make_layout

REPO = Path(__file__).resolve().parents[2]

#: Never on any compile path.
ALWAYS_FORBIDDEN = (
    "docker",
    "jsonschema",
    "tomlkit",
    "rich",
    "profilec.schemagen",
    "harness",
    "profilec.cli.check_cmd",
    "profilec.cli.canary_cmd",
    "profilec.cli.audit_cmd",
    "profilec.cli.plan_cmd",
    "profilec.cli.e2e_cmd",
    "profilec.cli.watch_cmd",
    "profilec.cli.rules_cmd",
    # The runs of the other commands (compiler/commands/): compile loads only its own.
    "profilec.commands.check",
    "profilec.commands.canary",
    "profilec.commands.audit",
    "profilec.commands.lock",
    "profilec.commands.diff",
    "profilec.commands.explain",
    "profilec.commands.plan",
    "profilec.commands.e2e",
    "profilec.commands.watch",
    "profilec.commands.rules",
    "profilec.report",
    "profilec.canary",
    "profilec.check",
    "profilec.mounts",
    "profilec.audit.report",
    "profilec.audit.report_md",
    "profilec.audit.report_html",
    "profilec.audit.launchers",
    # The e2e drivers and schema generation. `compile --format launch` renders what the e2e
    # harness runs, never the other way round.
    "profilec.e2e",
    "profilec.schemagen",
)
#: Not for the plain formats either (only `--format bundle` writes the provenance document and
#: hashes its inputs). No RootModel either: the overrides format's model (schema only) lives in
#: compiler/schemagen.py, because a RootModel class builds its validator as it is defined.
PLAIN_FORBIDDEN = (
    *ALWAYS_FORBIDDEN,
    "profilec.audit",
    "profilec.bundle",
    "hashlib",
    "pydantic.root_model",
)
#: Loaded only for the input that needs them: the session-config sanitizer (its allow-list
#: tables and dataclasses) with `--session-config`, the vouched-MCP parser with `--vouched-mcp`.
#: A compile without them marks its workspace roots untrusted through compiler/projects.py.
INPUT_ONLY = ("profilec.session", "profilec.mcp")

PROBE = """
import json, sys
from profilec.cli import main
rc = main(sys.argv[1:])
import profilec
print(json.dumps({"rc": rc, "modules": sorted(sys.modules), "from": profilec.__file__}))
"""


def loaded(root: Path, args: list[str]) -> tuple[int, list[str]]:
    """Exit code and sys.modules of `main(args)` in a fresh interpreter importing from `root`."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=60,
        check=False,
    )
    doc = json.loads(proc.stdout.strip().split("\n")[-1])
    assert Path(doc["from"]).resolve().is_relative_to(root.resolve())  # the copy under test
    return int(doc["rc"]), list(doc["modules"])


def offenders(modules: list[str], forbidden: tuple[str, ...]) -> list[str]:
    """The loaded modules that are, or live under, a forbidden name."""
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in forbidden)]


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_layout(tmp_path_factory.mktemp("imports") / "l").manifest


@pytest.mark.parametrize("fmt", ["toml", "overrides", "acp-json", "session-config"])
def test_compile_loads_only_the_compile_path(manifest: Path, fmt: str) -> None:
    rc, modules = loaded(REPO, ["compile", "--roots", str(manifest), "--format", fmt])
    assert rc == 0
    assert offenders(modules, (*PLAIN_FORBIDDEN, *INPUT_ONLY)) == []
    assert {"typer", "pydantic", "profilec.models", "profilec.cli.compile_cmd"} <= set(modules)
    assert "profilec.projects" in modules


def test_session_and_mcp_inputs_load_their_parsers(manifest: Path, tmp_path: Path) -> None:
    """The lazy boundary is an import moved, not a step skipped: given the inputs, both load."""
    session = tmp_path / "session.json"
    session.write_text(json.dumps({"model": "gpt-5"}), encoding="utf-8")
    mcp = tmp_path / "mcp.toml"
    mcp.write_text(
        (
            'schema_version = 2\ncodex = "/usr/bin/codex"\n'
            '[servers.bridge]\ncommand = "/usr/bin/true"\ncwd = "/srv/agentd/mcp"\n'
        ),
        encoding="utf-8",
    )
    os.chmod(mcp, 0o600)
    base = ["compile", "--roots", str(manifest), "--format", "overrides"]
    rc, modules = loaded(REPO, [*base, "--session-config", str(session)])
    assert rc == 0
    assert "profilec.session" in modules and "profilec.mcp" not in modules
    rc, modules = loaded(REPO, [*base, "--vouched-mcp", str(mcp)])
    assert rc == 0
    assert "profilec.mcp" in modules and "profilec.session" not in modules


#: The dataclasses a plain compile creates (each generates and compiles six methods as its
#: class is created, in every process): the command request and outcome (one family with the
#: other commands', compiler/commands/), the compile flags' and formats' declarations
#: (compiler/flags.py, compiler/formats.py), the Inputs edge and the resolved profile (it builds its
#: index after init). Immutable records are NamedTuples.
COMPILE_DATACLASSES = {
    "profilec.commands.Outcome",
    "profilec.flags.CompileFlags",
    "profilec.flags.Flag",
    "profilec.formats.Format",
    "profilec.formats.FormatTable",
    "profilec.commands.compile.CompileRequest",
    "profilec.inputs.Inputs",
    "profilec.codex.resolve.EffectiveProfile",
}

#: The models whose pydantic validator a plain compile builds: what it reads (the roots manifest,
#: the policy, the layout from the flags). What it builds itself (`models.base.Built`: resolved
#: roots, compiled profiles, the bundle) is constructed without one (~7 ms a process).
COMPILE_VALIDATORS = {
    "profilec.models.roots.RootsManifest",
    "profilec.models.policy.ModeProfilePolicy",
    "profilec.models.policy.ParentPolicy",
    "profilec.models.policy.TrustedBasePolicy",
    "profilec.models.policy.ModeMap",
    "profilec.models.roots.LaunchLayout",
}

CLASSES_PROBE = """
import dataclasses, json, sys
import pydantic._internal._model_construction as construction
made = []
process = dataclasses._process_class
def counting(cls, *args, **kwargs):
    made.append(f"{cls.__module__}.{cls.__qualname__}")
    return process(cls, *args, **kwargs)
dataclasses._process_class = counting
built = []
complete = construction.complete_model_class
def completing(cls, *args, **kwargs):
    done = complete(cls, *args, **kwargs)
    if done:
        built.append(f"{cls.__module__}.{cls.__qualname__}")
    return done
construction.complete_model_class = completing
from profilec.cli import main
rc = main(sys.argv[1:])
import profilec
print(json.dumps({"rc": rc, "dataclasses": made, "validators": built, "from": profilec.__file__}))
"""


def created_classes(root: Path, args: list[str]) -> tuple[int, list[str], list[str]]:
    """Exit code, the profilec dataclasses `main(args)` creates and the profilec models whose
    validator it builds, in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", CLASSES_PROBE, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root,
        timeout=60,
        check=False,
    )
    doc = json.loads(proc.stdout.strip().split("\n")[-1])
    assert Path(doc["from"]).resolve().is_relative_to(root.resolve())
    ours = [[d for d in doc[k] if d.startswith("profilec.")] for k in ("dataclasses", "validators")]
    return int(doc["rc"]), ours[0], ours[1]


def test_compile_creates_only_the_listed_dataclasses_and_validators(manifest: Path) -> None:
    rc, made, validators = created_classes(
        REPO, ["compile", "--roots", str(manifest), "--format", "overrides"]
    )
    assert rc == 0
    assert "profilec.codex.resolve.EffectiveProfile" in made  # the probe sees profilec's classes
    assert set(made) <= COMPILE_DATACLASSES, sorted(set(made) - COMPILE_DATACLASSES)
    assert set(validators) == COMPILE_VALIDATORS, sorted(set(validators) ^ COMPILE_VALIDATORS)


def test_a_built_model_given_a_validator_again_is_caught(tmp_path: Path, manifest: Path) -> None:
    path = _copy(tmp_path / "copy") / "compiler" / "models" / "compiled.py"
    text = path.read_text()
    assert "class Provenance(Built):" in text and "from .base import " in text
    text = text.replace("from .base import ", "from .base import Frozen, ", 1)
    path.write_text(text.replace("class Provenance(Built):", "class Provenance(Frozen):"))
    rc, _made, validators = created_classes(
        tmp_path / "copy", ["compile", "--roots", str(manifest), "--format", "overrides"]
    )
    assert rc == 0
    assert set(validators) - COMPILE_VALIDATORS == {"profilec.models.compiled.Provenance"}


def _copy(root: Path) -> Path:
    """A copy of the package and its data, importable as `profilec` from `root`."""
    shutil.copytree(REPO / "compiler", root / "compiler", symlinks=True)
    (root / "profilec").symlink_to("compiler")
    for data in ("profiles", "schemas", "canaries", "harness"):
        shutil.copytree(REPO / data, root / data)
    return root


def test_a_dataclass_added_to_the_compile_path_is_caught(tmp_path: Path, manifest: Path) -> None:
    root = _copy(tmp_path / "copy")
    path = root / "compiler" / "codex" / "resolve.py"
    text = path.read_text()
    anchor = "class EvalContext(NamedTuple):"
    assert anchor in text
    path.write_text(text.replace(anchor, "@dataclass(frozen=True, slots=True)\nclass EvalContext:"))
    rc, made, _validators = created_classes(
        root, ["compile", "--roots", str(manifest), "--format", "overrides"]
    )
    assert rc == 0
    assert set(made) - COMPILE_DATACLASSES == {"profilec.codex.resolve.EvalContext"}


def _compile_models() -> list[type[Frozen]]:
    """The model classes every compile loads: the modules compiler/models.py was split into
    (the shared base, the roots manifest and layout, the policy, the compiled bundle)."""
    from profilec.models import base, compiled, policy, roots

    return [
        cls
        for module in (base, roots, policy, compiled)
        for cls in vars(module).values()
        if isinstance(cls, type) and issubclass(cls, Frozen) and cls.__module__ == module.__name__
    ]


def test_no_model_field_defaults_through_a_builtin_factory() -> None:
    """pydantic reads each default factory's signature when it builds a validator; a builtin's
    (`list`, `dict`) goes through the tokenizer, the first one costing a regex compile. The
    models a compile loads default through plain functions (or model classes) instead."""
    import inspect

    seen = 0
    for cls in _compile_models():
        for name, info in cls.model_fields.items():
            factory = info.default_factory
            if factory is None:
                continue
            seen += 1
            assert not inspect.isbuiltin(factory) and factory not in (list, dict, set, tuple), (
                f"{cls.__name__}.{name}"
            )
    assert seen >= 10


def test_model_annotations_are_objects_not_strings() -> None:
    """The models a compile loads do not postpone annotations: a string annotation is compiled
    and evaluated by pydantic for each field when the class is created, on every run."""
    strings = [
        f"{cls.__name__}.{name}"
        for cls in _compile_models()
        for name, ann in vars(cls).get("__annotations__", {}).items()
        if isinstance(ann, str)
    ]
    assert strings == []


@pytest.mark.parametrize("fmt", ["bundle", "yaml"])
def test_bundle_compile_loads_no_docker_reports_checker_or_canaries(
    manifest: Path, fmt: str
) -> None:
    rc, modules = loaded(REPO, ["compile", "--roots", str(manifest), "--format", fmt])
    assert rc == (0 if fmt == "bundle" else 2)
    assert offenders(modules, ALWAYS_FORBIDDEN) == []


def test_no_lite_twins_or_second_parser_exist() -> None:
    """One model family and one CLI definition (issue 15): the twins stay deleted."""
    assert not (REPO / "compiler" / "lite.py").exists()
    assert not (REPO / "compiler" / "cli" / "fast.py").exists()


def test_launch_compile_loads_no_harness(manifest: Path) -> None:
    argv = ["compile", "--roots", str(manifest), "--run-as", "0", "--format", "launch"]
    rc, modules = loaded(REPO, argv)
    assert rc == 0
    assert "profilec.emit.launch" in modules
    assert offenders(modules, ALWAYS_FORBIDDEN) == []


@pytest.mark.parametrize(
    ("module", "line", "caught"),
    [
        ("compiler/pipeline.py", "import harness.codex_oracle", "harness"),
        ("compiler/cli/__init__.py", "import profilec.schemagen", "profilec.schemagen"),
        ("compiler/cli/__init__.py", "import docker", "docker"),
        ("compiler/cli/__init__.py", "import rich.console", "rich"),
        ("compiler/compile.py", "import jsonschema", "jsonschema"),
        ("compiler/cli/compile_cmd.py", "import profilec.report.json", "profilec.report"),
        ("compiler/roots.py", "import tomlkit", "tomlkit"),
        ("compiler/pipeline.py", "import profilec.check", "profilec.check"),
        ("compiler/cli/compile_cmd.py", "import profilec.canary", "profilec.canary"),
        ("compiler/cli/compile_cmd.py", "import profilec.cli.e2e_cmd", "profilec.cli.e2e_cmd"),
        (
            "compiler/commands/compile.py",
            "import profilec.commands.check",
            "profilec.commands.check",
        ),
        ("compiler/pipeline.py", "import profilec.schemagen", "profilec.schemagen"),
        ("compiler/pipeline.py", "import profilec.bundle.document", "profilec.bundle"),
        (
            "compiler/cli/compile_cmd.py",
            "import profilec.audit.report_md",
            "profilec.audit.report_md",
        ),
        ("compiler/pipeline.py", "import profilec.audit.launchers", "profilec.audit.launchers"),
        ("compiler/pipeline.py", "import profilec.session", "profilec.session"),
        ("compiler/inputs.py", "import profilec.mcp", "profilec.mcp"),
        ("compiler/inputs.py", "import hashlib", "hashlib"),
        ("compiler/emit/overrides.py", "import pydantic.root_model", "pydantic.root_model"),
    ],
)
def test_an_import_added_back_is_caught(
    tmp_path: Path, manifest: Path, module: str, line: str, caught: str
) -> None:
    root = _copy(tmp_path / "copy")
    path = root / module
    text = path.read_text()
    anchor = "from __future__ import annotations\n"
    assert anchor in text
    path.write_text(text.replace(anchor, anchor + line + "  # noqa\n", 1))
    rc, modules = loaded(root, ["compile", "--roots", str(manifest), "--format", "overrides"])
    assert rc == 0
    found = offenders(modules, (*PLAIN_FORBIDDEN, *INPUT_ONLY))
    assert any(o == caught or o.startswith(caught + ".") for o in found), found


def test_help_lists_commands_in_table_order_whatever_ran_before(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from profilec.cli import COMMANDS, main

    assert main(["canary", "--help"]) == 0  # registers canary (and compile) first
    capsys.readouterr()
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    listed = [
        line.strip("│ ").split(" ")[0]
        for line in text.split("\n")
        if line.startswith("│ ") and line.strip("│ ").split(" ")[0] in COMMANDS
    ]
    assert listed[:4] == ["compile", "check", "plan", "canary"]
    assert listed == [name for name in COMMANDS if name in listed]


def test_full_app_registers_every_command_module_in_the_build() -> None:
    from profilec.cli import COMMANDS, full_app

    names = {c.name for c in full_app().registered_commands}
    present = {
        name
        for name, module in COMMANDS.items()
        if (REPO / "profilec" / "cli" / f"{module}.py").is_file()
    }
    assert present <= names
    assert {"compile", "check", "plan", "canary"} <= present
