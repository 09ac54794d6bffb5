package io.gossgpu.constrain;

import java.util.List;

/**
 * A JSON Schema compiled to what the byte matcher ({@link JsonMachine}) walks: one node per kind of value. Nodes may
 * form cycles ({@code $ref} to an enclosing schema), so {@link Ref} is filled in after compiling.
 */
public sealed interface JsonGrammar {
    /** Any JSON value (an empty schema, or the values of {@code json_object}). */
    record AnyValue() implements JsonGrammar {}

    /**
     * An object whose keys come from {@code properties}, in their declared order (a required one is never skipped);
     * or, when {@code properties} is empty and {@code extra} is not null, any keys with values of {@code extra}.
     */
    record ObjectNode(List<Property> properties, JsonGrammar extra, KeyTrie keys) implements JsonGrammar {
        /** Index of the first required property at or after {@code from}; {@code properties.size()} if none. */
        int nextRequired(int from) {
            for (int i = from; i < properties.size(); i++) if (properties.get(i).required()) return i;
            return properties.size();
        }

        // Identity: matcher states hold nodes and are compared often; a schema may also refer to itself.
        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    record Property(String name, JsonGrammar value, boolean required) {}

    record ArrayNode(JsonGrammar items, int minItems, int maxItems) implements JsonGrammar {}

    /**
     * A string of {@code minLength..maxLength} code points (an escape counts as one, a surrogate pair written as two
     * {@code \\u} escapes as one), matching {@code pattern} when it is not null (which then holds the same limits).
     */
    record StringNode(int minLength, int maxLength, StringPattern pattern) implements JsonGrammar {
        StringNode(int minLength, int maxLength) {
            this(minLength, maxLength, null);
        }

        boolean free() {
            return minLength == 0 && maxLength == Integer.MAX_VALUE && pattern == null;
        }
    }

    record NumberNode(boolean integer) implements JsonGrammar {}

    /** One of a fixed set of values, each written as its JSON text ({@code enum}, {@code const}, true/false/null). */
    record Literals(KeyTrie trie) implements JsonGrammar {}

    /** Any of the alternatives (the matcher follows each that still fits). */
    record AnyOf(List<JsonGrammar> alternatives) implements JsonGrammar {
        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    /** A {@code $ref}, resolved once the whole schema is compiled (so that schemas can refer to themselves). */
    final class Ref implements JsonGrammar {
        final String pointer;
        JsonGrammar target;

        Ref(String pointer) {
            this.pointer = pointer;
        }

        JsonGrammar resolved() {
            JsonGrammar g = this;
            while (g instanceof Ref r) g = r.target;
            return g;
        }

        @Override
        public String toString() {
            return "Ref[" + pointer + "]";
        }
    }
}
