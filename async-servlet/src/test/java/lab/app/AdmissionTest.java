package lab.app;

import java.util.List;

import lab.common.AdmissionContract;

/**
 * {@code --max-in-flight} on Servlet 3.0 async with one thread: the thread returns at once, the
 * permit must wait for the AsyncListener's onComplete. Also the unlimited case: 20 at once, all 200.
 */
class AdmissionTest extends AdmissionContract {

    AdmissionTest() {
        super(App::endpoint, List.of(cell("async-servlet", "jetty", "1")), cell("async-servlet", "tomcat", "1"));
    }
}
