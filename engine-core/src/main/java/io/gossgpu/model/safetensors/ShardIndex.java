package io.gossgpu.model.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.model.Json;
import io.gossgpu.model.ModelFormatException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Hugging Face's {@code model.safetensors.index.json}: which shard file holds each tensor. */
public final class ShardIndex {
    public static final String FILE = "model.safetensors.index.json";

    private ShardIndex() {}

    /** tensor name → shard file name (a plain name inside the model folder), in index order. */
    static Map<String, String> read(Path indexFile) {
        JsonNode root = Json.readObjectFile(indexFile);
        JsonNode map = root.get("weight_map");
        if (map == null) throw new ModelFormatException(indexFile, "has no weight_map");
        if (!map.isObject())
            throw new ModelFormatException(indexFile, "weight_map must be an object, got " + Json.kind(map));
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : map.properties()) {
            String tensor = e.getKey();
            JsonNode f = e.getValue();
            if (!f.isTextual())
                throw new ModelFormatException(
                        indexFile,
                        SafetensorsHeader.safe(tensor),
                        "weight_map value must be a file name, got " + Json.kind(f));
            String name = f.textValue();
            if (!isPlainFileName(name))
                throw new ModelFormatException(
                        indexFile,
                        SafetensorsHeader.safe(tensor),
                        "shard '" + SafetensorsHeader.safe(name)
                                + "' is not a .safetensors file name inside the model folder");
            out.put(tensor, name);
        }
        if (out.isEmpty()) throw new ModelFormatException(indexFile, "weight_map is empty");
        return out;
    }

    private static boolean isPlainFileName(String s) {
        return s.endsWith(".safetensors")
                && !s.startsWith(".")
                && s.indexOf('/') < 0
                && s.indexOf('\\') < 0
                && s.indexOf(':') < 0
                && s.indexOf('\0') < 0
                && Json.isWellFormed(s);
    }
}
