package io.gossgpu.cli;

import picocli.CommandLine.Command;

/** The top-level {@code goss-gpu} command. */
@Command(name = "goss-gpu", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Runs OpenAI's gpt-oss models on Metal, CUDA, OpenCL or the CPU.",
        subcommands = {InfoCommand.class})
public final class GossCommand implements Runnable {
    @Override
    public void run() {
        throw new io.gossgpu.GossException("chat is not wired yet; see 'goss-gpu --help'");
    }
}
