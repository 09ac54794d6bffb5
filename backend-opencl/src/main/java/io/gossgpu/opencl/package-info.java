/**
 * The {@code opencl} backend through LWJGL, on the device layer ({@link io.gossgpu.device.DeviceBackend}):
 * {@link io.gossgpu.opencl.OpenClBackendProvider} (ServiceLoader), {@link io.gossgpu.opencl.OpenClBackend} (the
 * launchers; {@code wrap(context, queue, options)} for applications with their own OpenCL objects), {@code OpenClLauncher}
 * (the device layer's launch interface: kernels by name, the params records of {@code io.gossgpu.device}), {@code OpenClDriver}
 * (cl_mem buffers, copies, memory accounting), {@code OpenClProgram} (the kernels of {@code backend-opencl/kernels/*.cl}),
 * {@code OpenClWeights}, {@link io.gossgpu.opencl.OpenCl} (lazy loading, device listing for {@code goss-gpu info}:
 * {@link io.gossgpu.opencl.OpenCl#deviceListing(String)}, device selection) and the launch knobs
 * ({@code GOSS_OPENCL_<OP>_<KNOB>}, see {@code OpenClKnobs}).
 */
package io.gossgpu.opencl;
