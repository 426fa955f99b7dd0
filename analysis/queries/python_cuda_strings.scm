; Python calls that carry CUDA source: torch's load_inline and CuPy's RawKernel/RawModule.
; @call is the call, @func its callee, @kw a keyword name, @arg a (keyword or positional) argument.
(call
  function: [(identifier) (attribute)] @func
  arguments: (argument_list) @args) @call

; Module-level `NAME = "..."` assignments, so sources passed by variable can be resolved.
(module
  (expression_statement
    (assignment
      left: (identifier) @var
      right: [(string) (concatenated_string)] @value)))
