/**
 * The {@code opencl} backend through LWJGL: {@link io.gossgpu.opencl.OpenClBackendProvider} (ServiceLoader),
 * {@link io.gossgpu.opencl.OpenClBackend} (the ops; {@code wrap(context, queue, options)} for applications with their
 * own OpenCL objects), {@link io.gossgpu.opencl.OpenCl} (lazy loading, device listing for {@code goss-gpu info}:
 * {@link io.gossgpu.opencl.OpenCl#deviceListing(String)}, device selection) and the launch knobs
 * ({@code GOSS_OPENCL_<KERNEL>_<KNOB>}, see {@code Knobs}). Kernels: {@code kernels/opencl/*.cl}.
 */
package io.gossgpu.opencl;
