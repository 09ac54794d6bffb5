"""MXFP4 as gpt-oss stores its experts: blocks of 32 values along a row share a power-of-two scale (E8M0), each
value is an FP4 (E2M1) code. The block's scale is 2^e with e = floor(log2 max|x|) - 2 or e + 1, whichever gives the
smaller squared error; values round to the nearest FP4 magnitude (ties to the even code), saturating at 6. This is
the rule of goss-gpu's Mxfp4.quantizeBlock, so the exported codes are the ones the engine's own quantizer would pick.
"""
import torch

FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
# Upper bounds of each magnitude's interval; a bound belongs to the interval whose code is even (ties to even).
_BOUNDS = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])
_TIE_TO_UPPER = torch.tensor([False, True, False, True, False, True, False])  # at the bound: 0.75 -> code 2, 1.75 -> 4, 3.5 -> 6


def _codes(m):
    """Magnitude codes 0..7 of |x| / scale."""
    c = torch.bucketize(m, _BOUNDS, right=False)  # bounds[c-1] < m <= bounds[c]
    tie_up = torch.isin(m, _BOUNDS) & _TIE_TO_UPPER[c.clamp(max=6)]
    return torch.where(tie_up, c + 1, c)


def _quantize(blocks, e):
    scale = torch.pow(2.0, e.float())[..., None]
    codes = _codes((blocks / scale).abs())
    return codes, FP4[codes] * torch.sign(blocks) * scale


def quantize(w):
    """w [..., n] (n a multiple of 32) -> (magnitude codes, sign bits, exponents e, dequantized values)."""
    blocks = w.detach().float().reshape(*w.shape[:-1], w.shape[-1] // 32, 32)
    amax = blocks.abs().amax(-1)
    e = torch.floor(torch.log2(amax.clamp(min=2.0 ** -120))) - 2
    e = e.clamp(-127, 127)
    c_lo, q_lo = _quantize(blocks, e)
    c_hi, q_hi = _quantize(blocks, (e + 1).clamp(max=127))
    hi = ((q_hi - blocks) ** 2).sum(-1) < ((q_lo - blocks) ** 2).sum(-1)
    codes = torch.where(hi[..., None], c_hi, c_lo)
    values = torch.where(hi[..., None], q_hi, q_lo)
    e = torch.where(hi, e + 1, e)
    zero = amax == 0
    e = torch.where(zero, torch.zeros_like(e), e)
    sign = torch.signbit(blocks)
    return codes, sign, e.to(torch.int64), values.reshape(w.shape)


def fake_quant(w):
    """w as MXFP4 stores it; the gradient passes straight through."""
    return w + (quantize(w)[3] - w).detach()


def pack(w):
    """OpenAI's layout: (blocks uint8 [..., n/32, 16], low nibble the even element; scales uint8 [..., n/32] = e + 127)."""
    codes, sign, e, _ = quantize(w)
    nibbles = (codes | (sign.to(torch.int64) << 3)).to(torch.uint8)
    blocks = nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)
    return blocks.contiguous(), (e + 127).to(torch.uint8).contiguous()


def unpack(blocks, scales):
    """The values of packed MXFP4 (inverse of pack), as float32 [..., n]."""
    lo, hi = (blocks & 0xF).long(), (blocks >> 4).long()
    nib = torch.stack([lo, hi], dim=-1).reshape(*blocks.shape[:-1], 32)
    v = FP4[nib & 7] * torch.where(nib >= 8, -1.0, 1.0)
    v = v * torch.pow(2.0, scales.float() - 127)[..., None]
    return v.reshape(*blocks.shape[:-2], blocks.shape[-2] * 32)
