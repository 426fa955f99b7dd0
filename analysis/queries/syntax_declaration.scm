; One pattern per file: a query runs every pattern it holds, and each capture costs a Python object.
; Read by analysis/syntax.py `find(root, "declaration")`.
(declaration) @declaration
