// Element-wise add of two float vectors (the residual add, MetalBackend.add).
//
// Reference: out[i] = a[i] + b[i]   for 0 <= i < n

#include "common.h"

// ---- elementwise add ---------------------------------------------------------------------------------
struct AddParams { long n; };

KERNEL(add)(BUF(device const float *, a, 0), BUF(device const float *, b, 1), BUF(device float *, out, 2),
            PARAMS(AddParams, p, 3), GRID_POS(i)) {
    if (i < p.n) out[i] = a[i] + b[i];
}
