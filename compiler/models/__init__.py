"""Every published document model: one module per format family, each format's JSON Schema in
`schemas/` generated from its class here (`python -m profilec.schemagen`):

    module            formats: schemas/<name>.schema.json (its class)

    base              no format: `Frozen` (validated), `Built` (built from validated values), shared
                      field types
    roots             roots-manifest (RootsManifest); the launch layout the CLI flags give
                      (LaunchLayout)
    policy            policy-profile (ModeProfilePolicy), mode-map (ModeMap), trusted-base
                      (TrustedBasePolicy), parent-policy (ParentPolicy)
    compiled          compiled-bundle (CompiledBundle: resolved roots, compiled profiles; all
                      `Built`)
    bundle            bundle (BundleDocument), bundle-provenance (BundleProvenance), lock (LockFile)
    audit             explain (Explanation), diff (DiffReport)
    mounts            plan-layout (PlanLayout), backends (BackendCatalog), mount-plan (MountPlan)
    launch            launch (LaunchDocument), adapters-catalog (AdapterCatalog)
    acp               acp-launch (AcpLaunchConfig)
    overrides         overrides (CodexOverrideLines; schema only, no compile imports it)
    requirements      requirements (ManagedRequirements)
    mcp               vouched-mcp (VouchedMcpServers)
    session           session-config (SessionConfig), session-allowlist (SessionAllowList)
    check             check-report (CheckReport), rules (RuleCatalogue)
    profilec_config   profilec-config (ProfilecConfig)
    canary            canary-report (CanaryReportDocument)
    compat            compat-matrix (CompatibilityMatrix)
    watch             watch-event (WatchEvent)
    run               provider-config (ProviderConfig): `profilec run --provider-config`

The one schema without a model is launch-request (Codex's own JSON-RPC: compiler/schemagen.py
LAUNCH_REQUEST). The package sits at the bottom of the layers (docs/architecture.md): it imports
pydantic, the standard library and the modules below it only, and the code that reads, builds or
renders a document imports its model from here. Import a model from its module
(`from profilec.models.compiled import CompiledBundle`); this package itself exports nothing.
"""
