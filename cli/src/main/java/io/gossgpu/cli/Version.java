package io.gossgpu.cli;

import picocli.CommandLine.IVersionProvider;

final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = Version.class.getPackage().getImplementationVersion();
        return new String[]{"goss-gpu " + (v == null ? "dev" : v) + " (Java " + Runtime.version() + ")"};
    }
}
