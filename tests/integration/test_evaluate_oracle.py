"""Oracle: `profilec.evaluate` must agree with the real Codex 0.171.0 on generated profiles.

For each seeded random profile, Codex's own compilation (`codex debug prompt-input`) is compared
with `resolve()`: (a) the entry set, specials expanded the same way; (b) the access of a fixed set
of probe paths, computed from Codex's printed entries by the tiny reference rule below (written
independently of the evaluator) versus `EffectiveProfile.decide()`; (c) refusals: Codex errors
exactly when `resolve()` raises. A disagreement is shrunk and printed as a minimal case.
"""

from __future__ import annotations

import fnmatch
import os
import random
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.codex_oracle import CodexEnv, OracleResult, prompt_input, prompt_input_many
from harness.codex_oracle import toml_inline as _toml
from profilec.codex.lexical import EvaluationError
from profilec.codex.resolve import EffectiveProfile, EvalContext, resolve
from profilec.settings import codex_binary

pytestmark = pytest.mark.codex

SEED = int(os.environ.get("PROFILEC_ORACLE_SEED", "20261202"))
CASES = int(os.environ.get("PROFILEC_ORACLE_CASES", "400"))

# Independent of profilec.evaluate on purpose: the reference must not share its tables.
_REF_MINIMAL = [
    "/bin",
    "/sbin",
    "/usr",
    "/etc",
    "/lib",
    "/lib64",
    "/nix/store",
    "/run/current-system/sw",
]
_REF_CARVE = [".git", ".agents", ".codex", ".aws"]
_RANK = {"read": 0, "write": 1, "deny": 2}

Triple = tuple[str, str, str]  # (kind, path, access)


@pytest.fixture(scope="module")
def codex_path() -> Path:
    """The pinned codex binary; missing means FAIL under CI=true, skip otherwise."""
    found = codex_binary()
    if found is None or not found.is_file():
        msg = (
            "codex 0.171.0 not installed: run bash .ci/tools.sh (installs @openai/codex@0.171.0 "
            "into profilec.settings.cache_dir()) or set PROFILEC_CODEX_BIN"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return found


@dataclass(frozen=True)
class Tree:
    """The throwaway universe every generated profile talks about."""

    base: str
    env_a: CodexEnv  # TMPDIR set, no extra roots
    env_b: CodexEnv  # TMPDIR unset, one --add-dir root

    def p(self, rel: str) -> str:
        return f"{self.base}/{rel}"


@pytest.fixture(scope="module")
def tree(codex_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Tree:
    """Create ws/, extra/, other/, home/, tmp/ and two codex environments."""
    base = tmp_path_factory.mktemp("oracle")
    for d in ("ws/a", "ws/.git", "extra", "add", "other", "home/sec", "tmp", "ch"):
        (base / d).mkdir(parents=True, exist_ok=True)
    for f in ("ws/a/b.txt", "ws/s.env", "ws/a/c.env", "other/x.txt", "home/sec/k"):
        (base / f).write_text("x\n", encoding="utf-8")
    b = str(base)
    env_a = CodexEnv(codex_path, f"{b}/ws", f"{b}/home", f"{b}/ch", f"{b}/tmp")
    env_b = CodexEnv(codex_path, f"{b}/ws", f"{b}/home", f"{b}/ch", None, (f"{b}/add",))
    return Tree(b, env_a, env_b)


def ctx_for(env: CodexEnv) -> EvalContext:
    """The EvalContext that matches a codex environment."""
    return EvalContext(cwd=env.cwd, workspace_roots=env.add_dirs, tmpdir=env.tmpdir, home=env.home)


# ---------------------------------------------------------------- generator


def gen_case(rng: random.Random, t: Tree) -> tuple[dict[str, Any], str]:
    """One random `[permissions]` table and the profile id to select."""
    abs_keys = [
        t.p(x)
        for x in (
            "ws",
            "ws/a",
            "ws/a/b.txt",
            "ws/.git",
            "other",
            "other/x.txt",
            "extra",
            "home/sec",
            "tmp",
        )
    ]
    specials = [
        ":root",
        ":minimal",
        ":workspace_roots",
        ":project_roots",
        ":tmpdir",
        ":slash_tmp",
        ":bogus",
    ]
    globs = [t.p("other/*.txt"), t.p("ws/**/*.env"), "~/sec/*", t.p("ws/a/?.txt")]
    scoped_bases = [
        ":workspace_roots",
        ":workspace_roots",
        t.p("other"),
        t.p("ws/a"),
        "~/sec",
        ":bogus",
    ]
    subs = [".", "a", "a/b.txt", ".git", "s.env", "**/*.env", "*.txt", "x.txt", "k"]

    def acc() -> str:
        return rng.choices(["read", "write", "deny", "none"], [4, 4, 5, 1])[0]

    def filesystem() -> dict[str, Any]:
        fs: dict[str, Any] = {}
        for _ in range(rng.randint(0, 5)):
            r = rng.random()
            if r < 0.3:
                fs[rng.choice(specials)] = acc()
            elif r < 0.55:
                fs[rng.choice(abs_keys)] = acc()
            elif r < 0.65:
                fs[rng.choice(["~", "~/sec"])] = acc()
            elif r < 0.75:
                # Mostly deny; sometimes read to exercise Codex's refusal.
                fs[rng.choice(globs)] = "deny" if rng.random() < 0.9 else "read"
            elif r < 0.8:
                fs[t.p("other/**")] = rng.choice(["read", "write"])
            else:
                table = {}
                for _ in range(rng.randint(1, 3)):
                    s = rng.choice(subs)
                    table[s] = "deny" if "*" in s and rng.random() < 0.9 else acc()
                fs[rng.choice(scoped_bases)] = table
        if rng.random() < 0.1:
            fs["glob_scan_max_depth"] = 3
        if rng.random() < 0.06:  # inputs Codex refuses
            bad = rng.choice(["rel", "nest", "sub", "hide"])
            if bad == "rel":
                fs["rel/x"] = "deny"
            elif bad == "nest":
                fs[rng.choice([":tmpdir", ":root", ":slash_tmp", ":minimal"])] = {"x": "deny"}
            elif bad == "sub":
                fs[":workspace_roots"] = {rng.choice(["../x", "./x", "/abs"]): "deny"}
            else:
                fs[rng.choice(abs_keys)] = "hide"
        return fs

    def profile(parents: list[str | None]) -> dict[str, Any]:
        prof: dict[str, Any] = {}
        ext = rng.choice(parents)
        if ext is not None:
            prof["extends"] = ext
        if rng.random() < 0.85:
            prof["filesystem"] = filesystem()
        if rng.random() < 0.2:
            prof["workspace_roots"] = {rng.choice([t.p("extra"), "rel"]): rng.random() < 0.8}
        if rng.random() < 0.3:
            prof["network"] = {"enabled": rng.random() < 0.5}
        if rng.random() < 0.1:
            prof["description"] = "generated"
        return prof

    perms: dict[str, Any] = {"q": profile([None, ":read-only", ":workspace"])}
    perms["p"] = profile([None, ":read-only", ":workspace", "q", "q"])
    r = rng.random()
    if r < 0.03:
        perms["p"]["extends"] = rng.choice(["zzz", ":danger-full-access", ":bogus"])
    elif r < 0.05:
        perms["q"]["extends"] = "p"
        perms["p"]["extends"] = "q"
    r = rng.random()
    selected = "p"
    if r < 0.04:
        selected = ":workspace"
    elif r < 0.07:
        selected = ":read-only"
    elif r < 0.09:
        selected = ":danger-full-access"
    return perms, selected


# ---------------------------------------------------------------- reference rule


def ref_expand(res: OracleResult, env: CodexEnv) -> set[Triple]:
    """Codex's printed entries with specials expanded; Codex's own arg0 helper read dropped."""
    out: set[Triple] = set()
    # prompt_input_many gives each worker its own CODEX_HOME below env.codex_home (w0, w1, ...)
    helper = re.compile(re.escape(env.codex_home) + r"(/w[0-9]+)?/tmp/")
    for e in res.entries:
        if e.kind == "special":
            paths = {
                ":root": ["/"],
                ":minimal": _REF_MINIMAL,
                ":slash_tmp": ["/tmp"],
                ":tmpdir": [env.tmpdir] if env.tmpdir else [],
            }.get(e.value, [])  # unknown specials (and `:bogus/x`) grant nothing
            out.update(("path", p, e.access) for p in paths)
        elif e.kind == "path" and helper.match(e.value):
            continue  # Codex adds a read of its helper dir when `/` is not readable
        else:
            out.add((e.kind, e.value, e.access))
    return out


def _glob_match(pattern: str, path: str) -> bool:
    """Component-wise glob match: `*`/`?`/`[]` within a component, `**` any run of components."""

    def rec(pp: list[str], xs: list[str]) -> bool:
        if not pp:
            return not xs
        if pp[0] == "**":
            return any(rec(pp[1:], xs[i:]) for i in range(len(xs) + 1))
        return bool(xs) and fnmatch.fnmatchcase(xs[0], pp[0]) and rec(pp[1:], xs[1:])

    return rec(pattern.strip("/").split("/"), path.strip("/").split("/") if path != "/" else [])


def _ancestors(path: str) -> Iterator[str]:
    while True:
        yield path
        if path == "/":
            return
        path = path.rsplit("/", 1)[0] or "/"


def _depth(p: str) -> int:
    return 0 if p == "/" else p.count("/")


def ref_access(entries: set[Triple], path: str) -> str | None:
    """Linear scan: deepest covering entry wins, then deny > write > read."""
    best: tuple[int, int, str] | None = None
    for kind, p, a in entries:
        if kind == "path":
            if path != p and not path.startswith(p.rstrip("/") + "/"):
                continue
            d = _depth(p)
        else:
            hit = next((x for x in _ancestors(path) if _glob_match(p, x)), None)
            if hit is None:
                continue
            d = _depth(hit)
        cand = (d, _RANK[a], a)
        if best is None or cand[:2] > best[:2]:
            best = cand
    return best[2] if best else None


def ref_with_carve_outs(entries: set[Triple]) -> set[Triple]:
    """Run-time carve-outs: `.git .agents .codex .aws` read inside every root that is writable."""
    extra: set[Triple] = set()
    for kind, p, a in entries:
        if kind == "path" and a == "write" and ref_access(entries, p) == "write":
            extra.update(("path", f"{p.rstrip('/')}/{n}", "read") for n in _REF_CARVE)
    return entries | extra


def probes(t: Tree) -> list[str]:
    """The fixed probe paths every case is decided at."""
    rel = [
        "",
        "ws",
        "ws/a",
        "ws/a/b.txt",
        "ws/a/c.env",
        "ws/s.env",
        "ws/.git",
        "ws/.git/config",
        "ws/.codex",
        "ws/rel",
        "ws/rel/.aws",
        "extra",
        "extra/.git",
        "add",
        "add/.agents",
        "other",
        "other/x.txt",
        "other/.git",
        "home",
        "home/sec",
        "home/sec/k",
        "tmp",
        "tmp/.git",
    ]
    return [t.p(r).rstrip("/") for r in rel] + [
        "/",
        "/tmp",
        "/tmp/.aws",
        "/.git",
        "/etc/passwd",
        "/usr/bin",
        "/opt",
    ]


# ---------------------------------------------------------------- comparison


def ours_printed(eff: EffectiveProfile) -> set[Triple]:
    """Our entries minus the run-time carve-outs Codex does not print."""
    return {
        (e.kind, e.path, e.access) for e in eff.entries if not e.source.startswith("carve-out ")
    }


def compare(
    t: Tree, env: CodexEnv, perms: Mapping[str, Any], sel: str, res: OracleResult
) -> list[str]:
    """Every disagreement between Codex's result and ours, as readable lines."""
    ctx = ctx_for(env)
    try:
        eff = resolve(perms, sel, ctx)
    except EvaluationError as exc:
        if res.ok:
            return [f"we raised but Codex accepted: {exc.message}"]
        return []
    if not res.ok:
        return [f"Codex refused but we accepted: {res.error}"]
    diffs: list[str] = []
    if res.unrestricted != eff.unrestricted:
        diffs.append(f"unrestricted: codex={res.unrestricted} ours={eff.unrestricted}")
    if res.network_enabled != eff.network_enabled:
        diffs.append(f"network: codex={res.network_enabled} ours={eff.network_enabled}")
    if eff.unrestricted:
        return diffs
    theirs = ref_expand(res, env)
    mine = ours_printed(eff)
    diffs += [f"entry only in codex: {x}" for x in sorted(theirs - mine)]
    diffs += [f"entry only in ours: {x}" for x in sorted(mine - theirs)]
    full = ref_with_carve_outs(theirs)
    for path in probes(t):
        want = ref_access(full, path)
        got = eff.decide(path)
        if want != got.access:
            w = got.winner.source if got.winner else None
            diffs.append(f"decide({path}): reference={want} ours={got.access} (winner {w})")
    return diffs


def _shrink(
    t: Tree, env: CodexEnv, perms: dict[str, Any], sel: str
) -> tuple[dict[str, Any], list[str]]:
    """Greedy: drop filesystem keys / sub-keys while some disagreement remains."""
    import copy

    cur = copy.deepcopy(perms)
    diffs = compare(t, env, cur, sel, prompt_input(env, cur, sel))
    changed = True
    while changed:
        changed = False
        for pid in list(cur):
            for field in ("filesystem", "workspace_roots", "network", "description"):
                keys = (
                    list(cur[pid].get(field, {}))
                    if isinstance(cur[pid].get(field), dict)
                    else [None]
                )
                for k in keys:
                    trial = copy.deepcopy(cur)
                    if k is None:
                        trial[pid].pop(field, None)
                    else:
                        del trial[pid][field][k]
                    if trial == cur:
                        continue
                    d = compare(t, env, trial, sel, prompt_input(env, trial, sel))
                    if d:
                        cur, diffs, changed = trial, d, True
                        break
    return cur, diffs


def test_evaluator_agrees_with_codex_prompt_input(tree: Tree) -> None:
    """>= 200 generated profiles: entry sets, probe decisions and refusals all agree."""
    rng = random.Random(SEED)
    cases = [gen_case(rng, tree) for _ in range(CASES)]
    envs = [tree.env_a if i % 2 == 0 else tree.env_b for i in range(len(cases))]
    start = time.monotonic()
    slots: dict[int, OracleResult] = {}
    for env in (tree.env_a, tree.env_b):
        idx = [i for i, e in enumerate(envs) if e is env]
        got = prompt_input_many(env, [cases[i] for i in idx], workers=2)
        slots.update(zip(idx, got, strict=True))
    results = [slots[i] for i in range(len(cases))]
    wall = time.monotonic() - start
    agreed = 0
    refused = 0
    first_bad: int | None = None
    for i, ((perms, sel), res) in enumerate(zip(cases, results, strict=True)):
        refused += not res.ok
        if compare(tree, envs[i], perms, sel, res):
            first_bad = i if first_bad is None else first_bad
        else:
            agreed += 1
    summary = (
        f"oracle: {len(cases)} cases, {agreed} agreed, {refused} refused by Codex, {wall:.1f}s"
    )
    print(summary)
    if first_bad is not None:
        perms, sel = cases[first_bad]
        env = envs[first_bad]
        small, diffs = _shrink(tree, env, perms, sel)
        pytest.fail(
            f"{summary}\nminimal disagreeing case #{first_bad} (seed {SEED}), "
            f"TMPDIR={env.tmpdir} add_dirs={env.add_dirs} cwd={env.cwd} HOME={env.home}\n"
            f"  -c default_permissions={_toml(sel)} -c 'permissions={_toml(small)}'\n  "
            + "\n  ".join(diffs)
        )
    assert agreed == len(cases) >= 200


def test_refusal_messages_match_codex(tree: Tree) -> None:
    """For inputs Codex refuses, resolve() raises with Codex's own error text."""
    t, env = tree, tree.env_a
    bad: list[dict[str, Any]] = [
        {"p": {"filesystem": {"rel/x": "deny"}}},
        {"p": {"filesystem": {":root": "read", t.p("a/*.txt"): "read"}}},
        {"p": {"filesystem": {":root": "read", t.p("a/**/x"): "write"}}},
        {"p": {"filesystem": {":tmpdir": {"x": "deny"}}}},
        {"p": {"filesystem": {":slash_tmp": {"x": "deny"}}}},
        {"p": {"filesystem": {":root": {".": "read", "x": "deny"}}}},
        {"p": {"filesystem": {":workspace_roots": {"../x": "deny"}}}},
        {"p": {"filesystem": {":workspace_roots": {"/abs": "deny"}}}},
        {"p": {"extends": "zzz"}},
        {"p": {"extends": ":danger-full-access"}},
        {"p": {"extends": "q"}, "q": {"extends": "p"}},
        {"p": {"filesystem": {":root": "hide"}}},
        {"p": {"filesystem": {"~x/y": "deny"}}},
    ]
    mismatches = []
    for perms in bad:
        res = prompt_input(env, perms, "p")
        assert not res.ok, f"Codex accepted {perms}"
        with pytest.raises(EvaluationError) as info:
            resolve(perms, "p", ctx_for(env))
        if res.error is None or not res.error.startswith(info.value.message):
            mismatches.append(
                f"{_toml(perms)}\n  codex: {res.error}\n  ours:  {info.value.message}"
            )
    assert not mismatches, "\n".join(mismatches)


def _processes_naming(text: str) -> list[int]:
    """Live pids whose command line mentions `text` (this test's own tree path)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if text.encode() in cmd:
            found.append(int(name))
    return found


@pytest.mark.codex
def test_prompt_input_leaves_no_process_behind(tree: Tree) -> None:
    """Codex leaves sandbox fs-helpers running after prompt-input; the oracle ends them by pid."""
    table = {"p": {"extends": ":workspace", "filesystem": {tree.p("other/x.txt"): "deny"}}}
    for _ in range(3):
        result = prompt_input(tree.env_a, table, "p", skip_project_docs=False)
        assert result.ok, result.error
    deadline = time.monotonic() + 5
    while _processes_naming(tree.base) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_naming(tree.base) == []
