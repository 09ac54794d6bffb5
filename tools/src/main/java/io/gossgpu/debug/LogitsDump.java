package io.gossgpu.debug;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.forward.Executor;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the logits of every position of a token sequence (one prefill) for comparison with other
 * engines: {@code DIR/logits.f32} (little-endian float32, positions × vocab, row-major) and
 * {@code DIR/logits.json} ({@code shape}, {@code tokens}, {@code backend}, {@code device}, and per position
 * the top 5 {@code {id, logit}}, highest first, ties to the lower id).
 */
public final class LogitsDump {
    private LogitsDump() {}

    /** Loads {@code weights} on {@code backend} for the occasion, then {@link #write(Path, Backend, LoadedWeights, int[])}. */
    public static float[] write(Path dir, Backend backend, io.gossgpu.model.ModelWeights weights, int[] tokens) {
        try (LoadedWeights w = backend.loadWeights(weights)) {
            return write(dir, backend, w, tokens);
        }
    }

    /** Runs {@code tokens} through {@code backend} and writes both files; returns the logits. */
    public static float[] write(Path dir, Backend backend, LoadedWeights weights, int[] tokens) {
        if (tokens.length == 0) throw new GossException("logits dump needs at least one token");
        float[] logits;
        try (Executor ex = new Executor(backend, weights);
                KvCache cache = backend.createKvCache(new KvCacheSpec(weights.config(), tokens.length))) {
            logits = ex.forward(tokens, 0, cache, Executor.Output.ALL_LOGITS).logits();
        }
        int vocab = weights.config().vocabSize();
        try {
            Files.createDirectories(dir);
            try (OutputStream out = Files.newOutputStream(dir.resolve("logits.f32"))) {
                ByteBuffer buf = ByteBuffer.allocate(vocab * 4).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < tokens.length; i++) {
                    buf.clear();
                    for (int v = 0; v < vocab; v++) buf.putFloat(logits[i * vocab + v]);
                    out.write(buf.array(), 0, buf.position());
                }
            }
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("shape", List.of(tokens.length, vocab));
            json.put("dtype", "float32-le");
            json.put("tokens", tokens);
            json.put("backend", backend.name());
            json.put("device", backend.deviceDescription());
            List<Object> top = new ArrayList<>();
            for (int i = 0; i < tokens.length; i++) {
                List<Object> row = new ArrayList<>();
                for (int id : topIds(logits, i * vocab, vocab, 5)) {
                    Map<String, Object> entry =
                            new LinkedHashMap<>(); // id first, in every run (Map.of's order is not fixed)
                    entry.put("id", id);
                    entry.put("logit", logits[i * vocab + id]);
                    row.add(entry);
                }
                top.add(row);
            }
            json.put("top5", top);
            new ObjectMapper()
                    .enable(SerializationFeature.INDENT_OUTPUT)
                    .writeValue(dir.resolve("logits.json").toFile(), json);
        } catch (IOException e) {
            throw new GossException("cannot write logits dump to " + dir + ": " + e.getMessage(), e);
        }
        return logits;
    }

    /** The {@code k} largest of {@code a[off .. off+n)}, descending, ties to the lower index. */
    static int[] topIds(float[] a, int off, int n, int k) {
        k = Math.min(k, n);
        int[] ids = new int[k];
        boolean[] taken = new boolean[n];
        for (int j = 0; j < k; j++) {
            int best = -1;
            for (int i = 0; i < n; i++) if (!taken[i] && (best < 0 || a[off + i] > a[off + best])) best = i;
            taken[best] = true;
            ids[j] = best;
        }
        return ids;
    }
}
