package io.gossgpu.cli;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.KvType;
import picocli.CommandLine.Option;

/** {@code --kv-type}: how the KV cache stores keys and values, for every command that makes or prices one. */
final class KvTypeOption {
    @Option(
            names = "--kv-type",
            paramLabel = "TYPE",
            converter = Converter.class,
            description =
                    "How the KV cache stores keys and values: f32 (exact, 4 bytes a number), f16 or bf16 (2 bytes),"
                            + " q8_0 (34 bytes per 32 numbers). Default: GOSS_KV_TYPE, else f16.")
    KvType kvType;

    /** {@code o} with the type given, else GOSS_KV_TYPE's (read here, at the edge), else {@code o}'s (the library's default). */
    EngineOptions applyTo(EngineOptions o) {
        if (kvType != null) return o.withKvType(kvType);
        String env = System.getenv("GOSS_KV_TYPE");
        return env == null || env.isBlank() ? o : o.withKvType(KvType.parse(env));
    }

    /** Parses with {@link KvType#parse}, whose one-line error lists the choices. */
    static final class Converter implements picocli.CommandLine.ITypeConverter<KvType> {
        @Override
        public KvType convert(String value) {
            try {
                return KvType.parse(value);
            } catch (io.gossgpu.GossException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
