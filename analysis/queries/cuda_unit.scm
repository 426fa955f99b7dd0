; Translation-unit facts. Capture names are the contract with analysis/unit.py.
(preproc_def name: (identifier) @macro.name value: (preproc_arg)? @macro.value) @macro
(preproc_function_def name: (identifier) @fmacro.name parameters: (preproc_params) @fmacro.params
  value: (preproc_arg)? @fmacro.value) @fmacro
(function_definition) @function
(struct_specifier name: (type_identifier) @struct.name body: (field_declaration_list) @struct.body) @struct
(type_definition type: (struct_specifier body: (field_declaration_list) @tstruct.body)
  declarator: (type_identifier) @tstruct.name) @tstruct
(call_expression (kernel_call_syntax) @launch.config) @launch
(preproc_include path: (_) @include.path) @include
