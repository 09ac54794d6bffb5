package io.gossgpu.model;

import io.gossgpu.quant.Mxfp4;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;

/**
 * The conversions a checkpoint's tensors go through at load so that every backend can run them, none of which
 * needs a new weight format in a backend: dense ggml types decoded ({@link DenseDecode}), Ollama's first MXFP4
 * layout repacked into ggml's, and float MoE experts (BF16 fine-tunes) quantized to MXFP4 or kept as BF16
 * ({@link ExpertQuantizer}). Results live in the checkpoint's arena and are made once per tensor; progress is
 * reported in bytes of source tensors against the total of those that will need it.
 */
public final class Conversions {
    private final Arena arena;
    private final LoadOptions options;
    private final long total;
    private final Map<String, TensorData> done = new HashMap<>();
    /** "Q4_K → F16" and the like, with tensor counts, in the order first met. */
    private final Map<String, Integer> kinds = new LinkedHashMap<>();

    private final ExpertQuantizer experts = new ExpertQuantizer();
    private long progressed;

    /**
     * @param tensors every tensor of the checkpoint, to size the progress total
     * @param transposedExperts whether this layout stores float experts transposed (Hugging Face's)
     */
    public Conversions(Arena arena, LoadOptions options, Collection<TensorData> tensors, boolean transposedExperts) {
        this.arena = arena;
        this.options = options;
        long sum = 0;
        for (TensorData t : tensors)
            if (needsDecode(t.dtype()) || isFloatExperts(t) && (!options.floatExperts() || transposedExperts))
                sum += t.bytes().byteSize();
        this.total = sum;
    }

    /** True for a type no backend runs as it is but this class can decode. */
    public static boolean needsDecode(DType d) {
        return BlockDecoder.of(d) != null;
    }

    private static boolean isFloatExperts(TensorData t) {
        return t.rank() == 3 && (t.dtype() == DType.BF16 || t.dtype() == DType.F16 || t.dtype() == DType.F32);
    }

    /** {@code t} itself when the backends read its type, else its decoded (or repacked) copy. */
    public synchronized TensorData readable(TensorData t) {
        if (!needsDecode(t.dtype())) return t;
        TensorData c = done.get(t.name());
        if (c != null) return c;
        c = t.dtype() == DType.MXFP4_OLLAMA ? repackOllama(t) : DenseDecode.convert(t, options.exactDense(), arena);
        return finish(t, c, "");
    }

    /**
     * MoE expert weights {@code t}: MXFP4 as it is (Ollama's layout repacked); float experts quantized to MXFP4, or,
     * with {@link LoadOptions#floatExperts()}, kept as floats (a BF16 copy when they must be transposed).
     *
     * @param transposed {@code t} is {@code [E, in, out]} (Hugging Face) rather than {@code [E, out, in]}
     */
    public synchronized TensorData experts(TensorData t, boolean transposed) {
        if (!isFloatExperts(t)) return readable(t);
        if (options.floatExperts() && !transposed) return t;
        TensorData c = done.get(t.name());
        if (c != null) return c;
        if (t.dim(transposed ? 1 : 2) % Mxfp4.BLOCK != 0)
            throw new ModelFormatException(
                    t.file(),
                    t.name(),
                    "expert rows of " + t.dim(transposed ? 1 : 2) + " values are not whole 32-value MXFP4 blocks");
        c = experts.convert(t, transposed, !options.floatExperts(), arena);
        return finish(t, c, transposed ? " (transposed)" : "");
    }

    private TensorData finish(TensorData from, TensorData to, String how) {
        done.put(from.name(), to);
        kinds.merge(from.dtype() + " → " + to.dtype() + how, 1, Integer::sum);
        progressed += from.bytes().byteSize();
        options.progress().converted(progressed, total);
        return to;
    }

    /** One line per kind of conversion made so far ("12 Q4_K → F16"), then the experts' quantization error. */
    public synchronized List<String> summary() {
        List<String> out = new ArrayList<>();
        kinds.forEach((k, n) -> out.add(n + " " + k
                + (k.startsWith("Q4_0 →") || k.startsWith("Q5_0 →") || k.startsWith("IQ4_NL →") ? " (exact)" : "")));
        String note = quantizationNote();
        if (note != null) out.add(note);
        return out;
    }

    /** The error quantizing float experts to MXFP4 added, or null when none was quantized. */
    public synchronized String quantizationNote() {
        ExpertQuantizer.Error e = experts.error();
        if (e.squaredValues() == 0) return null;
        return String.format(
                "float experts quantized to MXFP4 at load: relative RMS error %.2f%% against the file's weights "
                        + "(keep them as floats with --float-experts, cpu and reference backends)",
                100 * e.relativeRms());
    }

    private TensorData repackOllama(TensorData t) {
        long blocks = t.bytes().byteSize() / Mxfp4.GGML_BLOCK_BYTES;
        MemorySegment out = arena.allocate(t.bytes().byteSize(), 64);
        long perTask = 1 << 16;
        LongStream.range(0, (blocks + perTask - 1) / perTask).parallel().forEach(task -> {
            long first = task * perTask, n = Math.min(perTask, blocks - first);
            Mxfp4.ollamaToGgml(t.bytes(), first * Mxfp4.GGML_BLOCK_BYTES, out, first * Mxfp4.GGML_BLOCK_BYTES, n);
        });
        return new TensorData(t.name(), DType.MXFP4, t.shape(), out, t.file());
    }
}
