package io.gossgpu.cli;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.slf4j.event.KeyValuePair;

/**
 * One flat JSON object per log event and line: {@code time}, {@code level}, {@code logger}, {@code message}, the
 * event's key-values as fields of their own (numbers stay numbers), and for an exception {@code error} (its class
 * and message) and {@code stack}.
 */
final class JsonLogEncoder extends EncoderBase<ILoggingEvent> {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Override
    public byte[] headerBytes() {
        return null;
    }

    @Override
    public byte[] encode(ILoggingEvent event) {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("time", Instant.ofEpochMilli(event.getTimeStamp()).toString());
        o.put("level", event.getLevel().toString());
        o.put("logger", event.getLoggerName());
        o.put("message", event.getFormattedMessage());
        if (event.getKeyValuePairs() != null)
            for (KeyValuePair kv : event.getKeyValuePairs()) o.set(kv.key, MAPPER.valueToTree(kv.value));
        IThrowableProxy t = event.getThrowableProxy();
        if (t != null) {
            o.put("error", t.getClassName() + (t.getMessage() != null ? ": " + t.getMessage() : ""));
            o.put("stack", ThrowableProxyUtil.asString(t));
        }
        try {
            return (MAPPER.writeValueAsString(o) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public byte[] footerBytes() {
        return null;
    }
}
