package io.gossgpu.cli;

import java.util.Locale;
import picocli.CommandLine;

/** A size on the command line: bytes, or a number with k, m, g or t (binary: 1k = 1024), e.g. {@code 6g}, {@code 512m}. */
final class ByteSize implements CommandLine.ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.endsWith("ib")) v = v.substring(0, v.length() - 2); // 6GiB
        else if (v.endsWith("b")) v = v.substring(0, v.length() - 1); // 6GB, 512b
        int shift = switch (v.isEmpty() ? ' ' : v.charAt(v.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            case 't' -> 40;
            default -> 0;
        };
        String digits = shift > 0 ? v.substring(0, v.length() - 1) : v;
        try {
            double n = Double.parseDouble(digits);
            if (!(n >= 0) || Double.isInfinite(n) || n * Math.pow(2, shift) >= Long.MAX_VALUE)
                throw new NumberFormatException();
            return (long) (n * Math.pow(2, shift));
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException(
                    "'" + value + "' is not a size: use bytes or a number with k, m, g or t (e.g. 6g, 512m)");
        }
    }
}
