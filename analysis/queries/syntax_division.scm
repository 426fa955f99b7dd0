; Integer or float division and modulo, by their operator token: analysis/syntax.py `divisions(root)` takes
; each token's expression. Not `(binary_expression operator: "/")`: the query cursor keeps that pattern
; pending at every binary expression until its operator comes, after the whole left operand, so a sum of
; n terms cost n² (a 5,000-term sum: 4 s; a 3,000-line file's kernels: 65 ms where this takes 10 ms).
["/" "%" "/=" "%="] @division
