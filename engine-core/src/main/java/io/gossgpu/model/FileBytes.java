package io.gossgpu.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Brings a whole model file into native memory owned by an arena: mapped read-only (the default), or
 * read in full ({@link LoadOptions#mmap()} false), reporting the bytes read to {@link LoadOptions#progress()}.
 * Every model reader loads its files through here.
 */
public final class FileBytes {
    /** Bytes per read: ByteBuffers address at most 2 GiB, and progress wants a few updates per second. */
    private static final long CHUNK = 64L << 20;

    private FileBytes() {}

    public static MemorySegment load(Path file, Arena arena, LoadOptions options) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size == 0) return MemorySegment.ofArray(new byte[0]); // too short: the format's parser says so
            if (options.mmap()) return ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            MemorySegment seg = allocate(file, arena, size);
            long pos = 0;
            while (pos < size) {
                ByteBuffer buf = seg.asSlice(pos, Math.min(CHUNK, size - pos)).asByteBuffer();
                while (buf.hasRemaining()) {
                    int n = ch.read(buf, pos + buf.position());
                    if (n < 0)
                        throw new ModelFormatException(
                                file,
                                "file shrank while being read (" + (pos + buf.position()) + " of " + size + " bytes)");
                }
                pos += buf.capacity();
                options.progress().read(file, pos, size);
            }
            return seg.asReadOnly();
        } catch (NoSuchFileException e) {
            throw new ModelFormatException(file, "missing");
        } catch (IOException e) {
            throw new ModelFormatException(file, "cannot be read (" + e.getMessage() + ")", e);
        }
    }

    private static MemorySegment allocate(Path file, Arena arena, long size) {
        try {
            return arena.allocate(size, 64);
        } catch (OutOfMemoryError e) {
            throw new ModelFormatException(
                    file,
                    "cannot load " + size + " bytes into memory (" + e.getMessage() + "); try memory-mapping instead");
        }
    }
}
