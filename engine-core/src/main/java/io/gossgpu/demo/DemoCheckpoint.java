package io.gossgpu.demo;

import io.gossgpu.GossException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.zip.GZIPInputStream;

/**
 * The demo model that ships in the jar: a small model of the exact gpt-oss architecture trained by
 * {@code scripts/train-demo} to answer a few kinds of questions in Harmony (not gpt-oss; see the README). The jar holds
 * its original/ folder with the safetensors file gzipped; {@link #unpack} writes it out once.
 *
 * <p>Unpacking is safe to interrupt and to race: each file is written under a temporary name and renamed into place,
 * the model file last and only once its SHA-256 is the one recorded at build time, so a folder whose
 * {@code model.safetensors} exists is complete. The folder's name carries that hash: a jar with another model unpacks
 * beside it.
 */
public final class DemoCheckpoint {
    private static final String RESOURCES = "/io/gossgpu/demo/";
    static final String MODEL = "model.safetensors", CONFIG = "config.json";

    private DemoCheckpoint() {}

    /** SHA-256 (hex) of the unpacked model.safetensors. */
    public static String sha256() {
        try (InputStream in = resource(MODEL + ".sha256")) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            throw new GossException("reading the demo model's hash from the jar: " + e.getMessage(), e);
        }
    }

    /** The folder the demo model unpacks to under {@code parent}. */
    public static Path folder(Path parent) {
        return parent.resolve("demo-model-" + sha256().substring(0, 12));
    }

    /** True when the demo model is already unpacked under {@code parent}. */
    public static boolean isUnpacked(Path parent) {
        return Files.isRegularFile(folder(parent).resolve(MODEL));
    }

    /** The demo model's original/ folder under {@code parent}, unpacked from the jar first when it is not there. */
    public static Path unpack(Path parent) {
        Path dir = folder(parent);
        if (Files.isRegularFile(dir.resolve(MODEL))) return dir;
        try {
            Files.createDirectories(dir);
            try (InputStream in = resource(CONFIG)) {
                place(dir, CONFIG, in, null);
            }
            try (InputStream in = new GZIPInputStream(resource(MODEL + ".gz"), 1 << 16)) {
                place(dir, MODEL, in, sha256());
            }
        } catch (IOException e) {
            throw new GossException("cannot unpack the demo model to " + dir + ": " + e.getMessage(), e);
        }
        return dir;
    }

    /** Copies {@code in} to {@code dir/name} through a temporary file; with {@code sha256}, only if the bytes have that hash. */
    private static void place(Path dir, String name, InputStream in, String sha256) throws IOException {
        Path tmp = Files.createTempFile(dir, name + ".", ".part");
        try {
            MessageDigest md = sha256 != null ? MessageDigest.getInstance("SHA-256") : null;
            try (OutputStream out = Files.newOutputStream(tmp)) {
                byte[] buf = new byte[1 << 16];
                for (int n; (n = in.read(buf)) > 0; ) {
                    out.write(buf, 0, n);
                    if (md != null) md.update(buf, 0, n);
                }
            }
            if (md != null && !HexFormat.of().formatHex(md.digest()).equals(sha256))
                throw new IOException(
                        "the unpacked " + name + " does not have the SHA-256 recorded in the jar (a damaged jar?)");
            Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static InputStream resource(String name) throws IOException {
        InputStream in = DemoCheckpoint.class.getResourceAsStream(RESOURCES + name);
        if (in == null) throw new IOException("the jar has no " + RESOURCES + name);
        return in;
    }
}
