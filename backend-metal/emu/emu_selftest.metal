// Kernels that test the emulated Metal device itself (barriers, simdgroup functions, threadgroup memory,
// error reporting); compiled into libgoss_metal_emu.so next to backend-metal/kernels and run by backend-metal's
// MetalEmulatorTest. Same macro convention as backend-metal/kernels/goss.metal (which defines it for real Metal).

// out[tid] = in[n - 1 - tid] through a static threadgroup array: only right if the barrier really waits.
KERNEL(emu_test_reverse)(BUF(device const float *, in, 0), BUF(device float *, out, 1), TID(tid), TG_SIZE(nt)) {
    TG_ARRAY(float, tmp, 1024);
    tmp[tid] = in[tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = tmp[nt - 1 - tid];
}

// The same through dynamic threadgroup memory ([[threadgroup(0)]]), twice in a row.
KERNEL(emu_test_reverse_dynamic)(BUF(device const float *, in, 0), BUF(device float *, out, 1), TG_BUF(float, tmp, 0),
                                 TID(tid), TG_SIZE(nt), TG_POS(g)) {
    tmp[tid] = in[g * nt + tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = tmp[nt - 1 - tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    tmp[tid] = r * 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[g * nt + tid] = tmp[nt - 1 - tid];
}

// Per thread: simd_sum(lane), simd_max(lane), simd_min(lane), simd_shuffle_down(lane, 3), sum of ints.
KERNEL(emu_test_simd)(BUF(device float *, out, 0), TID(tid), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    float l = float(lane);
    out[tid * 6 + 0] = simd_sum(l);
    out[tid * 6 + 1] = simd_max(l);
    out[tid * 6 + 2] = simd_min(l + 1.0f);
    out[tid * 6 + 3] = simd_shuffle_down(l, ushort(3));
    out[tid * 6 + 4] = float(simd_sum(int(sg)));
    out[tid * 6 + 5] = float(simd_shuffle_down(uint(lane) * 10u, ushort(1)));
}

// Half the threadgroup returns before the barrier: a GPU hang; the emulator must report it.
KERNEL(emu_test_divergent_barrier)(BUF(device float *, out, 0), TID(tid)) {
    if (tid < 16) return;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = 1.0f;
}

// Half a simdgroup calls simd_sum. Metal would sum over the active lanes; goss kernels never rely on that
// (every simdgroup function is reached by whole simdgroups), so the emulator reports it as an error.
KERNEL(emu_test_divergent_simd)(BUF(device float *, out, 0), SIMD_LANE(lane)) {
    if (lane < 8) out[lane] = simd_sum(1.0f);
}

// Reads [[buffer(1)]]; the test binds only buffer 0: the dispatch must fail, not crash.
KERNEL(emu_test_unbound)(BUF(device float *, out, 0), BUF(device const float *, in, 1), TID(tid)) {
    out[tid] = in[tid];
}

// A missing barrier, on purpose: thread t publishes in[t] and reads its left neighbour's slot with no
// threadgroup_barrier in between. Right only when thread t-1 runs first (the forward order); GOSS_EMU_ORDER=reverse
// must expose it, and GOSS_EMU_POISON=1 turns the unwritten slot into NaN.
KERNEL(emu_test_missing_barrier)(BUF(device const float *, in, 0), BUF(device float *, out, 1), TG_BUF(float, tmp, 0),
                                 TID(tid)) {
    tmp[tid] = in[tid];
    out[tid] = tid > 0 ? tmp[tid - 1] : in[0];
}

// The last thread reads slot nt of a TG_ARRAY, which no thread of the threadgroup writes: NaN under
// GOSS_EMU_POISON=1, in every threadgroup (not the value the previous threadgroup left there).
KERNEL(emu_test_unwritten_threadgroup)(BUF(device float *, out, 0), TID(tid), TG_SIZE(nt), TG_POS(g)) {
    TG_ARRAY(float, tmp, 1025);
    tmp[tid] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[g * nt + tid] = tmp[tid + 1];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    tmp[nt] = 0.0f; // what the next threadgroup reads without poisoning
}
