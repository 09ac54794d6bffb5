package io.gossgpu.api;

/**
 * Whether a reply must call a tool (OpenAI's {@code tool_choice}). {@link #auto()} leaves it to the model. With
 * {@link #required()} the reply is a call to one of the tools offered, with {@link #function} a call to that one:
 * the reasoning stays free, then the only way on is the call, whose arguments follow the tool's parameters schema
 * whether or not the tool is {@link Tool#strict() strict} (the caller insisted on the call; a schema the engine cannot
 * enforce holds them to a JSON object). To withhold the tools, offer none.
 *
 * @param mustCall whether the reply must be a tool call
 * @param function the tool it must call, or null for any of those offered
 */
public record ToolChoice(boolean mustCall, String function) {
    private static final ToolChoice AUTO = new ToolChoice(false, null), REQUIRED = new ToolChoice(true, null);

    public ToolChoice {
        if (function != null && function.isBlank()) throw new IllegalArgumentException("a tool choice names no tool");
        if (function != null && !mustCall)
            throw new IllegalArgumentException("a tool choice that names '" + function + "' requires the call");
    }

    /** The model calls a tool or answers, as it likes. */
    public static ToolChoice auto() {
        return AUTO;
    }

    /** The reply is a call to one of the tools offered. */
    public static ToolChoice required() {
        return REQUIRED;
    }

    /** The reply is a call to the tool named {@code name}, which must be among those offered. */
    public static ToolChoice function(String name) {
        if (name == null) throw new IllegalArgumentException("a tool choice names no tool");
        return new ToolChoice(true, name);
    }
}
