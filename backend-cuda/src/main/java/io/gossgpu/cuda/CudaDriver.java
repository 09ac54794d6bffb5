package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import io.gossgpu.cuda.bindings.CudaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Entry point to the CUDA driver: whether it can be used here, its version, and its devices.
 * Nothing native happens until {@link #availability()} (or another method) is called.
 */
public final class CudaDriver {

    private CudaDriver() {}

    /**
     * Whether CUDA can be used, and if not, why, in one line starting with {@code "CUDA unavailable: "}.
     *
     * @param available   true when the driver initialised and has at least one device
     * @param reason      the one-line reason when not available, else {@code "available"}
     * @param driverVersion {@code cuDriverGetVersion}, e.g. 13000 for CUDA 13.0; 0 when unknown
     * @param deviceCount the number of CUDA devices; 0 when not available
     */
    public record Availability(boolean available, String reason, int driverVersion, int deviceCount) {
        static Availability no(String reason) {
            return new Availability(false, reason, 0, 0);
        }
    }

    private static volatile Availability availability;

    /** Opens the driver and calls {@code cuInit} once; the answer is cached. Never throws. */
    public static Availability availability() {
        Availability a = availability;
        if (a == null) {
            synchronized (CudaDriver.class) {
                a = availability;
                if (a == null) {
                    a = probe();
                    availability = a;
                }
            }
        }
        return a;
    }

    /**
     * What the CUDA backend should report for device 0: {@link #backendAvailability(int)}.
     */
    public static Availability backendAvailability() {
        return backendAvailability(0);
    }

    /**
     * What the CUDA backend should report for device {@code ordinal}: {@link #availability()}, and when the driver
     * is fine, whether the build packaged the PTX kernels ({@code "CUDA unavailable: CUDA kernels were not built ..."}),
     * whether the device is one they target, and whether this driver can load the PTX that the device would run
     * (one line naming the CUDA version and driver branch it needs).
     */
    public static Availability backendAvailability(int ordinal) {
        return backendAvailability(availability(), ordinal);
    }

    static Availability backendAvailability(Availability a, int ordinal) {
        if (!a.available()) {
            return a;
        }
        Optional<String> problem = CudaKernels.unavailableReason();
        if (problem.isEmpty() && ordinal >= 0 && ordinal < a.deviceCount()) {
            try {
                problem = CudaKernels.driverTooOld(
                        a.driverVersion(), CudaDevice.query(ordinal).computeCapability());
            } catch (CudaException e) {
                problem = Optional.of("CUDA unavailable: " + e.getMessage());
            }
        }
        return problem.map(r -> new Availability(false, r, a.driverVersion(), a.deviceCount()))
                .orElse(a);
    }

    /** Throws a {@link CudaException} with the one-line reason when CUDA is not available. */
    public static void requireAvailable() {
        Availability a = availability();
        if (!a.available()) {
            throw new CudaException(a.reason());
        }
    }

    /** Asks the driver again (tests whose fake driver changes what it reports); {@link #availability()} caches this. */
    static Availability probe() {
        var libraryProblem = Cuda.unavailableReason();
        if (libraryProblem.isPresent()) {
            return Availability.no(libraryProblem.get());
        }
        try (Arena arena = Arena.ofConfined()) {
            int rc = Cuda.cuInit(0);
            if (rc == Cuda.CUDA_ERROR_NO_DEVICE) {
                return Availability.no("CUDA unavailable: no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
            }
            if (rc != Cuda.CUDA_SUCCESS) {
                return Availability.no("CUDA unavailable: "
                        + CudaException.message("cuInit", rc, Cuda.errorName(rc), Cuda.errorString(rc)));
            }
            MemorySegment out = arena.allocate(Cuda.C_INT);
            check("cuDriverGetVersion", Cuda.cuDriverGetVersion(out));
            int version = out.get(Cuda.C_INT, 0);
            check("cuDeviceGetCount", Cuda.cuDeviceGetCount(out));
            int count = out.get(Cuda.C_INT, 0);
            if (count <= 0) {
                return new Availability(false, "CUDA unavailable: no CUDA device", version, 0);
            }
            return new Availability(true, "available", version, count);
        } catch (CudaException e) {
            return Availability.no(
                    e.getMessage().startsWith("CUDA unavailable: ")
                            ? e.getMessage()
                            : "CUDA unavailable: " + e.getMessage());
        }
    }

    /** {@code cuDriverGetVersion} asked now (a failure path's message), or 0 where it cannot be. */
    static int driverVersionNow() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.C_INT);
            return Cuda.cuDriverGetVersion(out) == Cuda.CUDA_SUCCESS ? out.get(Cuda.C_INT, 0) : 0;
        } catch (CudaException e) {
            return 0;
        }
    }

    /** The driver's CUDA version as {@code major.minor}, e.g. {@code "13.0"} for 13000. */
    public static String versionString(int driverVersion) {
        return (driverVersion / 1000) + "." + (driverVersion % 1000) / 10;
    }

    /** All CUDA devices, in driver order. Requires CUDA to be available. */
    public static List<CudaDevice> devices() {
        requireAvailable();
        List<CudaDevice> list = new ArrayList<>();
        for (int i = 0; i < availability().deviceCount(); i++) {
            list.add(CudaDevice.query(i));
        }
        return List.copyOf(list);
    }

    /** One device by ordinal, with a clear message when there is no such device. */
    public static CudaDevice device(int ordinal) {
        requireAvailable();
        int count = availability().deviceCount();
        if (ordinal < 0 || ordinal >= count) {
            throw new CudaException("no CUDA device " + ordinal + ": this machine has " + count
                    + (count == 1 ? " device (0)" : " devices (0.." + (count - 1) + ")"));
        }
        return CudaDevice.query(ordinal);
    }
}
