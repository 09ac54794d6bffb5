package io.gossgpu.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The server's one ObjectMapper and small builders. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    static ArrayNode array() {
        return MAPPER.createArrayNode();
    }

    /**
     * Fills {@code response} with what every (chat) completion and chunk starts with, {@code id}, {@code object},
     * {@code created} and {@code model}, and returns its one choice, at index 0, for the caller to fill.
     */
    static ObjectNode completionChoice(ObjectNode response, String id, String object, long created, String model) {
        response.put("id", id);
        response.put("object", object);
        response.put("created", created);
        response.put("model", model);
        ObjectNode choice = response.putArray("choices").addObject();
        choice.put("index", 0);
        return choice;
    }

    static String write(Object node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Where the first string (value or field name) holding an unpaired UTF-16 surrogate is, as a {@code param} path
     * ({@code messages[0].content}), or null. JSON lets {@code "\\ud800"} be written but it is no Unicode text: it
     * cannot be tokenized, and OpenAI refuses it.
     */
    static String loneSurrogate(com.fasterxml.jackson.databind.JsonNode node, String path) {
        if (node.isTextual()) return hasLoneSurrogate(node.textValue()) ? path : null;
        if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                String at = loneSurrogate(node.get(i), path + "[" + i + "]");
                if (at != null) return at;
            }
        } else if (node.isObject()) {
            for (var it = node.fields(); it.hasNext(); ) {
                var e = it.next();
                String at = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
                if (hasLoneSurrogate(e.getKey())) return at;
                String inner = loneSurrogate(e.getValue(), at);
                if (inner != null) return inner;
            }
        }
        return null;
    }

    private static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) i++;
            else if (Character.isSurrogate(c)) return true;
        }
        return false;
    }

    static ObjectNode error(String message, String type, String param, String code) {
        ObjectNode e = object();
        e.put("message", message);
        e.put("type", type);
        e.put("param", param);
        e.put("code", code);
        ObjectNode root = object();
        root.set("error", e);
        return root;
    }
}
