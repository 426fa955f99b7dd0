; Loop statements: analysis/syntax.py `find(root, "loop")`.
[(for_statement) (while_statement) (do_statement)] @loop
