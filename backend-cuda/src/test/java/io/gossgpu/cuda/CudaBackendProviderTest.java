package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backends;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Until its ops exist, the cuda backend is found by name and explains why it cannot run. */
class CudaBackendProviderTest {
    @Test
    void isListedAndUnavailableWithTheReason() {
        CudaBackendProvider p = new CudaBackendProvider();
        Availability a = p.availability();
        assertFalse(a.available());
        CudaDriver.Availability driver = CudaDriver.backendAvailability();
        assertEquals(driver.available() ? CudaBackendProvider.NO_OPS : driver.reason(), a.reason());
        assertTrue(Backends.providers().stream().anyMatch(x -> x.name().equals("cuda")));
        GossException e = assertThrows(GossException.class, () -> Backends.open("cuda"));
        assertTrue(e.getMessage().contains(a.reason()), e.getMessage());
    }
}
