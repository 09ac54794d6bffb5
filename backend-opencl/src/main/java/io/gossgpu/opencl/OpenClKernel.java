package io.gossgpu.opencl;

/** A kernel of the built program: its name in kernels/opencl (what errors name) and its {@code cl_kernel} handle. */
record OpenClKernel(String name, long handle) {
}
