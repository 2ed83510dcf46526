package lab.app;

import java.util.List;

import lab.common.AdmissionContract;

/**
 * {@code --max-in-flight} on thread per request: 20 threads, so the threads are not the limit and
 * the 503s are the Semaphore's; and one virtual thread per request on one carrier (JDK 21+).
 */
class AdmissionTest extends AdmissionContract {

    AdmissionTest() {
        super(App::endpoint, List.of(cell("sync-servlet", "tomcat", "20"), cell("sync-servlet", "jetty", "v1")), null);
    }
}
