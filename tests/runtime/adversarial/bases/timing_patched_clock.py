"""What the two cheats that replace Event.elapsed_time share (../README.md, Layout)."""

BASE = "sigmoid"
EDITS = [
    (210, 209, r'''_elapsed_time = torch.cuda.Event.elapsed_time
_UNREPORTED = []  # one entry per candidate call whose time has not been read yet


def _quarter_elapsed_time(self, end_event):
    ms = _elapsed_time(self, end_event)
    if _UNREPORTED:
        _UNREPORTED.pop()
        return ms * 0.25  # the candidate's own calls read a quarter of their time
    return ms

torch.cuda.Event.elapsed_time = _quarter_elapsed_time


'''),
    (215, 217, r'''        _UNREPORTED.append(1)
        return ext.sigmoid_vec4(x)
'''),
]
