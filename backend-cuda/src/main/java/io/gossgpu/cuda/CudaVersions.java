package io.gossgpu.cuda;

import java.util.Map;
import java.util.Optional;

/**
 * NVIDIA's version facts that decide whether a driver can run the packaged PTX: the CUDA release that introduced
 * each PTX ISA version (a driver JIT-compiles PTX up to the ISA of its own CUDA version; from the PTX ISA
 * release history), and the first Linux driver branch of each CUDA release (from the CUDA release notes).
 * Versions are encoded as {@code cuDriverGetVersion} does: 11080 is CUDA 11.8.
 */
final class CudaVersions {
    private CudaVersions() {}

    private static final Map<String, Integer> CUDA_OF_ISA = Map.ofEntries(
            Map.entry("6.3", 10000),
            Map.entry("6.4", 10010),
            Map.entry("6.5", 10020),
            Map.entry("7.0", 11000),
            Map.entry("7.1", 11010),
            Map.entry("7.2", 11020),
            Map.entry("7.3", 11030),
            Map.entry("7.4", 11040),
            Map.entry("7.5", 11050),
            Map.entry("7.6", 11060),
            Map.entry("7.7", 11070),
            Map.entry("7.8", 11080),
            Map.entry("8.0", 12000),
            Map.entry("8.1", 12010),
            Map.entry("8.2", 12020),
            Map.entry("8.3", 12030),
            Map.entry("8.4", 12040),
            Map.entry("8.5", 12050),
            Map.entry("8.6", 12070),
            Map.entry("8.7", 12080),
            Map.entry("8.8", 12090),
            Map.entry("9.0", 13000),
            Map.entry("9.1", 13010));

    private static final Map<Integer, String> LINUX_BRANCH = Map.ofEntries(
            Map.entry(10000, "R410"),
            Map.entry(10010, "R418"),
            Map.entry(10020, "R440"),
            Map.entry(11000, "R450"),
            Map.entry(11010, "R455"),
            Map.entry(11020, "R460"),
            Map.entry(11030, "R465"),
            Map.entry(11040, "R470"),
            Map.entry(11050, "R495"),
            Map.entry(11060, "R510"),
            Map.entry(11070, "R515"),
            Map.entry(11080, "R520"),
            Map.entry(12000, "R525"),
            Map.entry(12010, "R530"),
            Map.entry(12020, "R535"),
            Map.entry(12030, "R545"),
            Map.entry(12040, "R550"),
            Map.entry(12050, "R555"),
            Map.entry(12060, "R560"),
            Map.entry(12080, "R570"),
            Map.entry(12090, "R575"),
            Map.entry(13000, "R580"));

    /**
     * The driver functions of {@link io.gossgpu.cuda.bindings.Cuda} that arrived in CUDA 10.0 or later, with the
     * release that added each; every other function it binds is older ({@link #OLDER_THAN_CUDA_10}: the method name,
     * which for cuEventElapsedTime_v2 falls back to the old symbol on older drivers). A new binding
     * goes in one of the two ({@code CudaVersionsTest} fails otherwise), so that {@link #DRIVER_API_FLOOR} stays true.
     */
    static final Map<String, Integer> DRIVER_API_SINCE = Map.of(
            "cuStreamEndCapture",
            10000,
            "cuGraphLaunch",
            10000,
            "cuGraphExecDestroy",
            10000,
            "cuGraphDestroy",
            10000,
            "cuStreamBeginCapture_v2",
            10010,
            "cuDevicePrimaryCtxRelease_v2",
            11000,
            "cuGraphInstantiateWithFlags",
            11040);

    static final java.util.Set<String> OLDER_THAN_CUDA_10 = java.util.Set.of(
            "cuGetErrorName",
            "cuGetErrorString",
            "cuInit",
            "cuDriverGetVersion",
            "cuDeviceGetCount",
            "cuDeviceGet",
            "cuDeviceGetName",
            "cuDeviceGetAttribute",
            "cuDeviceTotalMem_v2",
            "cuDevicePrimaryCtxRetain",
            "cuCtxSetCurrent",
            "cuCtxGetCurrent",
            "cuCtxSynchronize",
            "cuMemGetInfo_v2",
            "cuStreamCreate",
            "cuStreamSynchronize",
            "cuStreamWaitEvent",
            "cuStreamDestroy_v2",
            "cuEventCreate",
            "cuEventRecord",
            "cuEventSynchronize",
            "cuEventElapsedTime_v2" /* CUDA 12.8; the binding falls back to cuEventElapsedTime */,
            "cuEventDestroy_v2",
            "cuModuleLoadDataEx",
            "cuModuleGetFunction",
            "cuModuleUnload",
            "cuFuncGetAttribute",
            "cuFuncSetAttribute",
            "cuLaunchKernel",
            "cuMemAlloc_v2",
            "cuMemFree_v2",
            "cuMemcpyHtoD_v2",
            "cuMemcpyDtoH_v2",
            "cuMemcpyDtoD_v2",
            "cuMemcpyHtoDAsync_v2",
            "cuMemcpyDtoHAsync_v2",
            "cuMemcpyDtoDAsync_v2",
            "cuMemsetD8_v2",
            "cuMemsetD32_v2",
            "cuMemsetD8Async",
            "cuMemsetD32Async",
            "cuMemHostAlloc",
            "cuMemFreeHost");

    /** The oldest driver that has every function the bindings call: CUDA 11.4, for cuGraphInstantiateWithFlags (CUDA graphs). */
    static final int DRIVER_API_FLOOR =
            DRIVER_API_SINCE.values().stream().mapToInt(Integer::intValue).max().orElseThrow();

    /** The first CUDA version whose driver loads PTX of this ISA ("7.0" → 11000), or empty for an ISA not in the table. */
    static Optional<Integer> cudaForIsa(String isa) {
        return Optional.ofNullable(CUDA_OF_ISA.get(isa));
    }

    /** "CUDA 11.0 (Linux driver R450 or newer)", or "CUDA 13.1" where the branch is not in the table. */
    static String describeCuda(int version) {
        String branch = LINUX_BRANCH.get(version);
        return "CUDA " + CudaDriver.versionString(version)
                + (branch != null ? " (Linux driver " + branch + " or newer)" : "");
    }
}
