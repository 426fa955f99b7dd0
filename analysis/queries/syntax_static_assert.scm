; One pattern per file: a query runs every pattern it holds, and each capture costs a Python object.
; Read by analysis/model.py `asserted_values`.
(static_assert_declaration) @static_assert
