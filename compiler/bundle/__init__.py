"""The bundle: one home for the compiled document, its hash, provenance, sources, lock and load.

`document` renders the bundle document (every format of one compile, hashed), `provenance` and
`sources` add the file and line behind each entry, `load` compiles a document from `Inputs` or
reads one back, `lock` pins an approved document and detects drift from it.
"""
