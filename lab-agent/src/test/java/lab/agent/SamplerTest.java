package lab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

/** The handler threads' names: kept up to the bound, and a name beyond it says so instead of being dropped unsaid. */
class SamplerTest {

    /** A container whose every sample shows the next {@code batch} threads running requests. */
    private static class Names implements ContainerReader {
        private final int batch;
        private int next;

        Names(int batch) {
            this.batch = batch;
        }

        @Override
        public String name() {
            return "tomcat";
        }

        @Override
        public boolean settled() {
            return true;
        }

        @Override
        public Sample sample(int namesSeen) {
            List<String> names = IntStream.range(next, next + batch).mapToObj(i -> "exec-" + i).toList();
            next += batch;
            return new Sample(batch, batch, names);
        }

        @Override
        public void read(Reading out, Sample now, Sampler.Peaks peaks) {
        }

        @Override
        public void reset() {
        }
    }

    @Test
    void namesUpToTheBoundAreKeptAndOneMoreIsAnOverflow() {
        try (Sampler sampler = new Sampler(new Detector(new Beans()), false)) {
            Names reader = new Names(Sampler.MAX_NAMES / 2);
            sampler.sample(reader);
            sampler.sample(reader);
            assertEquals(Sampler.MAX_NAMES, sampler.peaks().handlerThreads().size());
            assertFalse(sampler.peaks().namesOverflow());
            sampler.sample(new Names(1) {
                @Override
                public Sample sample(int namesSeen) {
                    return new Sample(1, 1, List.of("exec-0"));        // a name kept before: no overflow
                }
            });
            assertFalse(sampler.peaks().namesOverflow());
            sampler.sample(reader);
            assertTrue(sampler.peaks().namesOverflow());
            assertEquals(Sampler.MAX_NAMES, sampler.peaks().handlerThreads().size());
        }
    }
}
