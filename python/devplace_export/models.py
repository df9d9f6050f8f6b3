"""Small models for tests and examples (`--module devplace_export.models:tiny_transformer`)."""
import math

import torch
from torch import nn


class _Block(nn.Module):
    def __init__(self, d, heads, ff, seq):
        super().__init__()
        self.d, self.heads, self.seq = d, heads, seq
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q = q.reshape(b, s, h, d // h).transpose(1, 2)
        k = k.reshape(b, s, h, d // h).transpose(1, 2)
        v = v.reshape(b, s, h, d // h).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // h), dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class TinyTransformer(nn.Module):
    """A GPT-style decoder stack on token ids: embedding, `layers` pre-norm blocks, LM head."""

    def __init__(self, vocab=256, d=64, heads=4, ff=256, layers=2, seq=32):
        super().__init__()
        self.vocab, self.seq = vocab, seq
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, seq, d))
        self.blocks = nn.Sequential(*[_Block(d, heads, ff, seq) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        return self.head(self.ln(self.blocks(self.embed(ids) + self.pos)))

    def example_inputs(self, batch_size):
        g = torch.Generator().manual_seed(0)
        return (torch.randint(0, self.vocab, (batch_size, self.seq), generator=g),)


def tiny_transformer():
    return TinyTransformer()


class DataDependent(nn.Module):
    """Not traceable: a tensor value decides a branch (for the error-message test)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            return torch.relu(y)
        return y


def data_dependent():
    return DataDependent()


class Gated(nn.Module):
    """DataDependent inside a larger model: traceable with --leaf devplace_export.models:DataDependent."""

    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(16, 16)
        self.gate = DataDependent()
        self.post = nn.Linear(16, 4)

    def forward(self, x):
        return self.post(self.gate(torch.relu(self.pre(x))))


def gated():
    return Gated()
