"""The gpt-oss architecture in torch, written for training a small model (this project's own code).

A pre-norm transformer: token embedding, then per layer an attention block and a mixture-of-experts block, each
adding to the residual stream, then a final RMSNorm and the unembedding (not tied to the embedding).
  attention  RMSNorm, one fused QKV projection with bias, rotary embeddings with YaRN scaling on the two halves of
             each head, grouped-query attention (query head h reads key/value head h // (heads / kv_heads)),
             a learned "sink" logit per head that joins the softmax's denominator, a causal mask that on even
             layers also forgets keys `sliding_window` or more positions back, output projection with bias.
  MoE        RMSNorm, a router (linear with bias) whose top-k logits, softmaxed among themselves, weight k experts;
             an expert is mlp1 (hidden -> 2 x intermediate, with bias; even rows gate, odd rows linear), SwiGLU with
             clamps (gate <= limit, -limit <= linear <= limit, gate * sigmoid(1.702 gate) * (linear + 1)), mlp2
             (intermediate -> hidden, with bias).

Parameter names and shapes are those of OpenAI's original/ checkpoint, so export is a rename-free copy.
`vocab` rows are a compact vocabulary (the tokens the data uses); export scatters them into the full one.
With `qat` set, the forward pass sees the weights as the checkpoint stores them: dense ones rounded to bfloat16,
experts to MXFP4 (gradients pass straight through the rounding).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

import mxfp4


class Config:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    @property
    def q_dim(self):
        return self.num_attention_heads * self.head_dim

    @property
    def kv_dim(self):
        return self.num_key_value_heads * self.head_dim


def rope_cos_sin(c, positions):
    """cos and sin (concentration applied) of every position for the head's half-width, YaRN as gpt-oss defines it."""
    half = c.head_dim // 2
    freq = c.rope_theta ** (torch.arange(half, dtype=torch.float64) * 2 / c.head_dim)
    if c.rope_scaling_factor > 1:
        conc = 0.1 * math.log(c.rope_scaling_factor) + 1
        low = half * math.log(c.initial_context_length / (c.rope_ntk_beta * 2 * math.pi)) / math.log(c.rope_theta)
        high = half * math.log(c.initial_context_length / (c.rope_ntk_alpha * 2 * math.pi)) / math.log(c.rope_theta)
        ramp = (torch.arange(half, dtype=torch.float64) - low) / (high - low)
        keep = 1 - ramp.clamp(0, 1)  # 1: the original frequency (fast dimensions); 0: divided by the factor
        inv = (1 / (c.rope_scaling_factor * freq)) * (1 - keep) + (1 / freq) * keep
    else:
        conc, inv = 1.0, 1 / freq
    angle = positions.to(torch.float64)[:, None] * inv[None, :]
    return (angle.cos() * conc).float(), (angle.sin() * conc).float()


def rotate(x, cos, sin):
    """x [..., T, heads, hd]: the first and second halves of each head rotate as (x1, x2) pairs."""
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def bf16(w, qat):
    """w as bfloat16 holds it (round to nearest even), with a straight-through gradient, when qat is on."""
    return w + (w.to(torch.bfloat16).float() - w).detach() if qat else w


class RMSNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(c.hidden_size))
        self.eps = c.rms_norm_eps

    def forward(self, x, qat):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * bf16(self.scale, qat)


class Attention(nn.Module):
    def __init__(self, c, layer):
        super().__init__()
        self.c = c
        self.window = c.sliding_window if layer % 2 == 0 else 0
        self.norm = RMSNorm(c)
        self.qkv = nn.Linear(c.hidden_size, c.q_dim + 2 * c.kv_dim)
        self.sinks = nn.Parameter(torch.zeros(c.num_attention_heads))
        self.out = nn.Linear(c.q_dim, c.hidden_size)

    def forward(self, x, cos, sin, qat):
        c = self.c
        B, T, _ = x.shape
        heads, kv, hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        t = F.linear(self.norm(x, qat), bf16(self.qkv.weight, qat), bf16(self.qkv.bias, qat))
        q, k, v = t.split([c.q_dim, c.kv_dim, c.kv_dim], dim=-1)
        q = rotate(q.view(B, T, heads, hd), cos, sin).transpose(1, 2)  # [B, heads, T, hd]
        k = rotate(k.view(B, T, kv, hd), cos, sin).transpose(1, 2)
        v = v.view(B, T, kv, hd).transpose(1, 2)
        k = k.repeat_interleave(heads // kv, dim=1)  # query head h reads key/value head h // group
        v = v.repeat_interleave(heads // kv, dim=1)
        mask = self.mask(T)
        scores = torch.baddbmm(mask, q.reshape(B * heads, T, hd), k.reshape(B * heads, T, hd).transpose(1, 2),
                               alpha=1 / math.sqrt(hd)).view(B, heads, T, T)
        # softmax over the keys and the head's sink logit, which takes its share of the weight and passes no value
        sink = bf16(self.sinks, qat).view(1, heads, 1)
        lse = torch.logaddexp(torch.logsumexp(scores, dim=-1), sink)
        w = torch.exp(scores - lse[..., None])
        o = torch.matmul(w, v).transpose(1, 2).reshape(B, T, c.q_dim)
        return x + F.linear(o, bf16(self.out.weight, qat), bf16(self.out.bias, qat))

    def mask(self, T):
        """Additive mask: -inf on keys after the query and, on sliding-window layers, `window` or more positions before it."""
        pos = torch.arange(T)
        masked = pos[None, :] > pos[:, None]
        if self.window:
            masked = masked | (pos[:, None] - pos[None, :] >= self.window)
        return torch.zeros(T, T).masked_fill(masked, float("-inf"))


def swiglu(h, limit, alpha=1.702):
    gate, linear = h[..., ::2].clamp(max=limit), h[..., 1::2].clamp(-limit, limit)
    return gate * torch.sigmoid(alpha * gate) * (linear + 1)


class MoE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        E, H, I = c.num_experts, c.hidden_size, c.intermediate_size
        self.norm = RMSNorm(c)
        self.gate = nn.Linear(H, E)
        self.mlp1_weight = nn.Parameter(torch.randn(E, 2 * I, H) / math.sqrt(H))
        self.mlp1_bias = nn.Parameter(torch.zeros(E, 2 * I))
        self.mlp2_weight = nn.Parameter(torch.randn(E, H, I) / math.sqrt(I) / math.sqrt(2 * c.num_hidden_layers))
        self.mlp2_bias = nn.Parameter(torch.zeros(E, H))

    def forward(self, x, qat):
        c = self.c
        shape = x.shape
        t = self.norm(x, qat).reshape(-1, c.hidden_size)
        g = F.linear(t, bf16(self.gate.weight, qat), bf16(self.gate.bias, qat))
        top = torch.topk(g, c.experts_per_token, dim=-1, sorted=True)
        weights = torch.softmax(top.values, dim=-1)
        w1 = mxfp4.fake_quant(self.mlp1_weight) if qat else self.mlp1_weight
        w2 = mxfp4.fake_quant(self.mlp2_weight) if qat else self.mlp2_weight
        b1, b2 = bf16(self.mlp1_bias, qat), bf16(self.mlp2_bias, qat)
        out = torch.zeros_like(t)
        for e in range(c.num_experts):  # each expert runs on the tokens routed to it
            rows, slot = torch.nonzero(top.indices == e, as_tuple=True)
            if rows.numel() == 0:
                continue
            h = swiglu(F.linear(t[rows], w1[e], b1[e]), c.swiglu_limit)
            y = F.linear(h, w2[e], b2[e])
            out.index_add_(0, rows, y * weights[rows, slot, None])
        return x + out.view(shape)


class Transformer(nn.Module):
    def __init__(self, c, vocab):
        super().__init__()
        self.c = c
        self.embedding = nn.Embedding(vocab, c.hidden_size)
        self.attn = nn.ModuleList(Attention(c, l) for l in range(c.num_hidden_layers))
        self.mlp = nn.ModuleList(MoE(c) for _ in range(c.num_hidden_layers))
        self.norm = RMSNorm(c)
        self.unembedding = nn.Linear(c.hidden_size, vocab, bias=False)
        for m in self.attn:
            nn.init.normal_(m.qkv.weight, std=1 / math.sqrt(c.hidden_size))
            nn.init.zeros_(m.qkv.bias)
            nn.init.normal_(m.out.weight, std=1 / math.sqrt(c.q_dim) / math.sqrt(2 * c.num_hidden_layers))
            nn.init.zeros_(m.out.bias)
        for m in self.mlp:
            nn.init.normal_(m.gate.weight, std=1 / math.sqrt(c.hidden_size))
            nn.init.zeros_(m.gate.bias)
        nn.init.normal_(self.embedding.weight, std=1.0)
        nn.init.normal_(self.unembedding.weight, std=1 / math.sqrt(c.hidden_size))

    def hidden(self, tokens, qat=False):
        """The final normed hidden state of every position; tokens [B, T] of the compact vocabulary, each row from position 0."""
        T = tokens.shape[1]
        cos, sin = rope_cos_sin(self.c, torch.arange(T))
        x = bf16(self.embedding.weight, qat)[tokens]
        for attn, mlp in zip(self.attn, self.mlp):
            x = mlp(attn(x, cos, sin, qat), qat)
        return self.norm(x, qat)

    def logits(self, h, qat=False):
        return F.linear(h, bf16(self.unembedding.weight, qat))
