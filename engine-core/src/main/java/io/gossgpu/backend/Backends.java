package io.gossgpu.backend;

import io.gossgpu.GossException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/** Finds backends with {@link ServiceLoader} and opens one by name or {@code auto}. */
public final class Backends {
    private Backends() {}

    /** Every provider on the class path, highest priority first. */
    public static List<BackendProvider> providers() {
        List<BackendProvider> out = unordered();
        out.sort(Comparator.comparingInt(BackendProvider::priority).reversed().thenComparing(BackendProvider::name));
        return out;
    }

    /** Every provider on the class path, in no order: without asking their priority, which probes devices. */
    static List<BackendProvider> unordered() {
        List<BackendProvider> out = new ArrayList<>();
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class, Backends.class.getClassLoader())) out.add(p);
        return out;
    }

    /** Just the named provider (without creating it), or an error listing what exists. */
    public static BackendProvider provider(String name) {
        for (BackendProvider p : providers()) if (p.name().equalsIgnoreCase(name)) return p;
        throw new GossException("unknown backend '" + name + "'; " + summary());
    }

    /**
     * Opens {@code name} ({@code reference}, {@code cpu}, {@code opencl}, {@code cuda}, {@code metal}) or
     * {@code auto} (the available backend of highest priority). Unknown or unavailable names throw a
     * {@link GossException} listing the available backends and why the others are not. The backend is created
     * with {@code options}.
     */
    public static Backend open(String name, BackendOptions options) {
        if (isAuto(name)) return auto().get(0).create(options);
        String n = name.trim();
        for (BackendProvider p : providers()) {
            if (!p.name().equalsIgnoreCase(n)) continue;
            Availability a = safeAvailability(p);
            if (!a.available())
                throw new GossException("backend '" + p.name() + "' is unavailable: " + a.reason() + "; " + summary());
            return p.create(options);
        }
        throw new GossException("unknown backend '" + name + "'; " + summary());
    }

    /** Whether {@code name} asks for {@code auto}: null, or "auto" in any case, blanks around it allowed. */
    public static boolean isAuto(String name) {
        return name == null || name.trim().equalsIgnoreCase("auto");
    }

    /**
     * What {@code auto} may open, in the order it tries them: the available providers, highest priority first. Never
     * empty: with none available it throws the {@link GossException} that lists why.
     */
    public static List<BackendProvider> auto() {
        List<BackendProvider> out = providers().stream()
                .filter(p -> safeAvailability(p).available())
                .toList();
        if (out.isEmpty()) throw new GossException("no backend is available; " + summary());
        return out;
    }

    /** "available: cuda, reference; unavailable: metal (not macOS), opencl (no OpenCL platform)". */
    public static String summary() {
        List<String> yes = new ArrayList<>(), no = new ArrayList<>();
        for (BackendProvider p : providers()) {
            Availability a = safeAvailability(p);
            if (a.available()) yes.add(p.name());
            else no.add(p.name() + " (" + a.reason() + ")");
        }
        return "available: " + (yes.isEmpty() ? "none" : String.join(", ", yes))
                + (no.isEmpty() ? "" : "; unavailable: " + String.join(", ", no));
    }

    public static Availability safeAvailability(BackendProvider p) {
        try {
            Availability a = p.availability();
            return a == null ? Availability.no("provider returned no availability") : a;
        } catch (RuntimeException | LinkageError e) {
            return Availability.no("probe failed: " + e);
        }
    }
}
