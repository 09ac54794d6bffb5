package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.cuda.CudaWeights.Dense;
import io.gossgpu.cuda.CudaWeights.Mx;
import io.gossgpu.device.BufferRouting;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.ScratchArena;
import io.gossgpu.model.ModelConfig;

import java.util.List;

import static io.gossgpu.device.Grid.ceilDiv;
import static io.gossgpu.cuda.CudaLauncher.checkBlock;

/**
 * The router's top-k (router.cu's topk_softmax) and the MXFP4 mixture of experts (moe.cu): per (token, slot) for decode
 * (moe_gate_up and moe_down), and batched by expert for batches of at least
 * {@code GOSS_CUDA_MOE_TILED_MIN_T} tokens (moe_sort, moe_gate_up_tiled, moe_down_tiled, moe_combine: the slots sorted by expert on the device, gate/up +
 * SwiGLU and down per expert and tile of 32 slots with each MXFP4 row decoded once per tile, then the K slot outputs
 * of each token summed in slot order). Expert ids stay on the device between the router and the MoE.
 */
final class MoeLauncher {
    /** topk_softmax's scalars (router.cu). */
    record TopKParams(int tokens, int experts, int k) implements KernelParams {}
    /** The scalars of moe.cu's expert kernels (the tiled ones do not read tokens, the down ones not limit, only moe_down slotsPerPass). */
    record MoeParams(int ggml, int tokens, int k, int hidden, int inter, float limit, int slotsPerPass) implements KernelParams {}
    /** moe_sort's scalars. */
    record MoeSortParams(int slots, int experts) implements KernelParams {}
    /** moe_combine's scalars. */
    record MoeCombineParams(int tokens, int k, int hidden) implements KernelParams {}
    /** Floats of one activation row the decode kernels' shared memory holds (48 KiB, less their 64-byte FP4 table). */
    static final int MAX_ROW = 12000;

    static final CudaEntry TOPK = new CudaEntry("router", "topk_softmax", 3, TopKParams.class),
            GATE_UP = new CudaEntry("moe", "moe_gate_up", 9, MoeParams.class),
            DOWN = new CudaEntry("moe", "moe_down", 7, MoeParams.class),
            SORT = new CudaEntry("moe", "moe_sort", 5, MoeSortParams.class),
            GATE_UP_TILED = new CudaEntry("moe", "moe_gate_up_tiled", 12, MoeParams.class),
            DOWN_TILED = new CudaEntry("moe", "moe_down_tiled", 9, MoeParams.class),
            COMBINE = new CudaEntry("moe", "moe_combine", 3, MoeCombineParams.class);
    static final List<CudaEntry> ENTRIES = List.of(TOPK, GATE_UP, DOWN, SORT, GATE_UP_TILED, DOWN_TILED, COMBINE);
    /** Slots per work tile of moe.cu's tiled kernels (MOE_TM). */
    static final int TILE = 32;

    private final CudaLauncher launch;
    private final ScratchArena<CudaBuffer> scratch;
    private final DenseLauncher dense;
    private final CudaKernel kTopK, kGateUp, kDown, kSort, kGateUpTiled, kDownTiled, kCombine;
    final int moeBlock, elementwiseBlock, tiledMinT;
    /** MoE calls that took the kernels batched by expert (counter {@code moe_tiled_calls}). */
    long tiledCalls;

    MoeLauncher(CudaLauncher launch, ScratchArena<CudaBuffer> scratch, DenseLauncher dense, BackendOptions o) {
        this.launch = launch;
        this.scratch = scratch;
        this.dense = dense;
        moeBlock = CudaKnobs.MOE.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        tiledMinT = CudaKnobs.MOE_TILED_MIN_T.value(o);
        kTopK = launch.kernel(TOPK.name());
        kGateUp = launch.kernel(GATE_UP.name());
        kDown = launch.kernel(DOWN.name());
        kSort = launch.kernel(SORT.name());
        kGateUpTiled = launch.kernel(GATE_UP_TILED.name());
        kDownTiled = launch.kernel(DOWN_TILED.name());
        kCombine = launch.kernel(COMBINE.name());
        checkBlock(kGateUp, CudaKnobs.MOE, moeBlock);
        checkBlock(kDown, CudaKnobs.MOE, moeBlock);
        checkBlock(kCombine, CudaKnobs.ELEMENTWISE, elementwiseBlock);
        for (CudaKernel k : new CudaKernel[]{kGateUpTiled, kDownTiled})
            if (k.maxThreadsPerBlock() < AttentionLauncher.TILED_THREADS)
                throw new GossException("kernel " + k.name() + " cannot run " + AttentionLauncher.TILED_THREADS + " threads per block on this device");
    }

    /** Router logits ({@code router}, {@code bias}) of {@code T} rows at {@code x}, then each row's top-k and their softmax. */
    void router(Dense router, long bias, long x, int T, int experts, BufferRouting<CudaBuffer> r) {
        CudaBuffer logits = scratch.ensure("router logits", 4L * T * experts);
        dense.matmul(router, bias, x, T, logits.address());
        launch.launch(kTopK).buffer(logits.address()).buffer(r.ids().address()).buffer(r.weights().address())
                .run(new TopKParams(T, experts, r.k()), Grid.of(ceilDiv(T, 2), 64)); // a warp per token
    }

    void moe(ModelConfig c, DeviceWeights.Layer<Long, Dense, Mx> l, long x, int T, BufferRouting<CudaBuffer> r, long out) {
        int k = r.k(), h = c.hiddenSize(), inter = c.intermediateSize();
        if (h > MAX_ROW || inter > MAX_ROW) // the decode kernels hold an activation row in 48 KiB of shared memory, beside their table
            throw new GossException("moe: hidden " + h + " / intermediate " + inter + " above " + MAX_ROW + " is not supported by the cuda kernels");
        CudaBuffer hidden = scratch.ensure("MoE activations", 4L * T * k * inter);
        Mx g = l.gate(), u = l.up(), d = l.down();
        int slots = T * k, experts = c.numExperts();
        int maxTiles = ceilDiv(slots, TILE) + Math.min(experts, slots);
        if (T >= tiledMinT && maxTiles <= 65535) {
            tiled(c, l, x, T, r, hidden, out, maxTiles);
            return;
        }
        // one warp per weight row; moe_down holds as many slots' activations as 48 KiB of shared memory takes
        int warps = moeBlock / 32, slotsPerPass = Math.min(k, MAX_ROW / inter);
        launch.launch(kGateUp).buffer(g.codes().address()).buffer(g.scalesPtr()).buffer(u.codes().address()).buffer(u.scalesPtr())
                        .buffer(l.gateBias()).buffer(l.upBias()).buffer(x).buffer(r.ids().address()).buffer(hidden.address())
                        .local(4 * h).run(new MoeParams(g.ggml() ? 1 : 0, T, k, h, inter, c.swigluLimit(), 0), Grid.of(Math.min(T * k, 65535), ceilDiv(inter, warps), moeBlock));
        launch.launch(kDown).buffer(d.codes().address()).buffer(d.scalesPtr()).buffer(l.downBias()).buffer(hidden.address()).buffer(r.ids().address()).buffer(r.weights().address())
                        .buffer(out).local(4 * inter * slotsPerPass).run(new MoeParams(d.ggml() ? 1 : 0, T, k, h, inter, c.swigluLimit(), slotsPerPass), Grid.of(Math.min(T, 65535), ceilDiv(h, warps), moeBlock));
    }

    /** The MoE batched by expert (moe_sort, moe_gate_up_tiled, moe_down_tiled, moe_combine). */
    private void tiled(ModelConfig c, DeviceWeights.Layer<Long, Dense, Mx> l, long x, int T, BufferRouting<CudaBuffer> r, CudaBuffer hidden,
                       long out, int maxTiles) {
        int k = r.k(), h = c.hiddenSize(), inter = c.intermediateSize(), experts = c.numExperts(), slots = T * k;
        long offsets = 0, order = offsets + 4L * (experts + 1), tiles = order + 4L * slots, ntiles = tiles + 8L * maxTiles;
        long base = scratch.ensure("MoE expert groups", ntiles + 4).address();
        CudaBuffer y = scratch.ensure("MoE expert outputs", 4L * slots * h);
        Mx g = l.gate(), u = l.up(), d = l.down();
        tiledCalls++;
        launch.launch(kSort).buffer(r.ids().address()).buffer(base + offsets).buffer(base + order).buffer(base + tiles).buffer(base + ntiles)
                        .run(new MoeSortParams(slots, experts), Grid.of(1, Math.min(1024, ceilDiv(experts, 32) * 32)));
        launch.launch(kGateUpTiled).buffer(g.codes().address()).buffer(g.scalesPtr()).buffer(u.codes().address()).buffer(u.scalesPtr())
                        .buffer(l.gateBias()).buffer(l.upBias()).buffer(x).buffer(base + offsets).buffer(base + order)
                        .buffer(base + tiles).buffer(base + ntiles).buffer(hidden.address())
                        .run(new MoeParams(g.ggml() ? 1 : 0, T, k, h, inter, c.swigluLimit(), 0), Grid.of(ceilDiv(inter, 64), maxTiles, AttentionLauncher.TILED_THREADS));
        launch.launch(kDownTiled).buffer(d.codes().address()).buffer(d.scalesPtr()).buffer(l.downBias()).buffer(hidden.address())
                        .buffer(base + offsets).buffer(base + order).buffer(base + tiles).buffer(base + ntiles).buffer(y.address())
                        .run(new MoeParams(d.ggml() ? 1 : 0, T, k, h, inter, c.swigluLimit(), 0), Grid.of(ceilDiv(h, 128), maxTiles, AttentionLauncher.TILED_THREADS));
        launch.launch(kCombine).buffer(y.address()).buffer(r.weights().address()).buffer(out).run(new MoeCombineParams(T, k, h), Grid.of(Math.min(T, 65535), elementwiseBlock));
    }
}
