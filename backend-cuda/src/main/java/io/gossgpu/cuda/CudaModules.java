package io.gossgpu.cuda;

import java.util.LinkedHashMap;
import java.util.Map;

/** The kernel files one backend has loaded, each once, as its launchers ask for their entry points; closed together. */
final class CudaModules implements AutoCloseable {
    private final CudaContext context;
    private final Map<String, CudaModule> loaded = new LinkedHashMap<>();

    CudaModules(CudaContext context) {
        this.context = context;
    }

    /** The kernel of {@code entry}, its file loaded on first use. */
    CudaKernel kernel(CudaEntry entry) {
        return loaded.computeIfAbsent(entry.file(), context::loadModule).function(entry);
    }

    @Override
    public void close() {
        for (CudaModule m : loaded.values()) m.close();
        loaded.clear();
    }
}
