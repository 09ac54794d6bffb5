package io.gossgpu.opencl;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backends;

/** Run in a child JVM by {@link OpenClInfraTest}: prints the provider's availability, then the device listing. */
public final class ProbeMain {
    private ProbeMain() {}

    public static void main(String[] args) {
        Availability a = Backends.safeAvailability(new OpenClBackendProvider());
        System.out.println("available=" + a.available());
        System.out.println("reason=" + a.reason());
        for (String line : OpenCl.deviceListing(null)) System.out.println("listing=" + line);
    }
}
