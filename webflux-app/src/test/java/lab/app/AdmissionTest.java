package lab.app;

import java.util.List;

import lab.common.AdmissionContract;

/**
 * {@code --max-in-flight} on WebFlux: on Reactor Netty (one event loop) the limit sits in
 * StatsHttpHandler; mounted as a servlet on Jetty, in StatsFilter, where WebFlux is an async request.
 */
class AdmissionTest extends AdmissionContract {

    AdmissionTest() {
        super(App::endpoint, List.of(cell("webflux", "netty", "1"), cell("webflux", "jetty", "1")), null);
    }
}
