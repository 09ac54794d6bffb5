package io.gossgpu.model.gguf;

import io.gossgpu.model.ModelConfig;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Small GGUF files for validation and fuzz tests. */
final class GgufFixtures {
    private GgufFixtures() {}

    /** A 2-layer gpt-oss shape small enough that a whole file is ~60 KB. */
    static ModelConfig micro() {
        return new ModelConfig(2, 4, 2, 50, 64, 32, 7.0f, 8, 4, 2, 3, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    /** Bytes of a valid micro-model GGUF (BF16). */
    static byte[] microModel(Path dir) {
        try {
            Path f = Files.createTempFile(dir, "micro", ".gguf");
            GgufWriter.write(new TestModelGenerator(micro(), 5), f, GgufWriter.Options.defaults());
            byte[] b = Files.readAllBytes(f);
            Files.delete(f);
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int indexOf(byte[] hay, String needle) {
        byte[] n = needle.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + n.length <= hay.length; i++) {
            for (int j = 0; j < n.length; j++) if (hay[i + j] != n[j]) continue outer;
            return i;
        }
        throw new AssertionError("not found: " + needle);
    }

    static void putI64(byte[] b, int at, long v) {
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(at, v);
    }

    static void putI32(byte[] b, int at, int v) {
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(at, v);
    }

    /** Hand-built GGUF pieces with full control over every field (for invalid files). */
    static final class Raw {
        private final ByteBuffer b = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);

        Raw header(int version, long tensors, long kvs) {
            b.putInt(GgufParser.MAGIC).putInt(version).putLong(tensors).putLong(kvs);
            return this;
        }

        Raw str(byte[] s) {
            b.putLong(s.length).put(s);
            return this;
        }

        Raw str(String s) {
            return str(s.getBytes(StandardCharsets.UTF_8));
        }

        Raw u32(int v) {
            b.putInt(v);
            return this;
        }

        Raw i64(long v) {
            b.putLong(v);
            return this;
        }

        Raw u8(int v) {
            b.put((byte) v);
            return this;
        }

        /** One tensor info: name, dims (GGUF order), type id, offset. */
        Raw tensor(byte[] name, long[] ne, int type, long offset) {
            str(name).u32(ne.length);
            for (long n : ne) i64(n);
            return u32(type).i64(offset);
        }

        Raw tensor(String name, long[] ne, int type, long offset) {
            return tensor(name.getBytes(StandardCharsets.UTF_8), ne, type, offset);
        }

        /** Pads to {@code align} and appends {@code n} zero bytes of data. */
        Raw data(int align, int n) {
            while (b.position() % align != 0) b.put((byte) 0);
            b.position(b.position() + n);
            return this;
        }

        byte[] bytes() {
            byte[] out = new byte[b.position()];
            b.get(0, out);
            return out;
        }
    }
}
