"""`profilec check`, one concept per module.

checker (the run: `Checker.run() -> CheckReport`, and `run_check`, the static check), build
(stack building: CheckInputs from a bundle or a foreign config), check_inputs (what one check
looks at), resolution (each mode's profile resolved per cwd), coverage (the proof),
context (the lint context and `@lint`), lints/ (every lint, one module per family), rules (the
registry and catalogue), triage and waivers (grouping, --ignore, the project config,
--baseline), configstack (Codex's config layers), options (the request's flags the run reads),
profilec_config (the project config model), result (the report model).

The package imports nothing itself: `import profilec.check.X` loads X and what X needs.
"""
