"""Development harness: the differential tester and the prompt-input oracle.

This tree sits beside `compiler/`, not inside it: it is imported from a checkout by the tests
and `bench/`, is not in pyproject's `packages`, so the wheel never holds it, and nothing in
`profilec` imports it (tests/unit/test_package_boundary.py, lint-imports). It imports
`profilec`, never the other way round.
"""
