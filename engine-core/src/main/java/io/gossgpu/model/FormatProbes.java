package io.gossgpu.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Which layout a file or folder holds, from its magic, file names and config.json alone: what {@link ModelLocation}
 * asks before anything is parsed. Here, below the format packages (model.gguf, model.safetensors), which read the
 * layouts; they use these too.
 */
public final class FormatProbes {
    private FormatProbes() {}

    /** True when {@code file} starts with the bytes "GGUF". */
    public static boolean isGguf(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4);
            while (b.hasRemaining()) if (ch.read(b) < 0) return false;
            return b.get(0) == 'G' && b.get(1) == 'G' && b.get(2) == 'U' && b.get(3) == 'F';
        } catch (IOException e) {
            return false;
        }
    }

    /** True when {@code configJson} is a Hugging Face gpt-oss config; false for anything else, garbage included. */
    public static boolean isHfConfig(Path configJson) {
        try {
            JsonNode c = Json.readObjectFile(configJson);
            JsonNode type = c.get("model_type");
            if (type != null && type.isTextual() && type.textValue().equals("gpt_oss")) return true;
            JsonNode arch = c.get("architectures");
            if (arch != null && arch.isArray())
                for (JsonNode a : arch) if (a.isTextual() && a.textValue().equals("GptOssForCausalLM")) return true;
            return false;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * True when {@code dir} looks like OpenAI's original/ folder: a config.json with the reference
     * ModelConfig's keys (and no Hugging Face model_type) next to at least one *.safetensors file.
     * gpt-oss-120b's original/ holds {@code model--0000N-of-00007.safetensors}, not model.safetensors.
     */
    public static boolean isOriginalFolder(Path dir) {
        try {
            JsonNode c = Json.readObjectFile(dir.resolve("config.json"));
            if (c.has("model_type") || !c.has("num_experts") || !c.has("experts_per_token")) return false;
            return !safetensorsFiles(dir).isEmpty();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The {@code *.safetensors} files of {@code dir}, in name order. */
    public static List<Path> safetensorsFiles(Path dir) {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.safetensors")) {
            for (Path p : ds) if (Files.isRegularFile(p)) files.add(p);
        } catch (IOException e) {
            throw new ModelFormatException(dir, "cannot list the folder (" + e.getMessage() + ")");
        }
        files.sort(null);
        return files;
    }
}
