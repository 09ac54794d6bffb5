package io.gossgpu.model.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.model.Json;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormatException;
import java.nio.file.Path;

/**
 * Reads a {@link ModelConfig} from a config.json: OpenAI's {@code original/config.json} (keys of the
 * reference's ModelConfig) or Hugging Face's {@code GptOssConfig}. Every missing, mistyped or
 * impossible value is one {@link ModelFormatException} naming the file and the key.
 */
public final class ConfigJson {
    public static final float DEFAULT_RMS_NORM_EPS = 1e-5f;

    private ConfigJson() {}

    /** OpenAI's original/config.json. */
    static ModelConfig original(Path file, JsonNode c) {
        ModelConfig config = new ModelConfig(
                integer(file, c, "num_hidden_layers"),
                integer(file, c, "num_experts"),
                integer(file, c, "experts_per_token"),
                integer(file, c, "vocab_size"),
                integer(file, c, "hidden_size"),
                integer(file, c, "intermediate_size"),
                number(file, c, "swiglu_limit"),
                integer(file, c, "head_dim"),
                integer(file, c, "num_attention_heads"),
                integer(file, c, "num_key_value_heads"),
                integer(file, c, "sliding_window"),
                integer(file, c, "initial_context_length"),
                number(file, c, "rope_theta"),
                number(file, c, "rope_scaling_factor"),
                number(file, c, "rope_ntk_alpha"),
                number(file, c, "rope_ntk_beta"),
                c.has("rms_norm_eps") ? number(file, c, "rms_norm_eps") : DEFAULT_RMS_NORM_EPS);
        return validate(file, config);
    }

    /** Hugging Face's config.json for model_type gpt_oss. */
    static ModelConfig hf(Path file, JsonNode c) {
        JsonNode type = c.get("model_type");
        if (type == null || !type.isTextual() || !type.textValue().equals("gpt_oss"))
            throw new ModelFormatException(
                    file,
                    "model_type is " + (type == null ? "missing" : SafetensorsHeader.safe(type.toString()))
                            + ", expected \"gpt_oss\"");
        int layers = integer(file, c, "num_hidden_layers");
        String perToken = c.has("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";

        float factor = 1f, alpha = 1f, beta = 32f;
        int initialContext = c.has("initial_context_length")
                ? integer(file, c, "initial_context_length")
                : c.has("max_position_embeddings") ? integer(file, c, "max_position_embeddings") : 4096;
        JsonNode rs = c.get("rope_scaling");
        if (rs != null && !rs.isNull()) {
            if (!rs.isObject())
                throw new ModelFormatException(file, "rope_scaling must be an object, got " + Json.kind(rs));
            JsonNode rt = rs.has("rope_type") ? rs.get("rope_type") : rs.get("type");
            if (rt == null || !rt.isTextual() || !rt.textValue().equals("yarn"))
                throw new ModelFormatException(
                        file,
                        "rope_scaling.rope_type is " + (rt == null ? "missing" : SafetensorsHeader.safe(rt.toString()))
                                + ", gpt-oss uses \"yarn\"");
            JsonNode truncate = rs.get("truncate");
            if (truncate != null && truncate.isBoolean() && truncate.booleanValue())
                throw new ModelFormatException(
                        file, "rope_scaling.truncate is true; gpt-oss's YaRN does not truncate its correction range");
            factor = number(file, rs, "rope_scaling.", "factor");
            beta = rs.has("beta_fast") ? number(file, rs, "rope_scaling.", "beta_fast") : 32f;
            alpha = rs.has("beta_slow") ? number(file, rs, "rope_scaling.", "beta_slow") : 1f;
            if (rs.has("original_max_position_embeddings"))
                initialContext = integer(file, rs, "rope_scaling.", "original_max_position_embeddings");
        }
        JsonNode window = c.get("sliding_window");
        int slidingWindow = window == null || window.isNull() ? 0 : integer(file, c, "sliding_window");

        ModelConfig config = new ModelConfig(
                layers,
                integer(file, c, "num_local_experts"),
                integer(file, c, perToken),
                integer(file, c, "vocab_size"),
                integer(file, c, "hidden_size"),
                integer(file, c, "intermediate_size"),
                c.has("swiglu_limit") ? number(file, c, "swiglu_limit") : 7f,
                integer(file, c, "head_dim"),
                integer(file, c, "num_attention_heads"),
                integer(file, c, "num_key_value_heads"),
                slidingWindow,
                initialContext,
                number(file, c, "rope_theta"),
                factor,
                alpha,
                beta,
                c.has("rms_norm_eps") ? number(file, c, "rms_norm_eps") : DEFAULT_RMS_NORM_EPS);
        checkLayerTypes(file, c.get("layer_types"), layers);
        return validate(file, config);
    }

    /** gpt-oss alternates: sliding_attention on even layers (0 first), full_attention on odd ones. */
    private static void checkLayerTypes(Path file, JsonNode types, int layers) {
        if (types == null || types.isNull()) return;
        if (!types.isArray())
            throw new ModelFormatException(file, "layer_types must be an array, got " + Json.kind(types));
        if (types.size() != layers)
            throw new ModelFormatException(
                    file, "layer_types lists " + types.size() + " layers but num_hidden_layers is " + layers);
        for (int l = 0; l < layers; l++) {
            String expect = l % 2 == 0 ? "sliding_attention" : "full_attention";
            JsonNode t = types.get(l);
            if (!t.isTextual() || !t.textValue().equals(expect))
                throw new ModelFormatException(
                        file,
                        "layer_types[" + l + "] is " + SafetensorsHeader.safe(t.toString()) + " but gpt-oss layer " + l
                                + " must be \"" + expect + "\" (sliding and full attention alternate, sliding first)");
        }
    }

    private static ModelConfig validate(Path file, ModelConfig config) {
        try {
            return config.validate(file.toString());
        } catch (ModelFormatException e) {
            throw e;
        } catch (io.gossgpu.GossException e) {
            throw new ModelFormatException(
                    file, e.getMessage().substring(file.toString().length() + 2));
        }
    }

    private static int integer(Path file, JsonNode c, String key) {
        return integer(file, c, "", key);
    }

    private static int integer(Path file, JsonNode c, String prefix, String key) {
        JsonNode v = numberAt(file, c, prefix, key);
        if (v.isIntegralNumber() ? v.canConvertToInt() : isIntegral(v.doubleValue())) return v.intValue();
        throw new ModelFormatException(
                file, prefix + key + " must be an integer in int range, got " + SafetensorsHeader.safe(v.toString()));
    }

    /** The number at {@code key}, which the config must have. */
    private static JsonNode numberAt(Path file, JsonNode c, String prefix, String key) {
        JsonNode v = c.get(key);
        if (v == null) throw new ModelFormatException(file, "config has no " + prefix + key);
        if (!v.isNumber())
            throw new ModelFormatException(
                    file, prefix + key + " must be a number, got " + SafetensorsHeader.safe(v.toString()));
        return v;
    }

    private static boolean isIntegral(double x) {
        return Double.isFinite(x) && x == Math.rint(x) && x >= Integer.MIN_VALUE && x <= Integer.MAX_VALUE;
    }

    private static float number(Path file, JsonNode c, String key) {
        return number(file, c, "", key);
    }

    private static float number(Path file, JsonNode c, String prefix, String key) {
        JsonNode v = numberAt(file, c, prefix, key);
        float f = (float) v.doubleValue();
        if (!Float.isFinite(f))
            throw new ModelFormatException(
                    file, prefix + key + " is out of float range: " + SafetensorsHeader.safe(v.toString()));
        return f;
    }
}
