package io.gossgpu.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The files a checkpoint maps, as they were when it opened them. A mapped file truncated under the engine makes the
 * next read of a lost page fault (SIGBUS): the JVM turns that into an InternalError for plain Java reads, but the cpu
 * backend's native kernels and the Vector API read the mapping directly and the process dies. {@link #checkUnchanged}
 * compares each file's size and modification time with those at load (one stat per file, a few microseconds: the
 * engine runs it before every step) and names the file that changed. A file truncated between that check and the
 * step's reads still faults; only {@code --no-mmap} closes that window.
 *
 * <p>Copying the tensors the cpu backend reads in place (the dense BF16 matrices and the embedding; its quantized
 * matrices are repacked at load) would remove the fault, at the price of those bytes in anonymous memory besides the
 * page cache: about 3.6 GB for gpt-oss-20b's original/ layout, a third of the model, for a mistake few make.
 */
public final class MappedFiles {
    private record Snapshot(Path file, Object key, long size, FileTime modified) {}

    private final List<Snapshot> files;

    private MappedFiles(List<Snapshot> files) {
        this.files = files;
    }

    /** The files behind {@code tensors} whose bytes are mapped (none when the model was read into memory). */
    static MappedFiles of(Collection<TensorData> tensors) {
        Set<Path> mapped = new LinkedHashSet<>();
        for (TensorData t : tensors) if (t.bytes().isMapped()) mapped.add(t.file());
        List<Snapshot> out = new ArrayList<>();
        for (Path f : mapped) {
            try {
                BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
                out.add(new Snapshot(f, a.fileKey(), a.size(), a.lastModifiedTime()));
            } catch (IOException e) {
                throw new ModelFormatException(f, "cannot be read (" + e.getMessage() + ")", e);
            }
        }
        return new MappedFiles(List.copyOf(out));
    }

    /** How many files are mapped. */
    public int size() {
        return files.size();
    }

    /** Throws a one-line {@link ModelFormatException} naming the first mapped file whose size or modification time changed. */
    public void checkUnchanged() {
        for (Snapshot s : files) {
            BasicFileAttributes a;
            try {
                a = Files.readAttributes(s.file(), BasicFileAttributes.class);
            } catch (IOException e) {
                continue; // deleted or renamed away: the mapping keeps the old file, which is no longer reachable by
                // name
            }
            if (!Objects.equals(a.fileKey(), s.key()))
                continue; // the name now holds another file; the mapping keeps the old one
            String change = a.size() != s.size()
                    ? "size " + s.size() + " -> " + a.size() + " bytes"
                    : !a.lastModifiedTime().equals(s.modified())
                            ? "modified " + s.modified() + " -> " + a.lastModifiedTime()
                            : null;
            if (change != null)
                throw new ModelFormatException(
                        s.file(),
                        "changed on disk while it was mapped (" + change + "); open the model "
                                + "again, or read it into memory (--no-mmap, EngineOptions.withMmap(false))");
        }
    }
}
