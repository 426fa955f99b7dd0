"""The CI model of issue 18: a conv, a group_norm and an attention block, as a user's file."""

MODEL = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """A conv, a group_norm and self-attention over the pixels, with a residual."""

    def __init__(self, channels=32, heads=4):
        super().__init__()
        self.conv = nn.Conv2d(16, channels, 3, padding=1)
        self.norm = nn.GroupNorm(8, channels)
        self.qkv = nn.Linear(channels, 3 * channels)
        self.heads = heads

    def forward(self, x):
        h = F.silu(self.norm(self.conv(x)))
        b, c, hh, ww = h.shape
        t = h.flatten(2).transpose(1, 2)
        q, k, v = self.qkv(t).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, -1, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v)
        return h + a.transpose(1, 2).reshape(b, c, hh, ww)


def model_and_inputs():
    return Block(), [torch.randn(2, 16, 16, 16)]
'''
