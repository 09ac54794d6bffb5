package io.gossgpu.opencl;

import static org.lwjgl.opencl.CL10.*;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.KvCacheSpec;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.lwjgl.PointerBuffer;
import org.lwjgl.opencl.CL;
import org.lwjgl.system.Configuration;
import org.lwjgl.system.MemoryStack;

/**
 * OpenCL discovery through LWJGL: loading the bindings lazily and safely, listing platforms and devices,
 * and picking the device the backend runs on.
 *
 * <p>Nothing here touches {@code org.lwjgl.opencl.CL} before {@link #load()} has switched LWJGL to explicit
 * initialisation, so a machine without {@code libOpenCL} gets {@link #availability()} = "no OpenCL platform
 * found (install an ICD, e.g. pocl-opencl-icd)", never an exception from a class initialiser.
 *
 * <p>Device selection: the setting {@link #DEVICE} of the backend's {@link io.gossgpu.backend.BackendOptions} — a
 * device index as {@link #deviceListing} numbers them, or a case-insensitive substring of "platform / device
 * name". Default: the first GPU, else the first device.
 */
public final class OpenCl {
    private OpenCl() {}

    /** The setting that picks the device ({@code --device} on the command line). */
    public static final String DEVICE = "GOSS_OPENCL_DEVICE";

    /** The one-line reason given when no platform exists (or libOpenCL cannot be loaded). */
    public static final String NO_PLATFORM = "no OpenCL platform found (install an ICD, e.g. pocl-opencl-icd)";

    private static boolean loaded;
    private static String loadError;

    /** One OpenCL device, as listed for users. {@code index} numbers devices across all platforms. */
    public record DeviceInfo(
            int index,
            long platform,
            long device,
            String platformName,
            String name,
            String vendor,
            String version,
            String driver,
            String type,
            int computeUnits,
            long globalMemBytes,
            long maxAllocBytes,
            long localMemBytes,
            long maxWorkGroupSize,
            boolean fp64) {
        public boolean isGpu() {
            return type.contains("GPU");
        }

        /** e.g. {@code "pthread-skylake (Portable Computing Language, CPU, OpenCL 3.0 PoCL, 2 CUs, 12.5 GiB)"}. */
        public String describe() {
            return name + " (" + platformName + ", " + type + ", " + version + ", " + computeUnits + " CUs, "
                    + KvCacheSpec.humanBytes(globalMemBytes) + (fp64 ? ", fp64" : "") + ")";
        }
    }

    /** Loads the OpenCL bindings once. Returns null when loaded, else a one-line reason. Never throws. */
    static synchronized String load() {
        if (loaded) return null;
        if (loadError != null) return loadError;
        try {
            Configuration.OPENCL_EXPLICIT_INIT.set(true);
            String lib = libraryPath();
            if (lib == null) return loadError = NO_PLATFORM;
            if (lib.isEmpty()) CL.create();
            else CL.create(lib);
            loaded = true;
            return null;
        } catch (UnsatisfiedLinkError e) {
            String m = String.valueOf(e.getMessage());
            loadError = m.contains("OpenCL") ? NO_PLATFORM : "LWJGL natives failed to load: " + oneLine(m);
        } catch (Throwable t) {
            String m = String.valueOf(t.getMessage());
            loadError = m.contains("OpenCL") || m.contains("libOpenCL")
                    ? NO_PLATFORM
                    : "OpenCL bindings failed to load: " + oneLine(t.toString());
        }
        return loadError;
    }

    /**
     * The OpenCL library to load: {@code GOSS_OPENCL_LIBRARY} / {@code goss.opencl.library} when set; on Linux
     * the ICD loader {@code libOpenCL.so.1} found in LD_LIBRARY_PATH or the usual directories (null when
     * absent, so that LWJGL is never asked to load what is not there); "" elsewhere (LWJGL's default name).
     */
    static String libraryPath() {
        String forced = System.getProperty("goss.opencl.library");
        if (forced == null || forced.isBlank()) forced = System.getenv("GOSS_OPENCL_LIBRARY");
        if (forced != null && !forced.isBlank()) return forced.trim();
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        if (!os.contains("linux")) return "";
        List<String> dirs = new ArrayList<>();
        for (String var : new String[] {System.getenv("LD_LIBRARY_PATH"), System.getProperty("java.library.path")})
            if (var != null) for (String d : var.split(java.io.File.pathSeparator)) if (!d.isBlank()) dirs.add(d);
        dirs.addAll(List.of(
                "/usr/lib/x86_64-linux-gnu",
                "/usr/lib/aarch64-linux-gnu",
                "/usr/lib64",
                "/usr/lib",
                "/usr/local/lib",
                "/lib/x86_64-linux-gnu",
                "/lib64",
                "/usr/local/cuda/lib64",
                "/opt/rocm/lib"));
        for (String d : dirs)
            for (String n : new String[] {"libOpenCL.so.1", "libOpenCL.so"}) {
                java.nio.file.Path p = java.nio.file.Path.of(d, n);
                if (java.nio.file.Files.exists(p)) return p.toString();
            }
        return null;
    }

    private static String oneLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static Availability cached;

    /** Whether the backend can run, with the device it picks by default or a one-line reason. Never throws. */
    public static synchronized Availability availability() {
        if (cached != null) return cached;
        try {
            String err = load();
            if (err != null) return cached = Availability.no(err);
            List<DeviceInfo> devs = devices();
            if (devs.isEmpty()) return cached = Availability.no(NO_PLATFORM);
            DeviceInfo d = select(devs, null);
            return cached = Availability.yes("OpenCL device " + d.index() + ": " + d.describe());
        } catch (RuntimeException | LinkageError e) {
            return cached = Availability.no(e instanceof GossException ? e.getMessage() : "OpenCL probe failed: " + e);
        }
    }

    /**
     * Lines for {@code goss-gpu info}: every platform's devices, numbered, the one {@code selector} picks (null: the
     * default) marked, or the reason there are none. Never throws.
     */
    public static List<String> deviceListing(String selector) {
        List<String> out = new ArrayList<>();
        try {
            String err = load();
            if (err != null) {
                out.add("OpenCL unavailable: " + err);
                return out;
            }
            List<DeviceInfo> devs = devices();
            if (devs.isEmpty()) {
                out.add("OpenCL unavailable: " + NO_PLATFORM);
                return out;
            }
            DeviceInfo sel = null;
            try {
                sel = select(devs, selector);
            } catch (GossException e) {
                out.add("OpenCL device selection: " + e.getMessage());
            }
            for (DeviceInfo d : devs)
                out.add((d == sel ? "* " : "  ") + "[" + d.index() + "] " + d.describe() + ", driver " + d.driver()
                        + ", max work-group " + d.maxWorkGroupSize() + ", local mem "
                        + KvCacheSpec.humanBytes(d.localMemBytes())
                        + ", largest buffer " + KvCacheSpec.humanBytes(d.maxAllocBytes()));
        } catch (RuntimeException | LinkageError e) {
            out.add("OpenCL probe failed: " + e);
        }
        return out;
    }

    /** Every device of every platform (bindings must be loaded). */
    public static List<DeviceInfo> devices() {
        String err = load();
        if (err != null) throw new GossException("OpenCL unavailable: " + err);
        List<DeviceInfo> out = new ArrayList<>();
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer n = stack.mallocInt(1);
            int rc = clGetPlatformIDs(null, n);
            if (rc == CL_PLATFORM_NOT_FOUND_KHR || n.get(0) == 0) return out;
            check(rc, "clGetPlatformIDs");
            PointerBuffer platforms = stack.mallocPointer(n.get(0));
            check(clGetPlatformIDs(platforms, (IntBuffer) null), "clGetPlatformIDs");
            for (int p = 0; p < platforms.capacity(); p++) {
                long platform = platforms.get(p);
                try { // a broken platform (driver without a device, say) must not hide the others
                    String pname = platformString(platform, CL_PLATFORM_NAME);
                    IntBuffer nd = stack.mallocInt(1);
                    rc = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, null, nd);
                    if (rc == CL_DEVICE_NOT_FOUND || nd.get(0) == 0) continue;
                    check(rc, "clGetDeviceIDs");
                    PointerBuffer ids = stack.mallocPointer(nd.get(0));
                    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, ids, (IntBuffer) null), "clGetDeviceIDs");
                    for (int d = 0; d < ids.capacity(); d++) out.add(info(out.size(), platform, pname, ids.get(d)));
                } catch (GossException e) {
                    // skipped: listed nowhere, since nothing of it can be used
                }
            }
        }
        return out;
    }

    static final int CL_PLATFORM_NOT_FOUND_KHR = -1001;

    static DeviceInfo info(int index, long platform, String platformName, long device) {
        long type = deviceLong(device, CL_DEVICE_TYPE);
        List<String> types = new ArrayList<>();
        if ((type & CL_DEVICE_TYPE_GPU) != 0) types.add("GPU");
        if ((type & CL_DEVICE_TYPE_CPU) != 0) types.add("CPU");
        if ((type & CL_DEVICE_TYPE_ACCELERATOR) != 0) types.add("accelerator");
        if (types.isEmpty()) types.add("other");
        String ext = deviceString(device, CL_DEVICE_EXTENSIONS);
        return new DeviceInfo(
                index,
                platform,
                device,
                platformName,
                deviceString(device, CL_DEVICE_NAME),
                deviceString(device, CL_DEVICE_VENDOR),
                deviceString(device, CL_DEVICE_VERSION),
                deviceString(device, CL_DRIVER_VERSION),
                String.join("+", types),
                deviceInt(device, CL_DEVICE_MAX_COMPUTE_UNITS),
                deviceLong(device, CL_DEVICE_GLOBAL_MEM_SIZE),
                deviceLong(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE),
                deviceLong(device, CL_DEVICE_LOCAL_MEM_SIZE),
                devicePointer(device, CL_DEVICE_MAX_WORK_GROUP_SIZE),
                ext.contains("cl_khr_fp64"));
    }

    /** Picks a device: null = first GPU, else first; an index; or a name substring. */
    static DeviceInfo select(List<DeviceInfo> devs, String selector) {
        if (selector == null) {
            for (DeviceInfo d : devs) if (d.isGpu()) return d;
            return devs.get(0);
        }
        if (selector.matches("\\d+")) {
            int i = Integer.parseInt(selector);
            if (i < devs.size()) return devs.get(i);
            throw new GossException(
                    "OpenCL device " + i + " does not exist (GOSS_OPENCL_DEVICE / goss.opencl.device); devices are 0.."
                            + (devs.size() - 1) + ": " + names(devs));
        }
        String s = selector.toLowerCase(Locale.ROOT);
        for (DeviceInfo d : devs)
            if ((d.platformName() + " / " + d.name()).toLowerCase(Locale.ROOT).contains(s)) return d;
        throw new GossException("no OpenCL device matches '" + selector
                + "' (GOSS_OPENCL_DEVICE / goss.opencl.device); devices: " + names(devs));
    }

    private static String names(List<DeviceInfo> devs) {
        List<String> n = new ArrayList<>();
        for (DeviceInfo d : devs) n.add("[" + d.index() + "] " + d.platformName() + " / " + d.name());
        return String.join(", ", n);
    }

    // ---- info queries -------------------------------------------------------------------------

    static String platformString(long platform, int param) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer size = stack.mallocPointer(1);
            check(clGetPlatformInfo(platform, param, (ByteBuffer) null, size), "clGetPlatformInfo");
            ByteBuffer b = stack.malloc((int) size.get(0));
            check(clGetPlatformInfo(platform, param, b, null), "clGetPlatformInfo");
            return cString(b);
        }
    }

    static String deviceString(long device, int param) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer size = stack.mallocPointer(1);
            check(clGetDeviceInfo(device, param, (ByteBuffer) null, size), "clGetDeviceInfo");
            ByteBuffer b = org.lwjgl.system.MemoryUtil.memAlloc((int) Math.max(1, size.get(0)));
            try {
                check(clGetDeviceInfo(device, param, b, null), "clGetDeviceInfo");
                return cString(b);
            } finally {
                org.lwjgl.system.MemoryUtil.memFree(b);
            }
        }
    }

    private static String cString(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        int n = 0;
        while (n < bytes.length && bytes[n] != 0) n++;
        return new String(bytes, 0, n, StandardCharsets.UTF_8).trim();
    }

    static long deviceLong(long device, int param) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            LongBuffer b = stack.mallocLong(1);
            check(clGetDeviceInfo(device, param, b, null), "clGetDeviceInfo");
            return b.get(0);
        }
    }

    static int deviceInt(long device, int param) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer b = stack.mallocInt(1);
            check(clGetDeviceInfo(device, param, b, null), "clGetDeviceInfo");
            return b.get(0);
        }
    }

    static long devicePointer(long device, int param) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer b = stack.mallocPointer(1);
            check(clGetDeviceInfo(device, param, b, null), "clGetDeviceInfo");
            return b.get(0);
        }
    }

    /** Throws a {@link GossException} naming the call and the error when {@code rc} is not CL_SUCCESS. */
    static void check(int rc, String what) {
        if (rc != CL_SUCCESS) throw new GossException("OpenCL " + what + " failed: " + errorName(rc));
    }

    static String errorName(int rc) {
        return switch (rc) {
            case -1 -> "CL_DEVICE_NOT_FOUND";
            case -2 -> "CL_DEVICE_NOT_AVAILABLE";
            case -3 -> "CL_COMPILER_NOT_AVAILABLE";
            case -4 -> "CL_MEM_OBJECT_ALLOCATION_FAILURE (device memory exhausted)";
            case -5 -> "CL_OUT_OF_RESOURCES";
            case -6 -> "CL_OUT_OF_HOST_MEMORY";
            case -11 -> "CL_BUILD_PROGRAM_FAILURE";
            case -30 -> "CL_INVALID_VALUE";
            case -33 -> "CL_INVALID_DEVICE";
            case -34 -> "CL_INVALID_CONTEXT";
            case -36 -> "CL_INVALID_COMMAND_QUEUE";
            case -38 -> "CL_INVALID_MEM_OBJECT";
            case -46 -> "CL_INVALID_KERNEL_NAME";
            case -48 -> "CL_INVALID_KERNEL";
            case -49 -> "CL_INVALID_ARG_INDEX";
            case -50 -> "CL_INVALID_ARG_VALUE";
            case -51 -> "CL_INVALID_ARG_SIZE";
            case -52 -> "CL_INVALID_KERNEL_ARGS";
            case -53 -> "CL_INVALID_WORK_DIMENSION";
            case -54 -> "CL_INVALID_WORK_GROUP_SIZE";
            case -55 -> "CL_INVALID_WORK_ITEM_SIZE";
            case -61 -> "CL_INVALID_BUFFER_SIZE";
            case -63 -> "CL_INVALID_GLOBAL_WORK_SIZE";
            case -1001 -> "CL_PLATFORM_NOT_FOUND_KHR";
            default -> "error " + rc;
        };
    }
}
