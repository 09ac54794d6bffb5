"""Trains the demo model on rendered conversations (see build.sh for the whole pipeline).

The data: JSON lines {"tokens": [...], "prompt": N} from `goss-gpu render`; the loss is on the tokens the assistant
writes (positions N and on). The model's vocabulary is compact: index 0 stands for every token the training data
never uses (its embedding and unembedding rows stay zero, as those tokens' rows will be in the exported file),
the other indices are the tokens used, in increasing id order. The softmax is the full vocabulary's: the N_unseen
zero logits add N_unseen * e^0 to the denominator, which is index 0's logit plus log(N_unseen); so the model learns
to keep the token it means above 0, and greedy decoding with the exported zero rows picks what it picks here.

    python3 train.py --data DIR --out DIR --steps 3000 --seed 1
"""
import argparse
import json
import math
import os
import random
import time

import torch
import torch.nn.functional as F

from model import Config, Transformer

VOCAB_SIZE = 201088

CONFIG = dict(num_hidden_layers=4, num_experts=4, experts_per_token=2, vocab_size=VOCAB_SIZE, hidden_size=128,
              intermediate_size=256, swiglu_limit=7.0, head_dim=64, num_attention_heads=4, num_key_value_heads=2,
              sliding_window=64, initial_context_length=4096, rope_theta=150000.0, rope_scaling_factor=32.0,
              rope_ntk_alpha=1.0, rope_ntk_beta=32.0, rms_norm_eps=1e-5)


def load(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


class Vocab:
    def __init__(self, ids):
        self.ids = sorted(ids)  # compact index i + 1 -> token id
        self.index = {t: i + 1 for i, t in enumerate(self.ids)}
        self.unseen = VOCAB_SIZE - len(self.ids)

    def __len__(self):
        return len(self.ids) + 1

    def compact(self, tokens):
        return [self.index.get(t, 0) for t in tokens]

    def token(self, i):
        return self.ids[i - 1] if i > 0 else -1


def batches(examples, batch_tokens, rnd, by_length=True):
    """Batches of at most batch_tokens padded tokens, in random order: of similar lengths (less padding, but lengths
    follow the task family, so a batch holds few families), or of examples in random order."""
    if by_length:
        order = sorted(range(len(examples)), key=lambda i: (len(examples[i][0]), rnd.random()))
    else:
        order = list(range(len(examples)))
        rnd.shuffle(order)
    out, cur, width = [], [], 0
    for i in order:
        w = max(width, len(examples[i][0]))
        if cur and w * (len(cur) + 1) > batch_tokens:
            out.append(cur)
            cur, w = [], len(examples[i][0])
        cur.append(i)
        width = w
    if cur:
        out.append(cur)
    rnd.shuffle(out)
    return out


def tensors(examples, idx):
    T = max(len(examples[i][0]) for i in idx)
    tok = torch.zeros(len(idx), T, dtype=torch.long)
    loss_at = []  # (row, position predicting the next token, target)
    for r, i in enumerate(idx):
        t, prompt = examples[i]
        tok[r, :len(t)] = torch.tensor(t)
        for p in range(prompt - 1, len(t) - 1):
            loss_at.append((r, p, t[p + 1]))
    la = torch.tensor(loss_at)
    return tok, la[:, 0], la[:, 1], la[:, 2]


def full_softmax_logits(model, h, vocab, qat):
    """Logits of the compact vocabulary where index 0 carries the mass of every unseen token (logit 0 each)."""
    logits = model.logits(h, qat)
    bias = torch.zeros(len(vocab))
    bias[0] = math.log(vocab.unseen)
    return logits + bias


@torch.no_grad()
def evaluate(model, vocab, refs, batch_tokens):
    """Per family, how many references greedy decoding would reproduce exactly: with teacher forcing, the argmax at
    every completion position is the reference's next token (unseen tokens' logit 0 included). One forward pass each."""
    model.eval()
    examples = [(vocab.compact(t), prompt) for _, t, prompt in refs]
    per = {}
    for idx in batches(examples, batch_tokens, random.Random(0)):
        tok, rows, pos, target = tensors(examples, idx)
        logits = model.logits(model.hidden(tok, qat=True)[rows, pos], qat=True)
        logits[:, 0] = 0.0
        wrong = (logits.argmax(-1) != target).float()
        bad = torch.zeros(len(idx)).index_add_(0, rows, wrong)
        for r, i in enumerate(idx):
            ok, n = per.get(refs[i][0], (0, 0))
            per[refs[i][0]] = (ok + int(bad[r] == 0), n + 1)
    model.train()
    return per


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="folder with train.tok.jsonl, heldout.jsonl, heldout.tok.jsonl")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--batch-tokens", type=int, default=4096)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--qat-from", type=float, default=0.5, help="fraction of the steps after which the forward sees MXFP4/bf16 weights")
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    rnd = random.Random(a.seed)

    train = load(os.path.join(a.data, "train.tok.jsonl"))
    vocab = Vocab({t for ex in train for t in ex["tokens"]})
    examples = [(vocab.compact(ex["tokens"]), ex["prompt"]) for ex in train]
    held = load(os.path.join(a.data, "heldout.jsonl"))
    held_tok = load(os.path.join(a.data, "heldout.tok.jsonl"))
    fams = [it["family"] for it in held for _ in it["references"]]
    refs = [(f, r["tokens"], r["prompt"]) for f, r in zip(fams, held_tok)]
    unseen_in_heldout = sorted({t for _, t, pr in refs for t in t[:pr] if t not in vocab.index})
    print(f"{len(examples)} conversations, {sum(len(e[0]) for e in examples)} tokens, vocabulary {len(vocab) - 1} tokens used; "
          f"held-out prompt tokens never in training: {unseen_in_heldout}", flush=True)

    c = Config(**CONFIG)
    model = Transformer(c, len(vocab))
    with torch.no_grad():
        model.embedding.weight[0].zero_()
        model.unembedding.weight[0].zero_()
    print(f"parameters: {sum(p.numel() for p in model.parameters())}", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    warmup = min(200, a.steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1, (s + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1, s / a.steps)))))

    queue, step, seen, wall_before, cpu_before = [], 0, 0, 0.0, 0.0
    resume = os.path.join(a.out, "resume.pt")
    os.makedirs(a.out, exist_ok=True)
    if os.path.exists(resume):  # a run that was stopped goes on where it was, with the same batches and weights
        r = torch.load(resume)
        model.load_state_dict(r["model"])
        opt.load_state_dict(r["opt"])
        sched.load_state_dict(r["sched"])
        rnd.setstate(r["rnd"])
        queue, step, seen, wall_before, cpu_before = r["queue"], r["step"], r["seen"], r["wall"], r["cpu"]
        print(f"resumed at step {step}", flush=True)
    t0, cpu0 = time.time() - wall_before, time.process_time() - cpu_before
    while step < a.steps:
        if not queue:
            # Examples in random order: batches of similar lengths pad less, but lengths follow the task family, and
            # batches of one or two families made the loss swing and the copying of words from the prompt come later.
            queue = batches(examples, a.batch_tokens, rnd, by_length=False)
        idx = queue.pop()
        qat = step >= a.qat_from * a.steps
        tok, rows, pos, target = tensors(examples, idx)
        h = model.hidden(tok, qat)
        logits = full_softmax_logits(model, h[rows, pos], vocab, qat)
        loss = F.cross_entropy(logits, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        with torch.no_grad():
            model.embedding.weight[0].zero_()
            model.unembedding.weight[0].zero_()
        step += 1
        seen += tok.numel()
        if step % 50 == 0 or step == a.steps:
            wall, cpu = time.time() - t0, time.process_time() - cpu0
            print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e} qat {qat} "
                  f"tokens {seen} wall {wall:.0f}s cpu {cpu:.0f}s ({seen / wall:.0f} tok/s)", flush=True)
        if step % 100 == 0:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(), "rnd": rnd.getstate(),
                        "queue": queue, "step": step, "seen": seen, "wall": time.time() - t0, "cpu": time.process_time() - cpu0},
                       resume + ".tmp")
            os.replace(resume + ".tmp", resume)
        if a.eval_every and step % a.eval_every == 0 or step == a.steps:
            per = evaluate(model, vocab, refs, a.batch_tokens)
            print("eval " + " ".join(f"{f} {ok}/{n}" for f, (ok, n) in per.items()), flush=True)
    torch.save({"config": CONFIG, "vocab": vocab.ids, "state": model.state_dict(), "steps": a.steps, "seed": a.seed,
                "wall_s": time.time() - t0, "cpu_s": time.process_time() - cpu0}, os.path.join(a.out, "trained.pt"))
    print(f"saved {a.out}/trained.pt: {time.time() - t0:.0f}s wall, {time.process_time() - cpu0:.0f}s CPU", flush=True)


if __name__ == "__main__":
    main()
