"""Files mypy checks and pytest never runs: the library API's types as a caller sees them."""
