package io.gossgpu.cuda;

/**
 * A kernel entry point, declared once by the launcher that runs it: the kernel file it is in ({@code kernels/cuda/FILE.cu},
 * packaged as {@code FILE.sm_XX.ptx}), its {@code extern "C"} name, and its parameters in the order the launcher packs
 * them ({@link KernelArgs}: {@code p} a pointer or 64-bit integer, {@code i} a 32-bit integer, {@code f} a float).
 * CudaKernelSignaturesTest checks every declared entry against the packaged PTX; the CUDA emulator finds the entry
 * points in the sources by itself.
 */
record CudaEntry(String file, String name, String params) {
}
