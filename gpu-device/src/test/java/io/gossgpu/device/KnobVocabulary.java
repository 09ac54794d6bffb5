package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.Knob;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A backend's knob table speaks the kernels' vocabulary ({@link KernelVocabularyTest}): every knob is
 * {@code GOSS_<API>_<OP>_<KNOB>} where OP is an op's file name or one of its kernels' names (upper case) on any API,
 * a token threshold is {@code <OP>_PREFILL_MIN_T}, a tile's size names its dimension ({@code <OP>_TILE_T} tokens,
 * {@code <OP>_TILE_R} rows: one name on every API for tokens per tile), and no knob has a name retired for the
 * vocabulary. Each backend's
 * provider test calls {@link #assertSpeaks} with its table.
 */
public final class KnobVocabulary {
    /** Knob groups that are not one op, each with why. */
    public static final Map<String, String> NOT_AN_OP =
            Map.of("ELEMENTWISE", "CUDA: one block size for embed, kv_store, kv_round and add");
    /** Words retired for the one vocabulary: dense, not linear; attention, not sdpa. */
    static final Set<String> RETIRED = Set.of("LINEAR", "PREFILL", "SDPA");

    private KnobVocabulary() {}

    /** Every knob's op word, the kernel names and op files of all three folders (upper case). */
    static Set<String> words() {
        Set<String> out = new TreeSet<>();
        for (String op : KernelVocabularyTest.OPS) out.add(op.toUpperCase(Locale.ROOT));
        KernelVocabularyTest.vocabulary(KernelVocabularyTest.OPS)
                .keySet()
                .forEach(k -> out.add(k.toUpperCase(Locale.ROOT)));
        return out;
    }

    /** The lines of {@code knobs} that break the vocabulary (empty: none). */
    public static List<String> breaks(List<Knob> knobs) {
        Set<String> words = words();
        List<String> out = new ArrayList<>();
        for (Knob k : knobs) {
            if (k.kernel() == null) continue; // a setting of the whole backend (GOSS_CUDA_GRAPH)
            String op = k.kernel().toUpperCase(Locale.ROOT);
            if (RETIRED.contains(op)) out.add(k.envName() + ": " + op + " is a retired word");
            else if (!words.contains(op) && !NOT_AN_OP.containsKey(op))
                out.add(k.envName() + ": " + op + " is no op or kernel of kernels/");
            if (k.name().toUpperCase(Locale.ROOT).endsWith("MIN_T")
                    && !k.name().equalsIgnoreCase("PREFILL_MIN_T")
                    && !NOT_AN_OP.containsKey(op)) out.add(k.envName() + ": a token threshold is <OP>_PREFILL_MIN_T");
            if (k.name().equalsIgnoreCase("TILE"))
                out.add(k.envName() + ": a tile's size is <OP>_TILE_T (tokens) or <OP>_TILE_R (rows)");
        }
        return out;
    }

    /** Fails with every knob of {@code knobs} that breaks the vocabulary. */
    public static void assertSpeaks(List<Knob> knobs) {
        assertEquals(List.of(), breaks(knobs));
    }
}
