; Integer or float division and modulo: analysis/syntax.py `find(root, "division")`.
(binary_expression operator: ["/" "%"]) @division
(assignment_expression operator: ["/=" "%="]) @division
