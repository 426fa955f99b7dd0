; Host-side calls the host-code rules look at, filtered by name here (in C) rather than in Python.
; Capture names are the contract with analysis/syntax.py.
(call_expression
  function: [(identifier) (qualified_identifier)] @blocking.name
  (#match? @blocking.name "(cudaMemcpy|cudaMemcpy2D|cudaMemcpy3D|cudaMemcpyToSymbol|cudaMemcpyFromSymbol|Synchronize|synchronize)$")) @blocking
