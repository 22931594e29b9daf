"""Differential tester: random trees and profiles run through the real `codex sandbox`.

`gen` builds a seeded case as data (tree, profile, launch context, probes), `run` materializes it,
runs ONE sandboxed script per case and judges what the command saw, `compare` sets that beside
`profilec.evaluate.enforce()`'s prediction and classifies every probe, `__main__` is the CLI
(`python3 -m harness.difftest --help`). See docs/codex-semantics.md "Differential testing".
"""
