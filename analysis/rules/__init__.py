"""The rules: one module per rule, named after the pattern it flags; its class docstring is its documentation."""
