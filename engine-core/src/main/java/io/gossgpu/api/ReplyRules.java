package io.gossgpu.api;

import io.gossgpu.GossException;
import io.gossgpu.constrain.ByteMatcher;
import io.gossgpu.constrain.HarmonyConstraint;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one reply is held to, checked before the reply changes the conversation: the answer's response format, the
 * arguments of strict tools, and the tool choice (a call that must come, its arguments held to the tool's schema).
 *
 * @param format    the answer's format, or null for free text
 * @param arguments the formats calls' arguments follow, by function name
 * @param mustCall  the functions one of which the reply must call, or null when it may answer
 */
record ReplyRules(ResponseFormat format, Map<String, ResponseFormat> arguments, Set<String> mustCall) {
    /** Nothing constrained: free text or any declared call. */
    static final ReplyRules FREE = new ReplyRules(null, Map.of(), null);

    /** The rules of a reply with {@code format}, the {@code tools} offered, and {@code choice} (null: auto). */
    static ReplyRules of(ResponseFormat format, List<Tool> tools, ToolChoice choice) {
        Map<String, ResponseFormat> arguments = new HashMap<>();
        if (choice == null || !choice.mustCall()) {
            for (Tool t : tools) if (t.strict()) arguments.put(t.name(), t.argumentsFormat());
            return new ReplyRules(format, Map.copyOf(arguments), null);
        }
        for (Tool t : tools)
            if (choice.function() == null || t.name().equals(choice.function()))
                arguments.put(t.name(), t.callFormat());
        if (arguments.isEmpty())
            throw new GossException(
                    choice.function() == null
                            ? "the tool choice requires a call, but no tools are offered"
                            : "the tool choice names '" + choice.function()
                                    + "', which is not among the tools offered");
        return new ReplyRules(format, Map.copyOf(arguments), Set.copyOf(arguments.keySet()));
    }

    /**
     * A fresh constraint for one reply (null when nothing is constrained). It holds the whole turn, so that its
     * headers lead only to the final answer or to a call of one of the {@code declared} functions, or, when a call
     * must come, only to a call of one of {@link #mustCall}.
     */
    HarmonyConstraint constraint(Set<String> declared) {
        if (mustCall == null && format == null && arguments.isEmpty()) return null;
        Map<String, ByteMatcher> tools = new HashMap<>();
        arguments.forEach((name, f) -> tools.put("functions." + name, f.matcher()));
        if (mustCall != null) return HarmonyConstraint.call(tools, mustCall);
        return new HarmonyConstraint(format == null ? null : format.matcher(), tools, declared);
    }
}
