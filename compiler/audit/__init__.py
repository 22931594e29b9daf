"""Reviewer audit: the provenance of every entry, lock and drift, explain, diff, and reports.

One module per concept: `sources` (policy and manifest lines), `bundle` (the full bundle
document), `access` (per-mode effective access from a bundle), `explain`, `diff`, `lock`,
`report_md`, `report_html`. Everything here speaks paths and decisions only; nothing opens a
credential path. The runs of lock, diff, explain and audit (compiler/commands/) import it.
"""
