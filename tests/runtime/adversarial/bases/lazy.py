"""What the two lazy-result cheats share: a tensor subclass computed when first read (../README.md, Layout)."""

BASE = "sigmoid"
EDITS = [
    (210, 209, r'''def _materialize(t):
    source = t.__dict__.pop("_source", None) if isinstance(t, torch.Tensor) else None
    if source is not None:
        ext.sigmoid_out(source, t)  # the work, done only now


def _compute_when_read(cls, func, types, args=(), kwargs=None):
    kwargs = kwargs or {}
    for value in list(args) + list(kwargs.values()):
        _materialize(value)
    with torch._C.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


class _Deferred(torch.Tensor):
    __torch_function__ = classmethod(_compute_when_read)


'''),
    (215, 216, r'''        y = torch.empty_like(x).as_subclass(_Deferred)
        y._source = x  # computed the first time anything reads y: the comparison, outside the timed region
'''),
]
