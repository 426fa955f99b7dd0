; What a statement assigns: the target of `=` / `+=` ..., of `++` / `--`, and a declared name (a local declared
; inside a loop is a value per iteration). Read by analysis/syntax.py `assigned_names(root)`.
[
  (assignment_expression left: (_) @assigned)
  (update_expression argument: (_) @assigned)
  (init_declarator declarator: (_) @assigned)
]
