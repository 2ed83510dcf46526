package lab.app;

import java.util.List;

import lab.common.AdmissionContract;

/** {@code --max-in-flight} on Servlet 3.1 non-blocking I/O with one thread. */
class AdmissionTest extends AdmissionContract {

    AdmissionTest() {
        super(App::endpoint, List.of(cell("nio-servlet", "tomcat", "1")), null);
    }
}
