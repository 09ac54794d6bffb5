/**
 * The Metal backend: found by ServiceLoader through {@code BackendProvider}; it exports nothing. Its classes
 * call the Objective-C runtime through FFM, so on the module path it runs with
 * {@code --enable-native-access=io.gossgpu.metal}.
 */
module io.gossgpu.metal {
    requires io.gossgpu.core;
    requires io.gossgpu.device;

    provides io.gossgpu.backend.BackendProvider with
            io.gossgpu.metal.MetalBackendProvider;
}
