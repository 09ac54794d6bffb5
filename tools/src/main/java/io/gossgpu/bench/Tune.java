package io.gossgpu.bench;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobState;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * {@code goss-gpu tune}: sweeps the knobs ({@link Knob}) of one backend on this machine's device by
 * coordinate descent: one knob at a time, the knobs already swept at their best, the others as the options
 * given set them. Each knob starts from its value in effect on the device ({@link BackendProvider#knobStates}:
 * a device default such as a CPU device's smaller work-groups, or the value set) and sweeps the candidates the
 * device allows. Each candidate value goes into the {@link BackendOptions} of a fresh backend, which loads the
 * model, and {@link Bench} times a prefill and a decode run (one warm-up each, the median of the repetitions).
 * The best value has the highest geometric mean of prefill and decode tokens per second. A value the device
 * rejects (a work-group above a kernel's limit: a {@link GossException}) is reported and skipped. Nothing
 * global changes: each trial is a value.
 *
 * <p>A sweep's pick rests on one short run per value, which a machine's drift can decide. So the pick is then timed
 * against the settings tune started from, in alternating rounds, and kept only as {@link TuneVerdict} rules; otherwise
 * tune recommends nothing. The system load average is shown at the start and the end.
 */
public final class Tune {
    private Tune() {}

    /**
     * What to sweep: {@code knobs} by name (empty: every knob with more than one candidate) starting from
     * {@code backendOptions}; {@code quick}: at most 3 values each.
     */
    public record Options(
            String backend,
            BackendOptions backendOptions,
            String model,
            List<String> knobs,
            int promptTokens,
            int tokens,
            int reps,
            boolean quick,
            int rounds) {
        public Options {
            knobs = List.copyOf(knobs);
            if (rounds < TuneVerdict.MIN_ROUNDS)
                throw new GossException(
                        "tune: --rounds must be at least " + TuneVerdict.MIN_ROUNDS + ", got " + rounds);
            if (promptTokens < 0 || tokens < 0 || promptTokens + tokens == 0)
                throw new GossException("tune: --prompt-tokens and --tokens must be >= 0 and not both 0");
            if (reps < 1) throw new GossException("tune: --repetitions must be at least 1, got " + reps);
        }
    }

    /** One timed candidate; {@code rejected} holds the device's reason when it refused the value. */
    public record Trial(int value, double prefill, double decode, String rejected) {
        double score() {
            double s = 1;
            int n = 0;
            if (prefill > 0) {
                s *= prefill;
                n++;
            }
            if (decode > 0) {
                s *= decode;
                n++;
            }
            return n == 0 ? 0 : Math.pow(s, 1.0 / n);
        }
    }

    /** The trials of one knob and the value chosen ({@code null} when the device rejected every one). */
    public record Sweep(Knob knob, List<Trial> trials, Integer best) {}

    /** One confirmation round: the settings tune started from, then the tuned ones. */
    public record Round(Trial start, Trial tuned) {}

    /**
     * Every sweep; the settings tune started from and the tuned ones timed in alternating {@code rounds} ({@code null}
     * when the sweeps kept every value in effect), the {@code verdict} on them; the load average at start and end
     * (negative when the OS does not say).
     */
    public record Result(
            String backend,
            String device,
            List<Sweep> sweeps,
            List<Round> rounds,
            TuneVerdict verdict,
            double loadStart,
            double loadEnd) {
        /** Whether tune recommends the tuned values: the sweeps changed one, and it won the rounds by the rule. */
        public boolean recommends() {
            return verdict != null && verdict.keepTuned();
        }

        public String markdown() {
            StringBuilder sb = new StringBuilder();
            for (Sweep s : sweeps) {
                sb.append(s.knob().envName())
                        .append(": ")
                        .append(s.knob().description())
                        .append('\n');
                sb.append("| value | prefill t/s | decode t/s | |\n|---:|---:|---:|---|\n");
                for (Trial t : s.trials()) {
                    if (t.rejected() != null)
                        sb.append("| ")
                                .append(s.knob().text(t.value()))
                                .append(" | | | rejected: ")
                                .append(t.rejected())
                                .append(" |\n");
                    else
                        sb.append(String.format(
                                Locale.ROOT,
                                "| %s | %.2f | %.2f | %s |%n",
                                s.knob().text(t.value()),
                                t.prefill(),
                                t.decode(),
                                s.best() != null && s.best() == t.value() ? "best" : ""));
                }
                sb.append('\n');
            }
            sb.append("device: ").append(device).append('\n');
            sb.append("load average: ")
                    .append(loadAverage(loadStart))
                    .append(" at start, ")
                    .append(loadAverage(loadEnd))
                    .append(" at end (")
                    .append(Runtime.getRuntime().availableProcessors())
                    .append(" CPUs)\n");
            if (rounds == null) {
                sb.append("verdict: every knob's best is the value in effect; nothing to change\n");
                return sb.toString();
            }
            sb.append("\nconfirmation, in effect and tuned taking turns:\n");
            sb.append(
                    "| round | in effect prefill t/s | decode t/s | tuned prefill t/s | decode t/s | ratio |\n|---:|---:|---:|---:|---:|---:|\n");
            for (int i = 0; i < rounds.size(); i++) {
                Round r = rounds.get(i);
                sb.append(String.format(
                        Locale.ROOT,
                        "| %d | %.2f | %.2f | %.2f | %.2f | %.2fx |%n",
                        i + 1,
                        r.start().prefill(),
                        r.start().decode(),
                        r.tuned().prefill(),
                        r.tuned().decode(),
                        ratio(r.tuned().score(), r.start().score())));
            }
            Trial start = median(rounds.stream().map(Round::start).toList()),
                    tuned = median(rounds.stream().map(Round::tuned).toList());
            sb.append(String.format(
                    Locale.ROOT,
                    "in effect: prefill %.2f t/s, decode %.2f t/s (medians of the rounds)%n",
                    start.prefill(),
                    start.decode()));
            sb.append(String.format(
                    Locale.ROOT,
                    "tuned:  prefill %.2f t/s (%.2fx), decode %.2f t/s (%.2fx)%n",
                    tuned.prefill(),
                    ratio(tuned.prefill(), start.prefill()),
                    tuned.decode(),
                    ratio(tuned.decode(), start.decode())));
            sb.append("rule: ").append(TuneVerdict.RULE).append('\n');
            if (!verdict.keepTuned()) {
                sb.append("verdict: keeping the values in effect; the tuned values measured ")
                        .append(verdict.describe())
                        .append(": within noise, nothing to export\n");
                return sb.toString();
            }
            sb.append("verdict: the tuned values win, ")
                    .append(verdict.describe())
                    .append('\n');
            for (Sweep s : sweeps)
                if (s.best() != null)
                    sb.append("export ")
                            .append(s.knob().envName())
                            .append('=')
                            .append(s.knob().text(s.best()))
                            .append('\n');
            return sb.toString();
        }

        private static String loadAverage(double load) {
            return load < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", load);
        }

        private static Trial median(List<Trial> trials) {
            double[] pp = trials.stream().mapToDouble(Trial::prefill).sorted().toArray();
            double[] tg = trials.stream().mapToDouble(Trial::decode).sorted().toArray();
            return new Trial(0, middle(pp), middle(tg), null);
        }

        private static double middle(double[] sorted) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        private static double ratio(double a, double b) {
            return b > 0 ? a / b : 0;
        }
    }

    /** The knobs {@code names} picks from {@code provider} (all with more than one candidate when empty). */
    public static List<Knob> select(BackendProvider provider, List<String> names) {
        List<Knob> all = provider.knobs();
        if (all.isEmpty())
            throw new GossException(
                    "backend '" + provider.name() + "' has no tuning knobs (cpu, opencl, cuda and metal have)");
        if (names.isEmpty())
            return all.stream().filter(k -> k.candidates().size() > 1).toList();
        List<Knob> out = new ArrayList<>();
        for (String n : names) {
            Knob k = all.stream()
                    .filter(x ->
                            x.envName().equalsIgnoreCase(n) || x.shortName().equalsIgnoreCase(n))
                    .findFirst()
                    .orElseThrow(() -> new GossException("unknown knob '" + n + "' for " + provider.name() + "; valid: "
                            + all.stream().map(Knob::shortName).collect(Collectors.joining(", "))));
            if (!out.contains(k)) out.add(k);
        }
        return out;
    }

    /**
     * The values to time for a knob in {@code state} on the device: the candidates it allows there with the value in
     * effect among them (in order); {@code quick}: only the candidate nearest that value and its neighbours.
     */
    static List<Integer> candidates(KnobState state, boolean quick) {
        List<Integer> c = new ArrayList<>(state.candidates());
        if (!c.contains(state.value())) c.add(state.value());
        c.sort(null);
        if (!quick) return c;
        int at = c.indexOf(state.value());
        int from = Math.max(0, Math.min(at - 1, c.size() - 3));
        return c.subList(from, Math.min(c.size(), from + 3));
    }

    /**
     * The provider of {@code backend} ({@code auto}: the available one of highest priority that has knobs) and the
     * knobs {@code names} picks; a one-line {@link GossException} when the backend is unknown or unavailable, has no
     * knobs, or a name is not one of them. Cheap: the device is probed, not opened.
     */
    public static Map.Entry<BackendProvider, List<Knob>> plan(String backend, List<String> names) {
        BackendProvider p = Backends.isAuto(backend)
                ? Backends.auto().stream()
                        .filter(x -> !x.knobs().isEmpty())
                        .findFirst()
                        .orElseThrow(
                                () -> new GossException("no available backend has tuning knobs; " + Backends.summary()))
                : Backends.provider(backend);
        List<Knob> knobs = select(p, names);
        var a = Backends.safeAvailability(p);
        if (!a.available()) throw new GossException("backend '" + p.name() + "' is unavailable: " + a.reason());
        return Map.entry(p, knobs);
    }

    public static Result run(Options o, PrintStream log) {
        return run(o, log, Tune::time);
    }

    /** Times one Bench run of {@code options} for {@code value}, noting the device's description in {@code device[0]}. */
    interface Timer {
        Trial time(Bench.Options options, int value, String[] device);
    }

    private static double loadAverage() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static Result run(Options o, PrintStream log, Timer timer) {
        var plan = plan(o.backend, o.knobs);
        return run(plan.getKey(), plan.getValue(), o, log, timer);
    }

    /** The sweeps and the confirmation rounds of {@code knobs} of {@code p}, each run timed by {@code timer}. */
    static Result run(BackendProvider p, List<Knob> selected, Options o, PrintStream log, Timer timer) {
        double loadStart = loadAverage();
        log.printf(
                Locale.ROOT,
                "tune: load average %s at start (%d CPUs)%n",
                loadStart < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", loadStart),
                Runtime.getRuntime().availableProcessors());
        Map<Knob, KnobState> states = new java.util.LinkedHashMap<>();
        for (KnobState s : p.knobStates(o.backendOptions)) {
            if (!s.valid()) throw new GossException("tune: the knobs as set now fail: " + s.error());
            states.put(s.knob(), s);
        }
        for (Knob k : selected)
            states.computeIfAbsent(k, x -> x.state(o.backendOptions)); // a provider that lists fewer
        // every knob the device gives a choice, unless named
        List<Knob> knobs = selected.stream()
                .filter(k ->
                        !o.knobs.isEmpty() || candidates(states.get(k), false).size() > 1)
                .toList();
        Bench.Options bo = Bench.Options.single(o.model, p.name(), o.backendOptions, o.promptTokens, o.tokens, o.reps);
        String[] device = new String[1];
        timer.time(
                bo, -1,
                device); // untimed: warms the JIT, so the first candidates are not measured on colder code than the
        // last
        Trial baseline = timer.time(bo, -1, device);
        if (baseline.rejected() != null)
            throw new GossException("tune: the knobs as set now fail: " + baseline.rejected());
        log.printf(
                Locale.ROOT,
                "tune %s: before: prefill %.2f t/s, decode %.2f t/s%n",
                p.name(),
                baseline.prefill(),
                baseline.decode());
        BackendOptions best = o.backendOptions;
        List<Sweep> sweeps = new ArrayList<>();
        for (Knob k : knobs) {
            List<Trial> trials = new ArrayList<>();
            Trial top = null;
            for (int v : candidates(states.get(k), o.quick)) {
                Trial t = timer.time(bo.withBackendOptions(best.with(k, v)), v, device);
                trials.add(t);
                log.println(
                        t.rejected() != null
                                ? String.format(
                                        Locale.ROOT, "%s=%s: rejected: %s", k.envName(), k.text(v), t.rejected())
                                : String.format(
                                        Locale.ROOT,
                                        "%s=%s: prefill %.2f t/s, decode %.2f t/s",
                                        k.envName(),
                                        k.text(v),
                                        t.prefill(),
                                        t.decode()));
                if (t.rejected() == null && (top == null || t.score() > top.score())) top = t;
            }
            if (top != null) best = best.with(k, top.value());
            sweeps.add(new Sweep(k, trials, top == null ? null : top.value()));
        }
        List<Round> rounds = null;
        TuneVerdict verdict = null;
        if (!changes(sweeps, states)) {
            log.println("tune: every knob's best is the value in effect; nothing to confirm");
        } else {
            rounds = new ArrayList<>();
            double[] a = new double[o.rounds], b = new double[o.rounds];
            for (int i = 0; i < o.rounds; i++) { // in effect, tuned, in effect, tuned, ...: both meet the same drift
                Trial start = timer.time(bo, -1, device);
                if (start.rejected() != null)
                    throw new GossException("tune: the knobs as set now fail: " + start.rejected());
                Trial tuned = timer.time(bo.withBackendOptions(best), 0, device);
                if (tuned.rejected() != null)
                    throw new GossException("tune: the best values together fail: " + tuned.rejected());
                rounds.add(new Round(start, tuned));
                a[i] = start.score();
                b[i] = tuned.score();
                log.printf(
                        Locale.ROOT,
                        "tune: round %d of %d: in effect prefill %.2f, decode %.2f t/s; tuned prefill %.2f, decode %.2f t/s (%.2fx)%n",
                        i + 1,
                        o.rounds,
                        start.prefill(),
                        start.decode(),
                        tuned.prefill(),
                        tuned.decode(),
                        b[i] / a[i]);
            }
            verdict = TuneVerdict.decide(a, b);
        }
        double loadEnd = loadAverage();
        log.printf(
                Locale.ROOT,
                "tune: load average %s at end%n",
                loadEnd < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", loadEnd));
        return new Result(p.name(), device[0], sweeps, rounds, verdict, loadStart, loadEnd);
    }

    /** Whether a sweep picked a value other than the one in effect when tune started. */
    private static boolean changes(List<Sweep> sweeps, Map<Knob, KnobState> states) {
        return sweeps.stream()
                .anyMatch(s ->
                        s.best() != null && s.best() != states.get(s.knob()).value());
    }

    /** One Bench run: median prefill and decode t/s, or the reason it was rejected. */
    private static Trial time(Bench.Options bo, int value, String[] device) {
        BenchReport r;
        try {
            r = Bench.run(bo, null);
        } catch (GossException e) {
            return new Trial(value, 0, 0, e.getMessage());
        }
        device[0] = r.device();
        double pp = 0, tg = 0;
        for (BenchReport.Row row : r.rows()) {
            if (row.test().startsWith("pp")) pp = row.median();
            else tg = row.median();
        }
        return new Trial(value, pp, tg, null);
    }
}
