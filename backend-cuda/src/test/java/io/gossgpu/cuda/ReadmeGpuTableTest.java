package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's GPU table against llama.cpp is the newest dated same-card table of the device notes
 * (backend-cuda/src/test/device/NOTES.md): the same tests with the same numbers, and the paragraph above it names
 * that section's date, card, driver, CUDA version, commit and llama.cpp build. The driver table's row for that card
 * says it ran. A new lease's section in NOTES.md fails this test until the README carries its table.
 */
class ReadmeGpuTableTest {

    /** The same-card table's header, in NOTES.md and in the README alike. */
    static final String HEADER = "| test | llama.cpp t/s | goss-gpu cuda t/s | goss-gpu / llama.cpp |";

    private static final Pattern SECTION = Pattern.compile("^## (\\d{4}-\\d{2}-\\d{2}), (\\S+) ");
    private static final Pattern NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?");

    @Test
    void theReadmeCarriesTheNewestSameCardTableOfTheNotes() throws Exception {
        check(
                Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8),
                Files.readString(Path.of("src", "test", "device", "NOTES.md"), StandardCharsets.UTF_8));
    }

    /** One dated section of NOTES.md that holds a same-card table. */
    record Section(String date, String card, String heading, List<String> lines) {
        String find(String regex, String what) {
            Matcher m = Pattern.compile(regex).matcher(heading + "\n" + String.join("\n", lines));
            assertTrue(m.find(), "NOTES.md's section '" + heading + "' names no " + what + " (" + regex + ")");
            return m.group(1);
        }
    }

    static void check(String readme, String notes) {
        Section newest = newestSection(notes);
        List<String[]> expected = rows(newest.lines(), "NOTES.md's section '" + newest.heading() + "'");
        for (String[] row : expected) {
            double llama = Double.parseDouble(numbers(row[1]).getFirst());
            double goss = Double.parseDouble(numbers(row[2]).getFirst());
            String ratio = numbers(row[3]).getFirst();
            int places = ratio.contains(".") ? ratio.length() - ratio.indexOf('.') - 1 : 0;
            assertEquals(
                    goss / llama,
                    Double.parseDouble(ratio),
                    0.5 * Math.pow(10, -places) + 1e-9,
                    "NOTES.md's ratio for " + row[0] + " is not goss-gpu / llama.cpp (" + goss + " / " + llama + ")");
        }

        List<String> lines = Arrays.asList(readme.split("\n", -1));
        int at = lines.indexOf(HEADER);
        assertTrue(at >= 0, "README.md has no table headed " + HEADER);
        assertEquals(at, lines.lastIndexOf(HEADER), "README.md has two tables headed " + HEADER);
        List<String[]> actual = rows(lines.subList(at, lines.size()), "README.md");
        assertEquals(
                expected.size(),
                actual.size(),
                "README.md's GPU table has " + actual.size() + " rows, NOTES.md's newest (" + newest.heading() + ") "
                        + expected.size());
        for (int i = 0; i < expected.size(); i++) {
            String[] want = expected.get(i), got = actual.get(i);
            assertEquals(want[0], got[0], "README.md's GPU table, row " + (i + 1) + ": the test");
            for (int c = 1; c < want.length; c++) {
                assertEquals(
                        numbers(want[c]),
                        numbers(got[c]),
                        "README.md's GPU table, " + want[0] + ", column " + (c + 1) + ": '" + got[c]
                                + "' where NOTES.md's " + newest.date() + " table has '" + want[c] + "'");
            }
        }

        // The paragraph above the table says what was measured: the card, driver, CUDA, date, commit and llama.cpp.
        int end = at;
        while (end > 0 && lines.get(end - 1).isBlank()) {
            end--;
        }
        int start = end;
        while (start > 0 && !lines.get(start - 1).isBlank()) {
            start--;
        }
        String intro = String.join(" ", lines.subList(start, end));
        List<String> facts = List.of(
                newest.date(),
                newest.card(),
                "driver " + newest.find("driver ([0-9.]+)", "driver version"),
                "CUDA " + newest.find("CUDA (\\d+\\.\\d+)", "CUDA version"),
                newest.find("(?:main|commit) ([0-9a-f]{7,40})\\b", "commit"),
                "llama.cpp " + newest.find("llama\\.cpp (b\\d+)", "llama.cpp build"));
        for (String fact : facts) {
            assertTrue(
                    intro.contains(fact),
                    "the paragraph above README.md's GPU table does not say '" + fact + "' (NOTES.md: "
                            + newest.heading() + "): " + intro);
        }

        // The driver table's row for that card says it has run there.
        String row = lines.stream()
                .filter(l -> l.startsWith("| ")
                        && l.split("\\|").length > 6
                        && List.of(l.split("\\|")[3].split("[,;]")).stream()
                                .map(String::strip)
                                .anyMatch(newest.card()::equals))
                .findFirst()
                .orElseThrow(() -> new AssertionError("README.md's driver table has no row naming " + newest.card()));
        String ran = row.split("\\|")[6].strip();
        assertTrue(
                ran.startsWith("yes") && ran.contains(newest.card()) && ran.contains(newest.date()),
                "README.md's driver table row for " + newest.card() + " does not say it ran there on " + newest.date()
                        + ": " + row);
    }

    /** The dated section of NOTES.md with a same-card table whose date is the latest. */
    static Section newestSection(String notes) {
        List<Section> sections = new ArrayList<>();
        String heading = null;
        List<String> body = new ArrayList<>();
        for (String line : (notes + "\n## end").split("\n")) {
            if (line.startsWith("## ")) {
                if (heading != null && body.contains(HEADER)) {
                    Matcher m = SECTION.matcher(heading);
                    assertTrue(
                            m.find(),
                            "NOTES.md's same-card table sits under a heading without '## YYYY-MM-DD, CARD ': "
                                    + heading);
                    sections.add(new Section(m.group(1), m.group(2), heading.substring(3), List.copyOf(body)));
                }
                heading = line;
                body.clear();
            } else {
                body.add(line);
            }
        }
        assertFalse(sections.isEmpty(), "NOTES.md has no same-card table headed " + HEADER);
        Section newest = sections.getFirst();
        for (Section s : sections) {
            if (s.date().compareTo(newest.date()) > 0) {
                newest = s;
            }
        }
        return newest;
    }

    /** The rows of the table whose header is the first line of {@code from} equal to HEADER, split into cells. */
    static List<String[]> rows(List<String> from, String where) {
        int at = from.indexOf(HEADER);
        assertTrue(
                at >= 0 && at + 1 < from.size() && from.get(at + 1).startsWith("|---"),
                where + ": no table headed " + HEADER);
        List<String[]> rows = new ArrayList<>();
        for (String line : from.subList(at + 2, from.size())) {
            if (!line.startsWith("|")) {
                break;
            }
            String[] cells = line.substring(1, line.length() - (line.endsWith("|") ? 1 : 0))
                    .split("\\|", -1);
            assertEquals(4, cells.length, where + ": not 4 cells: " + line);
            for (int c = 0; c < cells.length; c++) {
                cells[c] = cells[c].strip();
            }
            for (int c = 1; c < cells.length; c++) {
                assertFalse(numbers(cells[c]).isEmpty(), where + ": no number in '" + cells[c] + "': " + line);
            }
            rows.add(cells);
        }
        assertFalse(rows.isEmpty(), where + ": the table headed " + HEADER + " has no rows");
        return rows;
    }

    static List<String> numbers(String cell) {
        List<String> out = new ArrayList<>();
        Matcher m = NUMBER.matcher(cell);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }
}
