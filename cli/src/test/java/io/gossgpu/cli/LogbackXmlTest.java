package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.InputStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/** The jar's logback.xml is well-formed XML: logback prints a stack trace at every start when it is not. */
class LogbackXmlTest {
    @Test
    void logbackXmlParses() throws Exception {
        try (InputStream in = LogbackXmlTest.class.getResourceAsStream("/logback.xml")) {
            assertNotNull(in, "logback.xml on the class path");
            Document d =
                    DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
            assertEquals("configuration", d.getDocumentElement().getTagName());
        }
    }
}
