"""The PyTorch anchor of `npm run bench transformer`: the reference GPT of bench/transformer.ts in
PyTorch (CPU), timed on the same two paths: a GRPO update (forward, clipped surrogate, backward,
gradient clipping, AdamW) over 256 sequences of 48 positions, and KV-cached sampling of 256 rows,
32 new tokens after a 16-token prompt. Prints one JSON line of tokens/s (best and median).

usage: python3 bench/torch_gpt.py THREADS STEPS REPS
"""

import json
import math
import sys
import time

import torch
import torch.nn.functional as F

V, D, L, H, CTX, MLP = 32, 128, 4, 4, 64, 4
ROWS, TRAIN_T, PROMPT, NEW = 256, 48, 16, 32


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(D)
        self.q = torch.nn.Linear(D, D)
        self.k = torch.nn.Linear(D, D)
        self.v = torch.nn.Linear(D, D)
        self.o = torch.nn.Linear(D, D)
        self.ln2 = torch.nn.LayerNorm(D)
        self.fc = torch.nn.Linear(D, MLP * D)
        self.proj = torch.nn.Linear(MLP * D, D)

    def heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, H, D // H).transpose(1, 2)

    def forward(self, x, cache=None, mask=None):
        h = self.ln1(x)
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        if cache is not None:
            if cache[0] is not None:
                k = torch.cat([cache[0], k], 2)
                v = torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        s = q @ k.transpose(-1, -2) / math.sqrt(D // H)
        if mask is not None:
            s = s + mask
        a = (s.softmax(-1) @ v).transpose(1, 2).reshape(x.shape)
        x = x + self.o(a)
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Embedding(CTX, D)
        self.blocks = torch.nn.ModuleList([Block() for _ in range(L)])
        self.lnf = torch.nn.LayerNorm(D)
        self.head = torch.nn.Linear(D, V, bias=False)

    def forward(self, ids, start=0, caches=None):
        n = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(start, start + n))
        mask = None
        if n > 1:
            mask = torch.full((n, n), -1e9).triu(1)
        for i, b in enumerate(self.blocks):
            x = b(x, None if caches is None else caches[i], mask)
        return self.head(self.lnf(x))


def median(xs):
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def main():
    threads, steps, reps = (int(a) for a in sys.argv[1:4])
    torch.set_num_threads(threads)
    torch.manual_seed(11)
    model = GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(2, V, (ROWS, TRAIN_T + 1))
    old = -3.4 + 0.1 * torch.rand(ROWS, TRAIN_T)
    adv = torch.tensor([1.0 if i % 2 else -1.0 for i in range(ROWS)]).unsqueeze(1)
    weights = torch.zeros(ROWS, TRAIN_T)
    weights[:, PROMPT - 1 :] = 1.0 / (ROWS * NEW)

    def update():
        lp = model(ids[:, :-1]).log_softmax(-1).gather(2, ids[:, 1:].unsqueeze(2)).squeeze(2)
        rho = (lp - old).exp()
        loss = -(torch.min(rho * adv, rho.clamp(0.8, 1.2) * adv) * weights).sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    def sample():
        with torch.no_grad():
            caches = [[None, None] for _ in range(L)]
            logits = model(torch.randint(2, V, (ROWS, PROMPT)), 0, caches)[:, -1]
            for t in range(NEW):
                tok = torch.multinomial(logits.softmax(-1), 1)
                if t < NEW - 1:
                    logits = model(tok, PROMPT + t, caches)[:, -1]

    def timed(f, n):
        for _ in range(2):
            f()
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        return ts

    up = timed(update, steps)
    sa = timed(sample, reps)
    print(
        json.dumps(
            {
                "torch": torch.__version__,
                "threads": threads,
                "update": {"best": ROWS * TRAIN_T / min(up), "median": ROWS * TRAIN_T / median(up)},
                "sample": {"best": ROWS * NEW / min(sa), "median": ROWS * NEW / median(sa)},
            }
        )
    )


if __name__ == "__main__":
    main()
