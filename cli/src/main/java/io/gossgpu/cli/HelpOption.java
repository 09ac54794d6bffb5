package io.gossgpu.cli;

import picocli.CommandLine.Option;

/** {@code -h, --help} for a subcommand (the version is the top command's {@code -V}). */
final class HelpOption {
    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            description = "Show this help and exit.")
    boolean help;
}
