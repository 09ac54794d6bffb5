package io.gossgpu.metal;

import static io.gossgpu.metal.bindings.goss_metal_h.*;

import io.gossgpu.GossException;
import io.gossgpu.metal.bindings.goss_metal_h;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Finds and binds the native library behind goss_metal.h, and reads settings. */
final class MetalNative {
    private MetalNative() {}

    static final String RESOURCE_DIR = "/io/gossgpu/metal/native/";
    private static String probed;

    /** A system property, else an environment variable, else null. */
    static String setting(String property, String env) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) v = System.getenv(env);
        return v == null || v.isBlank() ? null : v.trim();
    }

    static synchronized void ensureLoaded(boolean emulator) {
        if (goss_metal_h.loadedLibrary() != null) return;
        goss_metal_h.load(locate(emulator));
    }

    /** One line naming the device, after creating it once; throws with a reason when that fails. */
    static synchronized String probe(boolean emulator) {
        if (probed != null) return probed;
        ensureLoaded(emulator);
        MemorySegment dev = goss_mtl_device_create();
        if (dev.equals(MemorySegment.NULL)) throw new GossException("no Metal device: " + lastError());
        try {
            probed = deviceLine(dev);
        } finally {
            goss_mtl_device_release(dev);
        }
        return probed;
    }

    static String deviceLine(MemorySegment dev) {
        return goss_mtl_device_name(dev).getString(0) + ", " + (goss_mtl_device_memory(dev) >> 20) + " MiB working set"
                + (goss_mtl_device_is_emulated(dev) != 0 ? " (emulated Metal: kernels run as C++ on the CPU)" : "");
    }

    static String lastError() {
        String s = goss_mtl_last_error().getString(0);
        return s.isEmpty() ? "(no error message)" : s;
    }

    private static Path locate(boolean emulator) {
        String explicit = setting("goss.metal.library", "GOSS_METAL_LIBRARY");
        if (explicit != null) {
            Path p = Path.of(explicit);
            if (!Files.isRegularFile(p)) throw new GossException("GOSS_METAL_LIBRARY=" + explicit + " is not a file");
            return p;
        }
        if (emulator)
            throw new GossException(
                    "the emulated Metal device is a test harness, not part of goss-gpu: build the metal-emu module "
                            + "(backend-metal/emu, Linux, g++) and set GOSS_METAL_LIBRARY to its target/lib/libgoss_metal_emu.so");
        String file = "libgoss_metal.dylib";
        URL url = MetalNative.class.getResource(RESOURCE_DIR + file);
        if (url == null)
            throw new GossException(
                    file + " is not in this build (the Metal shim is built on macOS by the metal-shim module)");
        try {
            if (url.getProtocol().equals("file")) return Path.of(url.toURI());
            Path tmp = Files.createTempFile("goss-metal-", "-" + file);
            tmp.toFile().deleteOnExit();
            try (InputStream in = url.openStream()) {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            }
            return tmp;
        } catch (IOException | URISyntaxException e) {
            throw new GossException("cannot extract " + file + ": " + e.getMessage(), e);
        }
    }

    /** The precompiled goss.metallib packaged on macOS, or null. */
    static Path metallib() {
        URL url = MetalNative.class.getResource(RESOURCE_DIR + "goss.metallib");
        if (url == null) return null;
        try {
            if (url.getProtocol().equals("file")) return Path.of(url.toURI());
            Path tmp = Files.createTempFile("goss-", ".metallib");
            tmp.toFile().deleteOnExit();
            try (InputStream in = url.openStream()) {
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            }
            return tmp;
        } catch (IOException | URISyntaxException e) {
            return null;
        }
    }
}
