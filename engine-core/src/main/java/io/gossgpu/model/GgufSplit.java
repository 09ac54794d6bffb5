package io.gossgpu.model;

import io.gossgpu.GossException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * llama.cpp's split GGUF (gguf-split, as published for gpt-oss-120b): files {@code NAME-00001-of-0000N.gguf}
 * to {@code NAME-0000N-of-0000N.gguf}, each a whole GGUF holding some of the tensors; the first also holds the
 * model's metadata, and every one says which shard it is under {@link #NO} (from 0), {@link #COUNT} and
 * {@link #TENSORS} (the tensors of all shards together).
 */
public final class GgufSplit {
    public static final String NO = "split.no", COUNT = "split.count", TENSORS = "split.tensors.count";

    private static final Pattern NAME = Pattern.compile("(.+)-(\\d{5})-of-(\\d{5})\\.gguf");

    private GgufSplit() {}

    /** The file name of shard {@code number} (from 1) of {@code count}. */
    public static String shardName(String base, int number, int count) {
        return String.format("%s-%05d-of-%05d.gguf", base, number, count);
    }

    /** The first shard of the split {@code file} belongs to, or {@code file} itself when it is not split. */
    public static Path firstShard(Path file) {
        Matcher m = NAME.matcher(file.getFileName().toString());
        if (!m.matches() || Integer.parseInt(m.group(2)) == 1) return file;
        return file.resolveSibling(shardName(m.group(1), 1, Integer.parseInt(m.group(3))));
    }

    /** Every file of the model whose first file is {@code first}: its shards in order, or just itself. */
    public static List<Path> shards(Path first) {
        Matcher m = NAME.matcher(first.getFileName().toString());
        if (!m.matches()) return List.of(first);
        int count = Integer.parseInt(m.group(3));
        if (count < 1) throw new GossException(first + ": a split GGUF of " + count + " files");
        List<Path> out = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            Path p = first.resolveSibling(shardName(m.group(1), i, count));
            if (!Files.isRegularFile(p))
                throw new GossException(first + ": split GGUF shard " + p.getFileName() + " is missing");
            out.add(p);
        }
        return out;
    }

    /** The models among {@code ggufFiles}: each split set once (as its first shard), other files as they are. */
    public static List<Path> models(List<Path> ggufFiles) {
        Set<Path> out = new LinkedHashSet<>();
        for (Path p : ggufFiles) out.add(firstShard(p));
        return List.copyOf(out);
    }
}
