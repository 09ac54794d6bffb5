package io.gossgpu.model.gguf;

import io.gossgpu.model.DType;

/** The ggml tensor types this engine reads from GGUF files, by their {@code ggml_type} ids (ggml.h). */
public enum GgmlType {
    F32(0, DType.F32),
    F16(1, DType.F16),
    Q4_0(2, DType.Q4_0),
    Q4_1(3, DType.Q4_1),
    /** Id 4 was ggml's Q4_2, removed before GGUF existed; Ollama's first gpt-oss blobs use it for their MXFP4. */
    MXFP4_OLLAMA(4, DType.MXFP4_OLLAMA),
    Q5_0(6, DType.Q5_0),
    Q5_1(7, DType.Q5_1),
    Q8_0(8, DType.Q8_0),
    Q2_K(10, DType.Q2_K),
    Q3_K(11, DType.Q3_K),
    Q4_K(12, DType.Q4_K),
    Q5_K(13, DType.Q5_K),
    Q6_K(14, DType.Q6_K),
    IQ4_NL(20, DType.IQ4_NL),
    IQ4_XS(23, DType.IQ4_XS),
    BF16(30, DType.BF16),
    MXFP4(39, DType.MXFP4);

    private final int id;
    private final DType dtype;

    GgmlType(int id, DType dtype) {
        this.id = id;
        this.dtype = dtype;
    }

    public int id() {
        return id;
    }

    public DType dtype() {
        return dtype;
    }

    /** ggml's names of its types by id (ggml.h), for messages about the ones goss-gpu does not read. */
    private static final String[] GGML_NAMES = {
        "F32",
        "F16",
        "Q4_0",
        "Q4_1",
        "Q4_2",
        "Q4_3",
        "Q5_0",
        "Q5_1",
        "Q8_0",
        "Q8_1",
        "Q2_K",
        "Q3_K",
        "Q4_K",
        "Q5_K",
        "Q6_K",
        "Q8_K",
        "IQ2_XXS",
        "IQ2_XS",
        "IQ3_XXS",
        "IQ1_S",
        "IQ4_NL",
        "IQ3_S",
        "IQ2_S",
        "IQ4_XS",
        "I8",
        "I16",
        "I32",
        "I64",
        "F64",
        "IQ1_M",
        "BF16",
        "Q4_0_4_4",
        "Q4_0_4_8",
        "Q4_0_8_8",
        "TQ1_0",
        "TQ2_0",
        "IQ4_NL_4_4",
        "IQ4_NL_4_8",
        "IQ4_NL_8_8",
        "MXFP4"
    };

    /** {@code id} with ggml's name for it when it has one: "16 (IQ2_XXS)". */
    static String describe(long id) {
        return id >= 0 && id < GGML_NAMES.length ? id + " (" + GGML_NAMES[(int) id] + ")" : Long.toString(id);
    }

    /** The supported type with file id {@code id}, or null. */
    public static GgmlType byId(long id) {
        for (GgmlType t : values()) if (t.id == id) return t;
        return null;
    }

    public static GgmlType of(DType dtype) {
        for (GgmlType t : values()) if (t.dtype == dtype) return t;
        throw new IllegalArgumentException("no GGUF tensor type for " + dtype);
    }
}
