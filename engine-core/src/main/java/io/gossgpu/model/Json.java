package io.gossgpu.model;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.gossgpu.JsonSyntaxErrors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Strict JSON reading for model files: UTF-8 checked, duplicate keys and trailing content rejected. */
public final class Json {
    /** Larger JSON files than this are not model metadata. */
    static final long MAX_JSON_FILE = 64L << 20;

    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    static {
        MAPPER.getFactory()
                .setStreamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(64)
                        .maxNumberLength(64)
                        .build());
    }

    private Json() {}

    /** Decodes {@code bytes} as UTF-8, rejecting malformed input. */
    public static String utf8(Path file, byte[] bytes, String what) {
        try {
            return strictUtf8(bytes);
        } catch (CharacterCodingException e) {
            throw new ModelFormatException(file, what + " is not valid UTF-8");
        }
    }

    /** {@code bytes} as UTF-8, where a malformed sequence throws instead of turning into U+FFFD. */
    public static String strictUtf8(byte[] bytes) throws CharacterCodingException {
        return StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes))
                .toString();
    }

    /** Parses {@code text}; any syntax error is one line naming {@code file}. */
    public static JsonNode parse(Path file, String text, String what) {
        try {
            JsonNode node = MAPPER.readTree(text);
            if (node == null || node.isMissingNode()) throw new ModelFormatException(file, what + " is empty");
            return node;
        } catch (JsonProcessingException e) {
            throw new ModelFormatException(file, what + " is " + JsonSyntaxErrors.describe(e));
        } catch (IOException e) {
            throw new ModelFormatException(file, what + " is invalid JSON (" + firstLine(e.getMessage()) + ")");
        } catch (RuntimeException e) {
            if (e instanceof ModelFormatException m) throw m;
            throw new ModelFormatException(
                    file, what + " could not be parsed (" + firstLine(String.valueOf(e.getMessage())) + ")");
        }
    }

    /** Reads and parses a whole JSON file that must hold an object. */
    public static JsonNode readObjectFile(Path file) {
        byte[] bytes;
        try {
            long size = Files.size(file);
            if (size > MAX_JSON_FILE)
                throw new ModelFormatException(file, "too large for a JSON metadata file (" + size + " bytes)");
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ModelFormatException(file, "missing");
        } catch (IOException e) {
            throw new ModelFormatException(file, "cannot be read (" + e + ")");
        }
        JsonNode node = parse(file, utf8(file, bytes, "file"), "file");
        if (!node.isObject())
            throw new ModelFormatException(file, "expected a JSON object at the top level, got " + kind(node));
        return node;
    }

    /** The object's top-level keys as plain Java values (maps, lists, strings, numbers, booleans, null). */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> toPlainMap(JsonNode object) {
        Map<String, Object> out = new LinkedHashMap<>();
        object.properties().forEach(e -> out.put(e.getKey(), MAPPER.convertValue(e.getValue(), Object.class)));
        return out;
    }

    public static String kind(JsonNode n) {
        return n.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }

    /** True when {@code s} holds no unpaired UTF-16 surrogate (so it has a UTF-8 form). */
    public static boolean isWellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) return false;
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    static String firstLine(String s) {
        if (s == null) return "no detail";
        int nl = s.indexOf('\n');
        String line = nl < 0 ? s : s.substring(0, nl);
        return line.length() > 200 ? line.substring(0, 200) + "…" : line;
    }
}
