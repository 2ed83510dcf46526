package lab.common.config;

/**
 * The limits on requests in flight: {@code --max-in-flight} (every container), {@code
 * --container-queue} (Tomcat's) and {@code --qos --qos-suspended} (Jetty's). One of {@link
 * LabConfig#parse}'s small parsers.
 */
final class LimitFlags {

    int maxInFlight;
    int containerQueue;
    int qos;
    int qosSuspended = LabConfig.DEFAULT_QOS_SUSPENDED;
    private boolean qosSuspendedGiven;

    /** Reads {@code flag} if it is one of these (a bad value throws); false if it is not. */
    boolean take(String flag, String value) {
        switch (flag) {
            case "--max-in-flight" -> maxInFlight = LabConfig.intIn(flag, value, 0, LabConfig.MAX_IN_FLIGHT);
            case "--container-queue" -> containerQueue = LabConfig.intIn(flag, value, 0, LabConfig.MAX_CONTAINER_QUEUE);
            case "--qos" -> qos = LabConfig.intIn(flag, value, 0, LabConfig.MAX_QOS);
            case "--qos-suspended" -> {
                qosSuspended = LabConfig.intIn(flag, value, 0, LabConfig.MAX_QOS_SUSPENDED);
                qosSuspendedGiven = true;
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** A limit the container has no such thing for is refused ({@link LabConfig#containerLimitRefusal}), on every JDK. */
    void check(String container, boolean virtual) {
        if (qosSuspendedGiven && qos == 0) throw new IllegalArgumentException("--qos-suspended needs --qos N");
        String refused = LabConfig.containerLimitRefusal(container, virtual, containerQueue, qos);
        if (refused != null) throw new IllegalArgumentException(refused);
    }
}
