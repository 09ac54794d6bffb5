/**
 * What the cpu backend computes with, below everything else of it: the per-row float kernels ({@link
 * io.gossgpu.cpu.compute.CpuKernels}, scalar and Vector API) and the worker pool ({@link io.gossgpu.cpu.compute.CpuPool}).
 * The layers go one way: {@code io.gossgpu.cpu} (the backend and its jobs) uses {@code io.gossgpu.cpu.matmul} (the
 * matrices), and both use this package, which uses neither.
 */
package io.gossgpu.cpu.compute;
