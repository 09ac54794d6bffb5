package io.gossgpu.harmony;

import java.util.List;

/**
 * Content of the developer message (what other formats call the system prompt): instructions, function tools, and
 * the response format the answer must have (Harmony's {@code # Response Formats} section, so that the model sees the
 * schema its answer is held to). Null instructions, an empty tool list and a null format are left out of the rendering.
 */
public record DeveloperContent(
        String instructions, List<ToolDescription> functionTools, ResponseFormatSection responseFormat) {
    public DeveloperContent {
        functionTools = functionTools == null ? List.of() : List.copyOf(functionTools);
    }

    public DeveloperContent(String instructions, List<ToolDescription> functionTools) {
        this(instructions, functionTools, null);
    }

    public static DeveloperContent instructions(String instructions) {
        return new DeveloperContent(instructions, List.of());
    }

    /** This content with {@code format} as its response format. */
    public DeveloperContent withResponseFormat(ResponseFormatSection format) {
        return new DeveloperContent(instructions, functionTools, format);
    }

    /**
     * One named response format: {@code schema} is JSON Schema text (rendered on one line), {@code description} may be
     * null. Rendered as {@code ## name}, the description as {@code //} comment lines, then the schema.
     */
    public record ResponseFormatSection(String name, String description, String schema) {
        /** The section of a format named {@code name} whose schema is JSON text {@code schema} (put on one line). */
        public static ResponseFormatSection of(String name, String description, String schema) {
            String oneLine;
            try {
                oneLine = new com.fasterxml.jackson.databind.ObjectMapper()
                        .readTree(schema)
                        .toString();
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalArgumentException(
                        "the response format's schema is not JSON: " + e.getOriginalMessage());
            }
            return new ResponseFormatSection(name, description, oneLine);
        }
    }
}
