package io.gossgpu.opencl;

import io.gossgpu.device.DeviceKernel;

/**
 * A kernel of the built program: its name in backend-opencl/kernels (what errors name), its {@code cl_kernel} handle and the
 * largest work-group it can run on the device ({@code CL_KERNEL_WORK_GROUP_SIZE}: registers, local memory).
 */
record OpenClKernel(String name, long handle, int maxThreads) implements DeviceKernel {}
