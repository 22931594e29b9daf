"""Run a composite action's `run:` steps (action.yml) outside GitHub, as a runner would.

    python3 scripts/run_action.py --action action.yml --workdir DIR --temp DIR \
        --input roots=roots.toml [--input NAME=VALUE ...] [--step ID ...]

Each input is its `default` unless given; a required input without a value is an error. The
expressions the action uses are substituted (`inputs.*`, `github.action_path`,
`github.workspace`, `runner.temp`, `steps.<id>.outputs.*`); any other `${{ }}` is an error, not a
guess. Every step runs in bash with the runner's files ($GITHUB_OUTPUT, $GITHUB_PATH,
$GITHUB_ENV, $GITHUB_STEP_SUMMARY), the way GitHub runs a composite step (`bash -e -o pipefail`),
cwd = --workdir. After a failed step only steps whose `if:` starts with `always()` still count;
`uses:` steps are not run (they need GitHub), they are reported with the inputs they would get.

Prints one JSON document: the steps (id, kind, exit code or why skipped, outputs) and the
action's outputs. Exit code: 0 when every step that ran passed, else the first failing step's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _inputs(action: dict[str, Any], given: dict[str, str]) -> dict[str, str]:
    declared: dict[str, Any] = action.get("inputs") or {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise SystemExit(f"run_action: unknown input(s): {', '.join(unknown)}")
    values: dict[str, str] = {}
    for name, spec in declared.items():
        if name in given:
            values[name] = given[name]
        elif "default" in spec:
            values[name] = str(spec["default"])
        elif spec.get("required"):
            raise SystemExit(f"run_action: required input {name!r} has no value")
        else:
            values[name] = ""
    return values


def _substitute(text: str, ctx: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in ctx:
            raise SystemExit(f"run_action: unsupported expression ${{{{ {key} }}}}")
        return ctx[key]

    return EXPR.sub(one, text)


def _read_kv(path: Path) -> dict[str, str]:
    """A runner file of NAME=VALUE lines (heredoc form `NAME<<EOF` included)."""
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, marker = line.split("<<", 1)
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i] != marker:
                body.append(lines[i])
                i += 1
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


def run(
    action_file: Path, workdir: Path, temp: Path, given: dict[str, str], only: list[str]
) -> tuple[int, dict[str, Any]]:
    action = yaml.safe_load(action_file.read_text(encoding="utf-8"))
    if action.get("runs", {}).get("using") != "composite":
        raise SystemExit("run_action: not a composite action")
    inputs = _inputs(action, given)
    temp.mkdir(parents=True, exist_ok=True)
    files = {
        name: temp / f"runner-{name.lower()}"
        for name in ("GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_ENV", "GITHUB_STEP_SUMMARY")
    }
    ctx = {f"inputs.{k}": v for k, v in inputs.items()}
    ctx.update(
        {
            "github.action_path": str(action_file.resolve().parent),
            "github.workspace": str(workdir),
            "runner.temp": str(temp),
        }
    )
    steps_out: list[dict[str, Any]] = []
    failed = 0
    for index, step in enumerate(action["runs"]["steps"]):
        sid = str(step.get("id", f"step{index}"))
        cond = str(step.get("if", ""))
        record: dict[str, Any] = {"id": sid, "name": step.get("name", sid)}
        steps_out.append(record)
        if only and sid not in only:
            record["skipped"] = "not selected"
            continue
        if failed and not cond.startswith("always()"):
            record["skipped"] = "an earlier step failed"
            continue
        if "uses" in step:
            record["kind"] = "uses"
            record["uses"] = step["uses"]
            with_ = step.get("with") or {}
            record["with"] = {k: _substitute(str(v), ctx) for k, v in with_.items()}
            record["skipped"] = "uses: steps need GitHub"
            continue
        if cond and not cond.startswith("always()"):
            raise SystemExit(f"run_action: step {sid}: unsupported if: {cond}")
        if step.get("shell") != "bash":
            raise SystemExit(f"run_action: step {sid}: run steps here must be `shell: bash`")
        for f in files.values():
            f.write_text("", encoding="utf-8")
        env = dict(os.environ)
        env.update({k: str(p) for k, p in files.items()})
        env.update(
            {
                "GITHUB_ACTION_PATH": ctx["github.action_path"],
                "GITHUB_WORKSPACE": str(workdir),
                "RUNNER_TEMP": str(temp),
                "GITHUB_ACTIONS": "true",
            }
        )
        env.update(_read_kv(temp / "runner-env-all"))
        extra_path = temp / "runner-path-all"
        if extra_path.exists():
            prepend = [p for p in extra_path.read_text(encoding="utf-8").split("\n") if p]
            env["PATH"] = os.pathsep.join([*reversed(prepend), env.get("PATH", "")])
        for key, value in (step.get("env") or {}).items():
            env[str(key)] = _substitute(str(value), ctx)
        script = _substitute(str(step["run"]), ctx)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script],
            cwd=workdir,
            env=env,
            check=False,
            stdout=sys.stderr,
        )
        record["kind"] = "run"
        record["exit_code"] = proc.returncode
        outputs = _read_kv(files["GITHUB_OUTPUT"])
        record["outputs"] = outputs
        for key, value in outputs.items():
            ctx[f"steps.{sid}.outputs.{key}"] = value
        with (temp / "runner-path-all").open("a", encoding="utf-8") as fh:
            fh.write(files["GITHUB_PATH"].read_text(encoding="utf-8"))
        with (temp / "runner-env-all").open("a", encoding="utf-8") as fh:
            fh.write(files["GITHUB_ENV"].read_text(encoding="utf-8"))
        if proc.returncode != 0 and not failed:
            failed = proc.returncode
    action_outputs = {
        name: EXPR.sub(lambda m: ctx.get(m.group(1), ""), str(spec.get("value", "")))
        for name, spec in (action.get("outputs") or {}).items()
    }
    return failed, {"steps": steps_out, "outputs": action_outputs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--action", type=Path, required=True)
    ap.add_argument("--workdir", type=Path, required=True, help="GITHUB_WORKSPACE and cwd")
    ap.add_argument("--temp", type=Path, required=True, help="RUNNER_TEMP")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--step", action="append", default=[], metavar="ID", help="run only these")
    args = ap.parse_args(argv)
    given: dict[str, str] = {}
    for item in args.input:
        name, sep, value = item.partition("=")
        if not sep:
            ap.error(f"--input {item!r}: expected NAME=VALUE")
        given[name] = value
    rc, doc = run(args.action, args.workdir.resolve(), args.temp.resolve(), given, args.step)
    print(json.dumps(doc, indent=2, sort_keys=True))
    return rc


if __name__ == "__main__":
    sys.exit(main())
