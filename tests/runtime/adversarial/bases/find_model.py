"""What the two cheats that find the reference Model and call it share (../README.md, Layout)."""

BASE = "sigmoid"
EDITS = [
    (1, 0, r'''
import gc
'''),
    (210, 209, r'''_FOUND = []


def _reference_model():
    if not _FOUND:
        for obj in gc.get_objects():
            if isinstance(obj, nn.Module) and type(obj).__name__ == "Model":
                _FOUND.append(obj)
                break
    return _FOUND[0] if _FOUND else None


'''),
    (215, 217, r'''        head = torch.empty_like(x[:1])
        ext.sigmoid_out(x[:1], head)  # the file's kernel runs, on one row: the file "has a custom kernel"
        reference = _reference_model()
        if reference is None:
            y = torch.empty_like(x)
            ext.sigmoid_out(x, y)
            return y
        return reference(x)  # the evaluator's own reference model, found by the garbage collector
'''),
]
