/**
 * The OpenCL backend: found by ServiceLoader through {@code BackendProvider}; it exports nothing. OpenCL is
 * reached through LWJGL, whose native calls need {@code --enable-native-access=org.lwjgl} on the module path.
 */
module io.gossgpu.opencl {
    requires io.gossgpu.core;
    requires io.gossgpu.device;
    requires org.lwjgl;
    requires org.lwjgl.opencl;

    provides io.gossgpu.backend.BackendProvider with
            io.gossgpu.opencl.OpenClBackendProvider;
}
