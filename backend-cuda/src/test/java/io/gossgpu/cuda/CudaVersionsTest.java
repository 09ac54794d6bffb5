package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The driver-version facts stay true for the bindings as they are. */
class CudaVersionsTest {

    /** Every driver function the bindings call, by its exported (versioned) name. */
    static Set<String> boundFunctions() {
        Set<String> names = new TreeSet<>();
        for (Method m : Cuda.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers()) && m.getName().startsWith("cu") && m.getReturnType() == int.class) {
                names.add(m.getName());
            }
        }
        return names;
    }

    @Test
    void everyBoundDriverFunctionHasAKnownFirstRelease() {
        List<String> unknown = new ArrayList<>();
        for (String f : boundFunctions()) {
            boolean old = CudaVersions.OLDER_THAN_CUDA_10.contains(f),
                    dated = CudaVersions.DRIVER_API_SINCE.containsKey(f);
            if (old == dated) {
                unknown.add(f);
            }
        }
        assertTrue(
                unknown.isEmpty(),
                "put each of these in exactly one of CudaVersions.DRIVER_API_SINCE and OLDER_THAN_CUDA_10 "
                        + "(with the CUDA release that added it): " + unknown);
        assertTrue(boundFunctions().size() >= 50, boundFunctions().toString());
        // nothing listed that the bindings no longer call
        Set<String> listed = new TreeSet<>(CudaVersions.OLDER_THAN_CUDA_10);
        listed.addAll(CudaVersions.DRIVER_API_SINCE.keySet());
        listed.removeAll(boundFunctions());
        assertTrue(listed.isEmpty(), "listed in CudaVersions but not bound: " + listed);
    }

    @Test
    void theDriverCallsNeedCuda114ForCudaGraphs() {
        assertEquals(11040, CudaVersions.DRIVER_API_FLOOR);
        assertEquals(11040, CudaVersions.DRIVER_API_SINCE.get("cuGraphInstantiateWithFlags"));
    }
}
