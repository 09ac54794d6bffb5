package io.gossgpu.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * The command-line arguments as the user typed them, in UTF-8. Under a non-UTF-8 locale ({@code LC_ALL=C}) the
 * JVM decodes argv in that locale's charset and every non-ASCII character becomes {@code ?}; on Linux the
 * bytes are still in {@code /proc/self/cmdline}. The launcher hands them to the JVM it restarts through
 * {@link #ENV}, as Base64, since it could only pass them on as its own charset allows.
 */
final class Arguments {
    static final String ENV = "GOSS_ARGS_UTF8";

    private Arguments() {}

    static String[] asUtf8(String[] args) {
        String passed = System.getenv(ENV);
        if (passed != null && System.getProperty(Launcher.RELAUNCHED) != null) return decode(passed);
        if ("UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding", "UTF-8"))) return args;
        return fromProcCmdline(args);
    }

    /** The last {@code args.length} entries of /proc/self/cmdline, or {@code args} when that cannot be read. */
    private static String[] fromProcCmdline(String[] args) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc/self/cmdline"));
            List<String> all = new ArrayList<>();
            int from = 0;
            for (int i = 0; i < raw.length; i++)
                if (raw[i] == 0) {
                    all.add(new String(raw, from, i - from, StandardCharsets.UTF_8));
                    from = i + 1;
                }
            if (all.size() < args.length) return args;
            String[] out = all.subList(all.size() - args.length, all.size()).toArray(new String[0]);
            // Only trust it when it is the same command line: equal wherever the JVM's decoding kept the text.
            for (int i = 0; i < args.length; i++)
                if (out[i].length() != args[i].length() && args[i].chars().noneMatch(c -> c == '?' || c == '\ufffd'))
                    return args;
            return out;
        } catch (IOException | RuntimeException e) {
            return args;
        }
    }

    /** {@code args} as one ASCII string for {@link #ENV}. */
    static String encode(String[] args) {
        return String.join(
                ",",
                Arrays.stream(args)
                        .map(a -> Base64.getEncoder().encodeToString(a.getBytes(StandardCharsets.UTF_8)))
                        .toList());
    }

    static String[] decode(String s) {
        if (s.isEmpty()) return new String[0];
        return Arrays.stream(s.split(",", -1))
                .map(a -> new String(Base64.getDecoder().decode(a), StandardCharsets.UTF_8))
                .toArray(String[]::new);
    }

    /** Whether {@code args} need {@link #ENV} to reach a restarted JVM unchanged. */
    static boolean needsPassing(String[] args) {
        return !"UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding", "UTF-8"))
                && Arrays.stream(args).anyMatch(a -> a.chars().anyMatch(c -> c > 127));
    }
}
