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
    public void theErrorTagIsOneBracketedLineAfterTheMessageWithEveryDeclaredField() {
        assertEquals(" [spark-kpl StreamRecreated {\"stream\":\"a\\\"b\"}]", ErrorTag.Kind.STREAM_RECREATED.of("a\"b"));
        assertEquals(" [spark-kpl ProducerFailed {\"recordsInDoubt\":3,\"recordsAdded\":5,\"reason\":null}]",
            ErrorTag.Kind.PRODUCER_FAILED.of(3, 5L));
    }

    @Test
    public void aSentenceIsFilledWithTheTagsFieldsByName() {
        assertEquals("stream 's', row 7, column null", ErrorTag.Kind.RECORDS_NOT_DELIVERED.fill(
            "stream '{stream}', row {row}, column {column}", "s", "k", null, 1, 7L, null, "Expired", "late"));
    }
}
