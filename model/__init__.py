"""cudalens.model: a whole PyTorch model — its hot ops ranked (`profile.py`), a KernelBench problem for each, the
kernels `cudalens optimize` made for them verified and swapped back in as custom ops (`verify.py`, the generated
module: `integration.py`). What runs in the user's interpreter for it (the model's entry, the op calls, the
advice, the problems' text) is under worker/child/, by the child's rule."""
