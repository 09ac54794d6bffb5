package io.gossgpu.backend;

import io.gossgpu.GossException;
import io.gossgpu.model.ModelConfig;

/**
 * The size of a KV cache for {@code contextLength} positions, known before anything is allocated.
 * Sliding-window layers keep a ring of {@code S = min(ctx, W + R)} slots (W = window, R =
 * {@code swaRollback}, the rollback slack); the others {@code ctx}. Position {@code p} lives in slot
 * {@code p % slots}. Bytes = Σ_layers 2 (K and V) × slots × {@link KvType#rowBytes}(kv_dim): 4 bytes a number in F32,
 * 2 in F16 and BF16, 34/32 in Q8_0.
 *
 * <p>A window of W slots is enough even for a batch of T &gt; 1 new tokens because the attention op
 * reads the batch's own keys from its inputs and only stores them after attending (see
 * {@link Backend#attention}); the oldest position a query at {@code p ≥ start} needs from the cache is
 * {@code p − W + 1 ≥ start − W + 1}, and the ring still holds {@code start − W .. start − 1}.
 *
 * <p><b>Rolling back.</b> A conversation that resumes at {@code P} below the positions already stored
 * (a chat whose re-rendered history drops the last reply's reasoning) keeps positions {@code 0..P−1}
 * and overwrites the rest. Full layers can always do that. A ring cannot always: let {@code N} be one
 * past the highest position stored since the cache was last started from 0 ({@code written}). Then
 * every position {@code j} of the current history with {@code j ≥ N − S} is still in its slot. Proof:
 * the slot of {@code j} holds the last position stored there, and the positions sharing it are
 * {@code j ± kS}. One above ({@code ≥ j + S ≥ N}) was never stored. One below ({@code ≤ j − S}) stored
 * after {@code j} needs a rollback to at most {@code j − S} after {@code j}'s store, and since {@code j}
 * is in the current history it was stored again after that rollback (positions are stored in order).
 * Queries at {@code p ≥ P} read cached positions {@code max(0, p − W + 1) .. P − 1}, the oldest being
 * {@code max(0, P − W + 1)}; so resuming at {@code P} is exact when
 * <pre>   P = 0  or  max(0, P − W + 1) ≥ N − S          ({@link #canResume})</pre>
 * With {@code S = W + R < ctx} and {@code P ≥ W − 1} that is a rollback depth {@code N − P ≤ R + 1}: the
 * "+1" because position {@code P} itself is recomputed, so {@code R = 0} (today's ring of W) still allows
 * stepping back one token. With {@code S = ctx} nothing is ever overwritten and any depth is allowed.
 *
 * <p>Cost of the default {@link #DEFAULT_SWA_ROLLBACK} (R = 2048) on gpt-oss-20b (24 layers, 12 sliding,
 * kv_dim 512, F32): 2 × 512 × 4 B = 4 KiB per position per layer, so 12 × 2048 × 4 KiB = 96 MiB more
 * (at 8192 context: 390 MiB → 486 MiB); 144 MiB on gpt-oss-120b (18 sliding layers). A reply with
 * reasoning is typically a few hundred to a couple of thousand tokens; a deeper rollback falls back to
 * prefilling the whole conversation again.
 *
 * @param swaRollback extra ring slots R on sliding layers (0: exactly the window, no rollback beyond one token)
 * @param type        how each number is stored ({@link KvType}); the engine's default is {@link KvType#DEFAULT}
 */
public record KvCacheSpec(ModelConfig config, int contextLength, int swaRollback, KvType type) {
    /** The rollback slack chats and servers use unless told otherwise (see the class comment for its cost). */
    public static final int DEFAULT_SWA_ROLLBACK = 2048;

    public KvCacheSpec {
        if (contextLength <= 0) throw new GossException("context length must be positive, got " + contextLength);
        if (swaRollback < 0) throw new GossException("sliding-window rollback must be >= 0, got " + swaRollback);
        if (type == null) throw new NullPointerException("type");
    }

    /** An F32 cache (the exact path) with {@code swaRollback} slots of rollback slack. */
    public KvCacheSpec(ModelConfig config, int contextLength, int swaRollback) {
        this(config, contextLength, swaRollback, KvType.F32);
    }

    /** An F32 cache without rollback slack (sliding layers keep exactly their window). */
    public KvCacheSpec(ModelConfig config, int contextLength) {
        this(config, contextLength, 0);
    }

    /** This spec with another number type. */
    public KvCacheSpec withType(KvType t) {
        return new KvCacheSpec(config, contextLength, swaRollback, t);
    }

    public int slots(int layer) {
        return config.isSlidingLayer(layer) ? ringSlots() : contextLength;
    }

    /** S: the ring size of every sliding layer. */
    private int ringSlots() {
        return (int) Math.min(contextLength, (long) config.slidingWindow() + swaRollback);
    }

    /**
     * Whether a cache whose highest stored position since it last started from 0 is {@code written − 1} can
     * resume at {@code position} (keep positions {@code 0 .. position − 1}) and give exactly the logits of a
     * fresh cache: the condition proved in the class comment. {@code position} must not exceed {@code written}.
     */
    public boolean canResume(int written, int position) {
        if (position < 0 || position > written) return false;
        if (position == 0 || config.slidingWindow() <= 0) return true;
        return Math.max(0, position - config.slidingWindow() + 1) >= written - ringSlots();
    }

    public long bytes() {
        long total = 0;
        for (int l = 0; l < config.numHiddenLayers(); l++) total += bytesPerPosition() * slots(l);
        return total;
    }

    /** Bytes of one layer's key buffer (its value buffer is the same size): {@code slots(layer)} rows. */
    public long layerBytes(int layer) {
        return type.bytes(slots(layer), config.kvDim());
    }

    /** Bytes one position takes in one layer: its K and V rows of kv_dim numbers in this spec's type. */
    public long bytesPerPosition() {
        return 2 * type.rowBytes(config.kvDim());
    }

    /** e.g. "KV cache for 8192 positions: 243.0 MiB (f16, 24 layers, kv_dim 512, sliding layers keep 2176 positions: window 128 + rollback 2048)". */
    public String describe() {
        String sliding = "";
        if (config.slidingWindow() > 0) {
            sliding = ", sliding layers keep " + ringSlots() + " positions";
            if (swaRollback > 0)
                sliding += ": window " + config.slidingWindow() + " + rollback " + swaRollback
                        + (ringSlots() == contextLength ? ", capped at the context" : "");
        }
        return "KV cache for " + contextLength + " positions: " + humanBytes(bytes()) + " (" + type.flagName() + ", "
                + config.numHiddenLayers()
                + " layers, kv_dim " + config.kvDim() + sliding + ")";
    }

    public static String humanBytes(long b) {
        if (b < 1024) return b + " B";
        if (b < 1024L * 1024) return String.format("%.1f KiB", b / 1024.0);
        if (b < 1024L * 1024 * 1024) return String.format("%.1f MiB", b / (1024.0 * 1024));
        return String.format("%.2f GiB", b / (1024.0 * 1024 * 1024));
    }
}
