package io.gossgpu.cli;

import io.gossgpu.GossException;
import java.util.Arrays;

/** Parses comma- or space-separated token ids given on the command line. */
final class TokenIds {
    private TokenIds() {}

    static int[] parse(String s, int vocab) {
        String[] parts = s.trim().split("[,\\s]+");
        if (parts.length == 0 || parts[0].isEmpty()) throw new GossException("no token ids given");
        return Arrays.stream(parts)
                .mapToInt(p -> {
                    int id;
                    try {
                        id = Integer.parseInt(p);
                    } catch (NumberFormatException e) {
                        throw new GossException("not a token id: '" + p + "'");
                    }
                    if (id < 0 || id >= vocab)
                        throw new GossException("token id " + id + " is outside the vocabulary [0, " + vocab + ")");
                    return id;
                })
                .toArray();
    }
}
