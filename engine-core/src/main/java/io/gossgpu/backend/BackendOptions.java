package io.gossgpu.backend;

import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The settings a backend is created with ({@link BackendProvider#create}): its launch knobs ({@link Knob}) and its
 * few other settings (the cpu backend's threads, the OpenCL device, …), each by its environment-variable name
 * ({@code GOSS_CUDA_ATTENTION_BLOCK}) as text. Immutable, so two backends (two engines) in one JVM can run with
 * different knobs side by side. A backend reads only its own names and checks them when it is created; an unset
 * name means the knob's default.
 *
 * <p>The environment and system properties are read in one place, {@link #fromEnvironment()}, called at the edge
 * (the command line, {@link io.gossgpu.api.EngineOptions#of}); libraries and tests build values with
 * {@link #defaults()} and {@link #with}.
 */
public final class BackendOptions {
    /**
     * A setting's text; when a system property set it, that property's name (error messages point at it); and where
     * it came from, for listings: {@code environment}, {@code -Dgoss.cuda.attention.block}, {@code code}, or what the
     * caller named ({@code --threads}).
     */
    private record Setting(String value, String property, String source) {}

    /** The source of a setting read from an environment variable. */
    public static final String ENVIRONMENT = "environment";
    /** The source of a setting given in code ({@link #with(String, String)}). */
    public static final String CODE = "code";

    private static final BackendOptions DEFAULTS = new BackendOptions(new TreeMap<>());

    private final SortedMap<String, Setting> settings;

    private BackendOptions(SortedMap<String, Setting> settings) {
        this.settings = Collections.unmodifiableSortedMap(settings);
    }

    /** Nothing set: every knob at its (device's) default. */
    public static BackendOptions defaults() {
        return DEFAULTS;
    }

    /**
     * The backend settings of this process: every environment variable {@code GOSS_<BACKEND>_…} and every system
     * property {@code goss.<backend>.…} (which wins; {@code goss.cuda.attention.block} is {@code GOSS_CUDA_ATTENTION_BLOCK})
     * of a backend on the class path. Nothing is checked here: the backend checks its own settings when created.
     */
    public static BackendOptions fromEnvironment() {
        return from(
                System.getenv(),
                System.getProperties(),
                Backends.unordered().stream().map(BackendProvider::name).toList());
    }

    /** {@link #fromEnvironment()} over the given environment and properties, for {@code backends} (by name). */
    static BackendOptions from(Map<String, String> env, Properties properties, java.util.List<String> backends) {
        SortedMap<String, Setting> m = new TreeMap<>();
        for (String b : backends) {
            String envPrefix = "GOSS_" + b.toUpperCase(Locale.ROOT) + "_",
                    propPrefix = "goss." + b.toLowerCase(Locale.ROOT) + ".";
            env.forEach((k, v) -> {
                if (k.startsWith(envPrefix) && v != null && !v.isBlank())
                    m.put(k, new Setting(v.strip(), null, ENVIRONMENT));
            });
            for (String p : properties.stringPropertyNames()) {
                String v = properties.getProperty(p);
                if (p.startsWith(propPrefix) && v != null && !v.isBlank())
                    m.put(envName(p), new Setting(v.strip(), p, "-D" + p));
            }
        }
        return new BackendOptions(m);
    }

    /** {@code goss.cuda.attention.block} → {@code GOSS_CUDA_ATTENTION_BLOCK}. */
    public static String envName(String property) {
        return property.replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /** These options with {@code name} (an environment-variable name) set to {@code value}, or unset when null. */
    public BackendOptions with(String name, String value) {
        return with(name, value, CODE);
    }

    /** {@link #with(String, String)}, listed as coming from {@code source} (a command-line flag: {@code --threads}). */
    public BackendOptions with(String name, String value, String source) {
        SortedMap<String, Setting> m = new TreeMap<>(settings);
        if (value == null || value.isBlank()) m.remove(name);
        else m.put(name, new Setting(value.strip(), null, source));
        return new BackendOptions(m);
    }

    /** These options with {@code knob} set to {@code value} (written as the knob writes it: a number or a name). */
    public BackendOptions with(Knob knob, int value) {
        return with(knob.envName(), knob.text(value));
    }

    /** These options and then every setting of {@code more} (which win). */
    public BackendOptions with(BackendOptions more) {
        SortedMap<String, Setting> m = new TreeMap<>(settings);
        m.putAll(more.settings);
        return new BackendOptions(m);
    }

    /** The text set for {@code name}, or null. */
    public String get(String name) {
        Setting s = settings.get(name);
        return s == null ? null : s.value();
    }

    /** The text set for {@code knob}, or null. */
    public String get(Knob knob) {
        return get(knob.envName());
    }

    /** The system property that set {@code name}, or null when it came from the environment or from code. */
    String property(String name) {
        Setting s = settings.get(name);
        return s == null ? null : s.property();
    }

    /** Where the setting {@code name} came from ({@link #ENVIRONMENT}, {@code -Dproperty}, {@link #CODE}, ...), or null when unset. */
    public String source(String name) {
        Setting s = settings.get(name);
        return s == null ? null : s.source();
    }

    /** Every setting, by name. */
    public SortedMap<String, String> asMap() {
        SortedMap<String, String> m = new TreeMap<>();
        settings.forEach((k, s) -> m.put(k, s.value()));
        return m;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BackendOptions b && asMap().equals(b.asMap());
    }

    @Override
    public int hashCode() {
        return asMap().hashCode();
    }

    /** {@code GOSS_CUDA_ATTENTION_BLOCK=64 GOSS_CPU_THREADS=2}, or {@code defaults}. */
    @Override
    public String toString() {
        if (settings.isEmpty()) return "defaults";
        StringBuilder sb = new StringBuilder();
        settings.forEach((k, s) ->
                sb.append(sb.isEmpty() ? "" : " ").append(k).append('=').append(s.value()));
        return sb.toString();
    }
}
