package io.gossgpu.model.gguf;

import io.gossgpu.model.DType;

/** The ggml tensor types this engine reads from GGUF files, by their {@code ggml_type} ids. */
public enum GgmlType {
    F32(0, DType.F32), F16(1, DType.F16), Q8_0(8, DType.Q8_0), BF16(30, DType.BF16), MXFP4(39, DType.MXFP4);

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
