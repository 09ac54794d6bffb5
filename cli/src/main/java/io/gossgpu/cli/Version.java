package io.gossgpu.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** The version the build wrote into {@code version.properties} (the project's Maven version). */
final class Version implements IVersionProvider {
    static String number() {
        try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            if (in != null) p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    @Override
    public String[] getVersion() {
        return new String[] {"goss-gpu " + number() + " (Java " + Runtime.version() + ")"};
    }
}
