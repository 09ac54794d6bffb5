package io.gossgpu.model.safetensors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.GossException;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.DType;
import io.gossgpu.model.FileBytes;
import io.gossgpu.model.FormatProbes;
import io.gossgpu.model.Json;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.HfTensorLayout;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TensorSpec;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every way a safetensors checkpoint can be broken gives one ModelFormatException naming the file (and tensor). */
class SafetensorsValidationTest {
    static final TestModelGenerator G = new TestModelGenerator(TestModelPresets.tiny(), 7);

    @TempDir
    Path tmp;

    Path orig;
    Path file;

    @BeforeEach
    void writeValidModel() {
        orig = tmp.resolve("original");
        SafetensorsWriter.writeOriginal(G, orig);
        file = orig.resolve("model.safetensors");
    }

    // ---- helpers -------------------------------------------------------------------------------

    /** Opens {@code dir} (both with and without mmap) and builds its weights, expecting a ModelFormatException. */
    static ModelFormatException fails(Path dir, String... mentions) {
        ModelFormatException first = null;
        for (boolean mmap : new boolean[] {true, false}) {
            ModelFormatException e = assertThrows(ModelFormatException.class, () -> {
                try (Checkpoint c = Checkpoint.open(dir, new LoadOptions(mmap))) {
                    ModelWeights.of(c);
                }
            });
            assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
            for (String m : mentions) assertTrue(e.getMessage().contains(m), "'" + m + "' not in: " + e.getMessage());
            if (first == null) first = e;
            else assertEquals(first.getMessage(), e.getMessage());
        }
        return first;
    }

    ModelFormatException failsNamingFile(String... mentions) {
        String[] all = Arrays.copyOf(mentions, mentions.length + 1);
        all[mentions.length] = file.toString();
        return fails(orig, all);
    }

    static byte[] read(Path f) {
        try {
            return Files.readAllBytes(f);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static void write(Path f, byte[] b) {
        try {
            Files.write(f, b);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static long headerLength(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    /** Replaces the header of {@code f} with {@code header} (raw bytes), keeping the data section. */
    static void replaceHeader(Path f, byte[] header) {
        byte[] b = read(f);
        int n = (int) headerLength(b);
        byte[] data = Arrays.copyOfRange(b, 8 + n, b.length);
        ByteBuffer out = ByteBuffer.allocate(8 + header.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(header.length).put(header).put(data);
        write(f, out.array());
    }

    static ObjectNode header(Path f) {
        byte[] b = read(f);
        int n = (int) headerLength(b);
        try {
            return (ObjectNode) Json.MAPPER.readTree(new String(b, 8, n, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Edits the header JSON of {@code f}, keeping the data section. */
    static void editHeader(Path f, Consumer<ObjectNode> edit) {
        ObjectNode h = header(f);
        edit.accept(h);
        replaceHeader(f, h.toString().getBytes(StandardCharsets.UTF_8));
    }

    static void appendBytes(Path f, int n) {
        byte[] b = read(f);
        write(f, Arrays.copyOf(b, b.length + n));
    }

    static void setLong(Path f, int at, long v) {
        byte[] b = read(f);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(at, v);
        write(f, b);
    }

    /** An original/ folder with the generator's tensors changed by {@code edit}. */
    Path originalWith(Consumer<List<SafetensorsFileWriter.Tensor>> edit) {
        Path dir = tmp.resolve("edited");
        SafetensorsWriter.writeOriginal(G, dir);
        List<SafetensorsFileWriter.Tensor> ts = new ArrayList<>();
        for (TensorSpec t : G.originalTensors())
            ts.add(new SafetensorsFileWriter.Tensor(t.name(), t.dtype(), t.shape(), s -> G.fill(t, s)));
        edit.accept(ts);
        SafetensorsFileWriter.write(dir.resolve("model.safetensors"), ts, SafetensorsWriter.FILE_METADATA);
        return dir;
    }

    static void editConfig(Path dir, Consumer<ObjectNode> edit) {
        ObjectNode c = (ObjectNode) Json.readObjectFile(dir.resolve("config.json"));
        edit.accept(c);
        SafetensorsWriter.writeJson(dir.resolve("config.json"), c);
    }

    // ---- the file frame --------------------------------------------------------------------------

    @Test
    void fileShorterThanEightBytes() {
        write(file, new byte[] {1, 2, 3, 4, 5});
        failsNamingFile("shorter than the 8-byte");
        write(file, new byte[0]);
        failsNamingFile("0 bytes");
    }

    @Test
    void headerLengthPastEndOfFile() {
        setLong(file, 0, read(file).length);
        failsNamingFile("runs past the end of the file");
    }

    @Test
    void absurdHeaderLength() {
        setLong(file, 0, 1L << 40);
        failsNamingFile("absurd");
        setLong(file, 0, -5);
        failsNamingFile("absurd");
    }

    @Test
    void headerNotUtf8() {
        byte[] h = header(file).toString().getBytes(StandardCharsets.UTF_8);
        int at = new String(h, StandardCharsets.UTF_8).indexOf("BF16");
        h[at + 1] = (byte) 0xC0; // an overlong-encoding lead byte: never valid UTF-8
        replaceHeader(file, h);
        failsNamingFile("not valid UTF-8");
    }

    @Test
    void headerNotJson() {
        String good = header(file).toString();
        replaceHeader(file, "{\"a\": {\"dtype\": \"U8\",".getBytes(StandardCharsets.UTF_8));
        failsNamingFile("invalid JSON");
        replaceHeader(file, (good + " {}").getBytes(StandardCharsets.UTF_8));
        failsNamingFile("invalid JSON");
        replaceHeader(file, "        ".getBytes(StandardCharsets.UTF_8));
        failsNamingFile("header is empty");
    }

    @Test
    void headerWithDuplicateTensorIsRejected() {
        String h = header(file).toString();
        String entry = "\"norm.scale\":" + header(file).get("norm.scale") + ",";
        replaceHeader(file, ("{" + entry + h.substring(1)).getBytes(StandardCharsets.UTF_8));
        failsNamingFile("norm.scale");
    }

    @Test
    void headerOfWrongJsonShape() {
        replaceHeader(file, "[1, 2, 3]".getBytes(StandardCharsets.UTF_8));
        failsNamingFile("must be a JSON object");
        writeValidModel();
        editHeader(file, h -> h.put("norm.scale", 3));
        failsNamingFile("'norm.scale'", "must be an object");
        writeValidModel();
        editHeader(file, h -> ((ObjectNode) h.get("norm.scale")).put("shape", "96"));
        failsNamingFile("'norm.scale'", "shape must be an array");
        writeValidModel();
        editHeader(
                file,
                h -> ((ObjectNode) h.get("norm.scale")).putArray("data_offsets").add(1));
        failsNamingFile("'norm.scale'", "data_offsets must be an array [begin, end]");
        writeValidModel();
        editHeader(
                file, h -> ((ObjectNode) h.get("norm.scale")).putArray("shape").add(96.5));
        failsNamingFile("'norm.scale'", "shape must hold integers");
        writeValidModel();
        editHeader(file, h -> ((ObjectNode) h.get("norm.scale")).put("dtype", 16));
        failsNamingFile("'norm.scale'", "dtype must be a string");
        writeValidModel();
        editHeader(file, h -> h.put("__metadata__", "pt"));
        failsNamingFile("__metadata__");
    }

    @Test
    void entryMissingAField() {
        for (String field : List.of("dtype", "shape", "data_offsets")) {
            writeValidModel();
            editHeader(file, h -> ((ObjectNode) h.get("block.1.attn.sinks")).remove(field));
            failsNamingFile("'block.1.attn.sinks'", "no " + field);
        }
    }

    @Test
    void negativeDimension() {
        editHeader(file, h -> ((ArrayNode) h.get("block.0.mlp.gate.weight").get("shape")).set(0, -6));
        failsNamingFile("'block.0.mlp.gate.weight'", "shape holds -6");
    }

    @Test
    void byteCountDisagreesWithShape() {
        editHeader(file, h -> ((ArrayNode) h.get("block.0.mlp.gate.weight").get("shape")).set(0, 5));
        failsNamingFile("'block.0.mlp.gate.weight'", "needs 960 bytes", "hold 1152");
        writeValidModel();
        // shape whose element count overflows a long
        editHeader(file, h -> ((ArrayNode) h.get("block.0.mlp.gate.weight").get("shape")).set(0, Long.MAX_VALUE));
        failsNamingFile("'block.0.mlp.gate.weight'", "too many elements");
        writeValidModel();
        // zero elements, but dimensions whose product no long can count
        editHeader(file, h -> {
            ArrayNode shape = (ArrayNode) h.get("block.0.attn.sinks").get("shape");
            shape.removeAll().add(1L << 40).add(1L << 40).add(0);
            ((ArrayNode) h.get("block.0.attn.sinks").get("data_offsets"))
                    .set(1, h.get("block.0.attn.sinks").get("data_offsets").get(0));
        });
        failsNamingFile("'block.0.attn.sinks'", "too many elements");
    }

    @Test
    void offsetsPastEndOfFile() {
        byte[] b = read(file);
        write(file, Arrays.copyOf(b, b.length - 100));
        failsNamingFile("'unembedding.weight'", "run past the end of the file");
        writeValidModel();
        editHeader(file, h -> ((ArrayNode) h.get("norm.scale").get("data_offsets")).set(1, Long.MAX_VALUE));
        failsNamingFile("'norm.scale'", "run past the end");
        writeValidModel();
        editHeader(
                file,
                h -> ((ArrayNode) h.get("norm.scale").get("data_offsets"))
                        .set(1, new java.math.BigInteger("99999999999999999999")));
        failsNamingFile("'norm.scale'", "outside 0..");
    }

    @Test
    void overlappingTensors() {
        editHeader(file, h -> {
            ArrayNode sinks = (ArrayNode) h.get("block.0.attn.sinks").get("data_offsets");
            ArrayNode bias = (ArrayNode) h.get("block.0.attn.qkv.bias").get("data_offsets");
            sinks.set(0, bias.get(0).longValue());
            sinks.set(1, bias.get(0).longValue() + 32);
        });
        failsNamingFile("overlap");
    }

    @Test
    void holesAndTrailingBytesInTheDataSection() {
        appendBytes(file, 3);
        failsNamingFile("3 trailing bytes");
        writeValidModel();
        editHeader(file, h -> h.remove("block.0.attn.sinks"));
        failsNamingFile("hole in the data section");
    }

    @Test
    void badTensorNames() {
        String h = header(file).toString().replace("\"norm.scale\"", "\"norm\\ud800scale\"");
        replaceHeader(file, h.getBytes(StandardCharsets.UTF_8));
        failsNamingFile("tensor name that is not valid UTF-8");
    }

    @Test
    void unknownAndUnsupportedDtypes() {
        editHeader(file, h -> ((ObjectNode) h.get("norm.scale")).put("dtype", "Q7"));
        failsNamingFile("'norm.scale'", "unknown dtype 'Q7'");
        for (String d : List.of("F64", "I64", "F8_E4M3", "BOOL")) {
            writeValidModel();
            editHeader(file, h -> ((ObjectNode) h.get("norm.scale")).put("dtype", d));
            failsNamingFile("'norm.scale'", "unsupported dtype " + d);
        }
    }

    @Test
    void allSupportedDtypesAreRead() throws IOException {
        Path dir = tmp.resolve("dtypes");
        Files.createDirectories(dir);
        List<SafetensorsFileWriter.Tensor> ts = new ArrayList<>();
        for (DType d : List.of(DType.F32, DType.F16, DType.BF16, DType.U8, DType.I32))
            ts.add(new SafetensorsFileWriter.Tensor("t." + d, d, new long[] {3, 5}, s -> s.fill((byte) 1)));
        ts.add(new SafetensorsFileWriter.Tensor("empty", DType.F32, new long[] {0, 4}, s -> {}));
        ts.add(new SafetensorsFileWriter.Tensor("scalar", DType.I32, new long[] {}, s -> s.fill((byte) 2)));
        Path f = dir.resolve("x.safetensors");
        SafetensorsFileWriter.write(f, ts, java.util.Map.of());
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            SafetensorsHeader h = SafetensorsHeader.parse(f, FileBytes.load(f, arena, LoadOptions.defaults()));
            assertEquals(7, h.entries().size());
            assertEquals(0, h.dataStart() % 64);
            assertEquals(DType.I32, h.entries().getLast().dtype());
        }
    }

    // ---- ModelWeights over a read checkpoint -------------------------------------------------------

    @Test
    void wrongShapeMissingAndUnexpectedTensorsAreNamed() {
        Path dir = originalWith(ts -> ts.replaceAll(t -> t.name().equals("block.2.attn.sinks")
                ? new SafetensorsFileWriter.Tensor(t.name(), DType.BF16, new long[] {15}, s -> s.fill((byte) 0))
                : t));
        fails(
                dir,
                dir.resolve("model.safetensors")
                        + ": tensor 'block.2.attn.sinks': has shape [15], expected [16] from config.json: num_attention_heads 16");
        dir = originalWith(ts -> ts.removeIf(t -> t.name().equals("block.1.mlp.mlp2_bias")));
        fails(dir, "'block.1.mlp.mlp2_bias'", "missing");
        dir = originalWith(ts -> ts.add(
                new SafetensorsFileWriter.Tensor("block.1.attn.rotary.inv_freq", DType.F32, new long[] {8}, s -> {})));
        fails(dir, "'block.1.attn.rotary.inv_freq'", "unexpected");
        dir = originalWith(ts -> ts.removeIf(t -> t.name().startsWith("block.2.")));
        fails(dir, "'block.2.");
    }

    /** A transposed matrix said "invalid view (rows 0+256) of 1x96x320", with no file and no expected shape. */
    @Test
    void aTransposedTensorNamesItsFileTheTensorAndBothShapes() {
        Path dir = originalWith(ts -> ts.replaceAll(t -> replace(t, "block.0.attn.qkv.weight", DType.BF16, 96, 320)));
        fails(
                dir,
                dir.resolve("model.safetensors")
                        + ": tensor 'block.0.attn.qkv.weight': has shape [96, 320] (transposed?), "
                        + "expected [320, 96] from config.json: (num_attention_heads 16 + 2·num_key_value_heads 2)·head_dim 16, hidden_size 96");
        dir = originalWith(
                ts -> ts.replaceAll(t -> replace(t, "block.2.mlp.mlp1_weight.blocks", DType.U8, 6, 96, 10, 16)));
        fails(
                dir,
                "'block.2.mlp.mlp1_weight.blocks': has shape [6, 96, 10, 16], expected [6, 320, 3, 16] from config.json: "
                        + "num_experts 6, 2·intermediate_size 160, hidden_size 96/32, 16 bytes per MXFP4 block");
        dir = hfWith(
                ts -> ts.replaceAll(t -> replace(t, "model.layers.2.self_attn.o_proj.weight", DType.BF16, 256, 96)));
        fails(
                dir,
                dir.resolve("model.safetensors")
                        + ": tensor 'model.layers.2.self_attn.o_proj.weight': has shape [256, 96] "
                        + "(transposed?), expected [96, 256] from config.json: hidden_size 96, num_attention_heads 16·head_dim 16");
    }

    static SafetensorsFileWriter.Tensor replace(
            SafetensorsFileWriter.Tensor t, String name, DType dtype, long... shape) {
        return t.name().equals(name)
                ? new SafetensorsFileWriter.Tensor(name, dtype, shape, s -> s.fill((byte) 0x3f))
                : t;
    }

    @Test
    void tensorsOfTheWrongDtypeOrRankAreNamed() {
        Path dir = originalWith(ts -> ts.replaceAll(t -> replace(t, "block.0.attn.sinks", DType.U8, 16)));
        fails(dir, "'block.0.attn.sinks'", "U8");
        dir = originalWith(ts -> ts.replaceAll(t -> replace(t, "norm.scale", DType.BF16)));
        fails(dir, "'norm.scale'", "[]");
        dir = originalWith(ts -> ts.replaceAll(t -> replace(t, "block.1.mlp.gate.bias", DType.BF16, 1, 1, 1, 6)));
        fails(dir, "'block.1.mlp.gate.bias'", "[1, 1, 1, 6]");
        dir = originalWith(
                ts -> ts.replaceAll(t -> replace(t, "block.1.mlp.mlp2_weight.blocks", DType.BF16, 6, 96, 5, 16)));
        fails(dir, "'block.1.mlp.mlp2_weight.blocks'", "BF16");
        // scales with the right byte count but the wrong shape would be addressed wrongly
        dir = originalWith(ts -> ts.replaceAll(t -> replace(t, "block.1.mlp.mlp2_weight.scales", DType.U8, 6, 5, 96)));
        fails(dir, "'block.1.mlp.mlp2_weight.scales'", "[6, 5, 96]");
    }

    /** A single-file HF folder (no index) with the HF tensors changed by {@code edit}. */
    Path hfWith(Consumer<List<SafetensorsFileWriter.Tensor>> edit) {
        Path dir = tmp.resolve("hf-edited");
        SafetensorsWriter.writeHf(G, dir, Long.MAX_VALUE);
        try {
            Files.delete(dir.resolve(ShardIndex.FILE));
            Files.delete(dir.resolve("model-00001-of-00001.safetensors"));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        List<SafetensorsFileWriter.Tensor> ts = new ArrayList<>();
        for (HfTensorLayout.Part p : HfTensorLayout.of(G.config(), G.originalTensors()))
            ts.add(new SafetensorsFileWriter.Tensor(p.name(), p.source().dtype(), p.shape(), seg -> {
                try (var arena = java.lang.foreign.Arena.ofConfined()) {
                    var src = arena.allocate(p.source().byteSize());
                    G.fill(p.source(), src);
                    java.lang.foreign.MemorySegment.copy(src, p.byteOffset(), seg, 0, seg.byteSize());
                }
            }));
        edit.accept(ts);
        SafetensorsFileWriter.write(dir.resolve("model.safetensors"), ts, SafetensorsWriter.FILE_METADATA);
        return dir;
    }

    @Test
    void hfWrongShapeMissingAndUnexpectedTensorsAreNamed() {
        try (Checkpoint c = Checkpoint.open(hfWith(ts -> {}), LoadOptions.defaults())) {
            ModelWeights.of(c); // the helper itself writes a valid model
        }
        Path dir = hfWith(
                ts -> ts.replaceAll(t -> replace(t, "model.layers.1.self_attn.k_proj.weight", DType.BF16, 16, 96)));
        fails(
                dir,
                dir.resolve("model.safetensors")
                        + ": tensor 'model.layers.1.self_attn.k_proj.weight': has shape [16, 96], "
                        + "expected [32, 96] from config.json: num_key_value_heads 2·head_dim 16, hidden_size 96");
        dir = hfWith(ts -> ts.removeIf(t -> t.name().equals("model.layers.2.self_attn.v_proj.bias")));
        fails(dir, "'model.layers.2.self_attn.v_proj.bias'", "missing");
        dir = hfWith(ts -> ts.add(new SafetensorsFileWriter.Tensor(
                "model.layers.0.self_attn.rotary_emb.inv_freq", DType.F32, new long[] {8}, s -> {})));
        fails(dir, "'model.layers.0.self_attn.rotary_emb.inv_freq'", "unexpected");
        dir = hfWith(ts ->
                ts.replaceAll(t -> replace(t, "model.layers.0.mlp.experts.down_proj_scales", DType.U8, 6, 96, 4)));
        fails(dir, "'model.layers.0.mlp.experts.down_proj_scales'");
    }

    // ---- config.json -----------------------------------------------------------------------------

    @Test
    void missingConfig() throws IOException {
        Files.delete(orig.resolve("config.json"));
        // without config.json the folder is not recognised as a model at all
        assertThrows(GossException.class, () -> Checkpoint.open(orig, LoadOptions.defaults()));
        ModelFormatException e = assertThrows(
                ModelFormatException.class, () -> SafetensorsReader.openOriginal(orig, LoadOptions.defaults()));
        assertTrue(e.getMessage().contains("config.json"), e.getMessage());
        assertThrows(ModelFormatException.class, () -> SafetensorsReader.openHf(orig, LoadOptions.defaults()));
    }

    @Test
    void badOriginalConfigValues() {
        Path cfg = orig.resolve("config.json");
        editConfig(orig, c -> c.remove("num_experts"));
        fails(orig, cfg.toString(), "no num_experts");
        writeValidModel();
        editConfig(orig, c -> c.put("hidden_size", 100));
        fails(orig, cfg.toString(), "hidden_size 100 must be a multiple of 32");
        writeValidModel();
        editConfig(orig, c -> c.put("head_dim", "16"));
        fails(orig, cfg.toString(), "head_dim must be a number");
        writeValidModel();
        editConfig(orig, c -> c.put("vocab_size", 1031.5));
        fails(orig, cfg.toString(), "vocab_size must be an integer");
        writeValidModel();
        editConfig(orig, c -> c.put("num_hidden_layers", 1L << 33));
        fails(orig, cfg.toString(), "num_hidden_layers must be an integer");
        writeValidModel();
        editConfig(orig, c -> c.put("rope_theta", 1e300));
        fails(orig, cfg.toString(), "rope_theta is out of float range");
        writeValidModel();
        editConfig(orig, c -> c.put("experts_per_token", 9));
        fails(orig, cfg.toString(), "experts_per_token 9 exceeds num_experts 6");
        writeValidModel();
        write(cfg, "{\"num_hidden".getBytes(StandardCharsets.UTF_8));
        fails(orig, cfg.toString(), "invalid JSON");
        write(cfg, "[]".getBytes(StandardCharsets.UTF_8));
        fails(orig, cfg.toString(), "JSON object");
    }

    @Test
    void hfConfigChecks() {
        Path hf = tmp.resolve("hf");
        SafetensorsWriter.writeHf(G, hf, 200_000);
        Path cfg = hf.resolve("config.json");
        ObjectNode good = (ObjectNode) Json.readObjectFile(cfg);

        editConfig(hf, c -> ((ArrayNode) c.get("layer_types")).set(1, "sliding_attention"));
        fails(hf, cfg.toString(), "layer_types[1]", "full_attention");
        SafetensorsWriter.writeJson(cfg, good.deepCopy());
        editConfig(hf, c -> ((ArrayNode) c.get("layer_types")).remove(0));
        fails(hf, cfg.toString(), "layer_types lists 2 layers");
        SafetensorsWriter.writeJson(cfg, good.deepCopy());
        editConfig(hf, c -> ((ObjectNode) c.get("rope_scaling")).put("rope_type", "linear"));
        fails(hf, cfg.toString(), "rope_type", "yarn");
        SafetensorsWriter.writeJson(cfg, good.deepCopy());
        editConfig(hf, c -> c.remove("num_local_experts"));
        fails(hf, cfg.toString(), "no num_local_experts");
        SafetensorsWriter.writeJson(cfg, good.deepCopy());
        editConfig(hf, c -> c.put("model_type", "llama"));
        fails(hf, cfg.toString(), "model_type");

        // experts_per_token is accepted when num_experts_per_tok is absent
        SafetensorsWriter.writeJson(cfg, good.deepCopy());
        editConfig(hf, c -> c.remove("num_experts_per_tok"));
        try (Checkpoint c = Checkpoint.open(hf, LoadOptions.defaults())) {
            assertEquals(TestModelPresets.tiny(), c.config());
        }
    }

    @Test
    void isHfConfigNeverThrows() throws IOException {
        Path f = tmp.resolve("c.json");
        assertFalse(FormatProbes.isHfConfig(tmp.resolve("absent.json")));
        assertFalse(FormatProbes.isHfConfig(tmp));
        for (String s : List.of(
                "",
                "[]",
                "null",
                "{\"model_type\": 3}",
                "{\"architectures\": \"GptOssForCausalLM\"}",
                "{\"model_type\": \"gpt_oss\"",
                "{\"model_type\": \"llama\"}")) {
            Files.writeString(f, s);
            assertFalse(FormatProbes.isHfConfig(f), s);
        }
        Files.write(f, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, 2});
        assertFalse(FormatProbes.isHfConfig(f));
        Files.writeString(f, "{\"architectures\": [\"X\", \"GptOssForCausalLM\"]}");
        assertTrue(FormatProbes.isHfConfig(f));
        Files.writeString(f, "{\"model_type\": \"gpt_oss\"}");
        assertTrue(FormatProbes.isHfConfig(f));
    }

    // ---- the HF shard index ------------------------------------------------------------------------

    Path hfModel() {
        Path hf = tmp.resolve("hf");
        SafetensorsWriter.writeHf(G, hf, 200_000);
        return hf;
    }

    static String shardOf(Path hf, String tensor) {
        return Json.readObjectFile(hf.resolve(ShardIndex.FILE))
                .get("weight_map")
                .get(tensor)
                .textValue();
    }

    static void editIndex(Path hf, Consumer<ObjectNode> edit) {
        ObjectNode idx = (ObjectNode) Json.readObjectFile(hf.resolve(ShardIndex.FILE));
        edit.accept((ObjectNode) idx.get("weight_map"));
        SafetensorsWriter.writeJson(hf.resolve(ShardIndex.FILE), idx);
    }

    @Test
    void tensorListedInIndexButMissingFromShard() {
        Path hf = hfModel();
        String shard = shardOf(hf, "model.norm.weight");
        editIndex(hf, m -> m.put("model.layers.0.self_attn.extra", shard));
        fails(hf, "'model.layers.0.self_attn.extra'", "missing from the shard", shard);
    }

    @Test
    void tensorInShardButNotInIndex() {
        Path hf = hfModel();
        editIndex(hf, m -> m.remove("model.norm.weight"));
        fails(hf, "'model.norm.weight'", "not listed in model.safetensors.index.json");
    }

    @Test
    void indexPlacesTensorInTheWrongShard() {
        Path hf = hfModel();
        String other = shardOf(hf, "lm_head.weight");
        assertFalse(other.equals(shardOf(hf, "model.embed_tokens.weight")));
        editIndex(hf, m -> m.put("model.embed_tokens.weight", other));
        fails(hf, "'model.embed_tokens.weight'", "places it in " + other);
    }

    @Test
    void missingShardAndBadShardNames() throws IOException {
        Path hf = hfModel();
        JsonNode good = Json.readObjectFile(hf.resolve(ShardIndex.FILE));
        String shard = shardOf(hf, "lm_head.weight");
        Files.delete(hf.resolve(shard));
        fails(hf, shard, "missing");
        for (String bad : List.of("../original/model.safetensors", "/etc/passwd", "model.bin")) {
            SafetensorsWriter.writeJson(hf.resolve(ShardIndex.FILE), (ObjectNode) good.deepCopy());
            editIndex(hf, m -> m.put("lm_head.weight", bad));
            fails(hf, ShardIndex.FILE, "'lm_head.weight'", "not a .safetensors file name");
        }
        editIndex(hf, m -> m.removeAll());
        fails(hf, ShardIndex.FILE, "weight_map is empty");
        Files.writeString(hf.resolve(ShardIndex.FILE), "{\"weight_map\": [1]}");
        fails(hf, ShardIndex.FILE, "weight_map must be an object");
    }

    @Test
    void tensorStoredInTwoShards() {
        Path hf = hfModel();
        // a copy of a shard, listed in the index under a tensor of its own, repeats the shard's tensors
        String shard = shardOf(hf, "model.embed_tokens.weight");
        try {
            Files.copy(hf.resolve(shard), hf.resolve("model-99999-of-99999.safetensors"));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        editIndex(hf, m -> m.put("zzz", "model-99999-of-99999.safetensors"));
        fails(hf, "'model.embed_tokens.weight'", "also stored in " + shard);
    }
}
