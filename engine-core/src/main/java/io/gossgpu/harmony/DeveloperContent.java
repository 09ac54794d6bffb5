package io.gossgpu.harmony;

import java.util.List;

/**
 * Content of the developer message (what other formats call the system prompt): instructions and function
 * tools. Null instructions and an empty tool list are left out of the rendering.
 */
public record DeveloperContent(String instructions, List<ToolDescription> functionTools) {
    public DeveloperContent {
        functionTools = functionTools == null ? List.of() : List.copyOf(functionTools);
    }

    public static DeveloperContent instructions(String instructions) {
        return new DeveloperContent(instructions, List.of());
    }
}
