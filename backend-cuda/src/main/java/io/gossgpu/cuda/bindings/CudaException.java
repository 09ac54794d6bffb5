package io.gossgpu.cuda.bindings;

import io.gossgpu.GossException;

/**
 * A failed CUDA driver call, or CUDA being unavailable. The message is one line, for example
 * {@code cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)}.
 */
public class CudaException extends GossException {

    private static final long serialVersionUID = 1L;

    /** The CUresult of the failed call, or -1 where no call failed (CUDA unavailable, bad argument). */
    private final int result;

    public CudaException(String message) {
        this(message, -1);
    }

    public CudaException(String message, int result) {
        super(message);
        this.result = result;
    }

    public int result() {
        return result;
    }

    /**
     * The one helper every CUresult goes through: returns normally for CUDA_SUCCESS, otherwise throws
     * {@code "<call> failed: <error name> (<error string>)"}.
     */
    public static void check(String call, int result) {
        if (result != Cuda.CUDA_SUCCESS) {
            throw new CudaException(message(call, result, Cuda.errorName(result), Cuda.errorString(result)), result);
        }
    }

    /** Like {@link #check} with extra context after the error, e.g. the JIT log of a failed module load. */
    public static void check(String call, int result, String detail) {
        if (result != Cuda.CUDA_SUCCESS) {
            String m = message(call, result, Cuda.errorName(result), Cuda.errorString(result));
            throw new CudaException(detail == null || detail.isBlank() ? m : m + ": " + oneLine(detail), result);
        }
    }

    /** Formats the message; the name and string may be null where the driver cannot give them. */
    public static String message(String call, int result, String errorName, String errorString) {
        String name = errorName != null ? errorName : "CUDA error " + result;
        String text = errorString != null ? " (" + errorString + ")" : "";
        return oneLine(call + " failed: " + name + text);
    }

    /** Folds a multi-line text (a JIT log) into one line. */
    static String oneLine(String s) {
        return s.strip().replaceAll("\\s*[\\r\\n]+\\s*", " | ");
    }
}
