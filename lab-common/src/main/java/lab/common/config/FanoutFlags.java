package lab.common.config;

/**
 * The fan-out apps' own: {@code --fanout-pool K}, their executor's or dispatcher's threads, and
 * {@code --fanout-concurrency C}, how many calls their flatMap / flatMapMerge runs at once. One of
 * {@link LabConfig#parse}'s small parsers; the other apps take them and ignore them.
 */
final class FanoutFlags {

    int pool = 10;
    int concurrency = 16;

    /** Reads {@code flag} if it is one of these (a bad value throws); false if it is not. */
    boolean take(String flag, String value) {
        switch (flag) {
            case "--fanout-pool" -> pool = LabConfig.intIn(flag, value, 1, 10_000);
            case "--fanout-concurrency" -> concurrency = LabConfig.intIn(flag, value, 1, 10_000);
            default -> {
                return false;
            }
        }
        return true;
    }
}
