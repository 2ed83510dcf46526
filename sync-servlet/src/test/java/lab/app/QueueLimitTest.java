package lab.app;

import lab.common.QueueLimitContract;

/**
 * {@code --container-queue} (Tomcat) and {@code --qos} (Jetty): container features, not model ones,
 * so only this thread-per-request module runs them (its pool is what the queue is in front of).
 */
class QueueLimitTest extends QueueLimitContract {

    QueueLimitTest() {
        super(App::endpoint, "sync-servlet");
    }
}
