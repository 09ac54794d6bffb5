package io.gossgpu.cuda;

import io.gossgpu.device.KernelParams;

/**
 * A kernel entry point, declared once by the launcher that runs it: the kernel file it is in ({@code backend-cuda/kernels/FILE.cu},
 * packaged as {@code FILE.sm_XX.ptx}), its {@code extern "C"} name, and its parameters as every kernel there takes them
 * (backend-cuda/kernels/README.md): {@code buffers} device pointers first, then one params struct by value, mirrored by the
 * record {@code params} (the struct's name, fields and C layout). The launch packs them in that order
 * ({@link KernelArgs#ptr} per buffer, then {@link KernelArgs#params} with a {@code params} value) and
 * {@link CudaKernel#launch} refuses any other shape; CudaKernelSignaturesTest checks every declared entry against the
 * packaged PTX (the pointers, and the struct's size and alignment against the record's layout) and the records against
 * the structs of the sources; the CUDA emulator finds the entry points in the sources by itself.
 */
record CudaEntry(String file, String name, int buffers, Class<? extends KernelParams> params) {

    /** The parameters as the PTX lists them: {@code p} per pointer, then {@code {size,align}} for the struct. */
    String signature() {
        var layout = KernelParams.layout(params);
        return "p".repeat(buffers) + "{" + layout.byteSize() + "," + layout.byteAlignment() + "}";
    }

    /** Throws unless {@code args} are this entry's buffers and then a {@link #params} struct. */
    void check(KernelArgs args) {
        if (args.count() != buffers + 1 || args.paramsType() != params)
            throw new IllegalArgumentException(
                    "CUDA kernel " + name + " takes " + buffers + " buffers and a " + params.getSimpleName()
                            + "; the launch passed " + args.count() + " arguments"
                            + (args.paramsType() == null
                                    ? " and no params struct"
                                    : ", the struct a " + args.paramsType().getSimpleName()));
    }
}
