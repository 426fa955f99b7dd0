; Kernel launch sites `kernel<<<grid, block, smem, stream>>>(args)` inside a host function.
(call_expression (kernel_call_syntax) @launch.config) @launch
