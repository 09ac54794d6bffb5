// Embedding lookup (MetalBackend.embed).
//
// Reference: out[t, c] = W[tokens[t], c], W in F32 or BF16 (load_w, common.h).

#include "common.h"

// ---- embedding ------------------------------------------------------------------------------------
struct EmbedParams { uint tokens; uint cols; uint fmt; }; // one threadgroup per token: tokens unread

KERNEL(embed)(BUF(device const uchar *, table, 0), BUF(device const int *, tokens, 1), BUF(device float *, out, 2),
              PARAMS(EmbedParams, p, 3), TG_POS(row), TID(tid), TG_SIZE(nt)) {
    uint tok = uint(tokens[row]);
    for (uint c = tid; c < p.cols; c += nt) out[row * p.cols + c] = load_w(table, p.fmt, tok * p.cols + c);
}
