/**
 * The CUDA backend: found by ServiceLoader through {@code BackendProvider}; it exports nothing. Its classes
 * call the driver through FFM, so on the module path it runs with {@code --enable-native-access=io.gossgpu.cuda}.
 */
module io.gossgpu.cuda {
    requires io.gossgpu.core;
    requires io.gossgpu.device;

    provides io.gossgpu.backend.BackendProvider with
            io.gossgpu.cuda.CudaBackendProvider;
}
