; What can give another value each time it is evaluated without a variable of it being assigned: a read
; through a subscript or a pointer, a call. Read by analysis/syntax.py `loop_invariant(expr, loop)`.
[(subscript_expression) (pointer_expression) (call_expression)] @memory_read
