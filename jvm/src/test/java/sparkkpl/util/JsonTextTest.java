package sparkkpl.util;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** JSON string literals and the error tag the Python package reads. */
public class JsonTextTest {
    @Test
    public void quotesBackslashesAndControlCharactersAreEscaped() {
        assertEquals("\"a\\\"b\\\\c\\u000ad\"", JsonText.quoted("a\"b\\c\nd"));
        assertEquals("\"é\"", JsonText.quoted("é"));
        assertEquals("null", JsonText.quoted(null));
    }

    @Test
    public void theErrorTagIsOneBracketedLineAfterTheMessage() {
        assertEquals(" [spark-kpl RecordsNotDelivered {\"row\":1}]", ErrorTag.of("RecordsNotDelivered", "{\"row\":1}"));
    }
}
