package io.gossgpu.backend;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Setting names that nothing reads. A misspelled knob ({@code GOSS_OPENCL_DENSE_WGG}) would otherwise be ignored
 * without a word; this names it with the nearest known name. Known names are the knobs and other settings of the
 * backends on the class path ({@link BackendProvider#knobs}, {@link BackendProvider#settingNames}) and whatever the
 * caller adds (the command line's own, {@code GOSS_MODEL}, ...).
 */
public final class SettingNames {
    private static final System.Logger LOG = System.getLogger("io.gossgpu.backend");
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private SettingNames() {}

    /** The knob and setting names of every backend on the class path. */
    public static SortedSet<String> known() {
        SortedSet<String> out = new TreeSet<>();
        for (BackendProvider p : Backends.unordered()) {
            p.knobs().forEach(k -> out.add(k.envName()));
            out.addAll(p.settingNames());
        }
        return out;
    }

    /**
     * The {@code GOSS_*} environment variables and {@code goss.*} system properties, by how a user wrote them
     * ({@code GOSS_X_Y}, {@code -Dgoss.x.y}), each with its environment-variable name ({@code GOSS_X_Y}).
     */
    public static SortedMap<String, String> inEnvironment(Map<String, String> env, Properties properties) {
        SortedMap<String, String> out = new TreeMap<>();
        env.keySet().stream().filter(k -> k.startsWith("GOSS_")).forEach(k -> out.put(k, k));
        for (String p : properties.stringPropertyNames())
            if (p.startsWith("goss.")) out.put("-D" + p, BackendOptions.envName(p));
        return out;
    }

    /**
     * One line for each of {@code names} (as written → environment-variable name) that is not {@code known}:
     * {@code unknown setting GOSS_OPENCL_DENSE_WGG (did you mean GOSS_OPENCL_DENSE_WG?)}.
     */
    public static List<String> unknown(Map<String, String> names, Collection<String> known) {
        List<String> out = new ArrayList<>();
        names.forEach((written, env) -> {
            if (known.contains(env)) return;
            String near = nearest(env, known);
            out.add("unknown setting " + written
                    + (near != null
                            ? " (did you mean " + near + "?)"
                            : " (no known setting has a similar name; 'goss-gpu info --backends' lists the knobs)"));
        });
        return out;
    }

    /** {@link #unknown(Map, Collection)} for names written as environment variables. */
    public static List<String> unknown(Collection<String> names, Collection<String> known) {
        SortedMap<String, String> m = new TreeMap<>();
        names.forEach(n -> m.put(n, n));
        return unknown(m, known);
    }

    /**
     * Logs each warning at {@code WARNING} on the {@code io.gossgpu.backend} {@link System.Logger}, each only the first
     * time in this process (the command line prints it as {@code goss-gpu: warning: ...}).
     */
    public static void warnOnce(List<String> warnings) {
        for (String w : warnings) if (WARNED.add(w)) LOG.log(System.Logger.Level.WARNING, w);
    }

    /**
     * The known name closest to {@code name} by edit distance (insertions, deletions, substitutions and swaps of
     * neighbours), or null when even the closest differs in more than a quarter of its letters (and more than 2).
     */
    static String nearest(String name, Collection<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            int d = distance(name, k);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, name.length() / 4) ? best : null;
    }

    /** Optimal-string-alignment distance: Levenshtein's, with a swap of two neighbouring letters costing 1. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) d[i][0] = i;
        for (int j = 0; j <= b.length(); j++) d[0][j] = j;
        for (int i = 1; i <= a.length(); i++)
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1))
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
            }
        return d[a.length()][b.length()];
    }
}
