package io.gossgpu;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;

/**
 * A JSON syntax error in one line for a person: where it is, then what is wrong ({@code invalid JSON at line 1
 * column 10: unexpected end of input}), without Jackson's internals (class and feature names, source descriptions,
 * character codes). The server's request bodies, the cli's inputs and model files' metadata all say it this way.
 */
public final class JsonSyntaxErrors {
    private JsonSyntaxErrors() {}

    public static String describe(JsonProcessingException e) {
        String m = e.getOriginalMessage() == null ? "malformed" : e.getOriginalMessage();
        m = m.replaceAll("(?s)\\s*\\n.*", ""); // Jackson's second line ("at [Source: ...]") and below
        for (String tail :
                new String[] {" (start marker at", " at [Source:", "[Source:", ": was expecting (", "; expected"}) {
            int cut = m.indexOf(tail);
            if (cut >= 0) m = m.substring(0, cut);
        }
        m = m.replaceAll("\\(CTRL-CHAR, code (\\d+)\\)", "control character $1")
                .replaceAll(" \\(code \\d+\\)", "") // "'}' (code 125)"
                .replaceAll("\\([A-Z][A-Za-z]+(Feature|Exception)[^)]*\\)", "")
                .replaceAll(
                        "\\b(StreamReadFeature|JsonReadFeature|JsonParser\\.Feature)\\.[A-Z_]+", "a strict JSON rule")
                .replace("end-of-input", "end of input")
                .strip();
        if (m.isEmpty()) m = "malformed";
        if (m.length() > 200) m = m.substring(0, 200) + "…";
        m = Character.toLowerCase(m.charAt(0)) + m.substring(1);
        JsonLocation at = e.getLocation();
        return at == null || at.getLineNr() < 0
                ? "invalid JSON: " + m
                : "invalid JSON at line " + at.getLineNr() + " column " + at.getColumnNr() + ": " + m;
    }
}
