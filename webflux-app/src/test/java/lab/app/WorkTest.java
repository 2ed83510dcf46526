package lab.app;

import java.util.List;

import lab.common.WorkContract;

/**
 * {@code --work} on WebFlux: the chain goes on where the answer arrived. On Netty with Reactor
 * Netty's client the event loop (server and client share it) runs it: the event-loop model's one
 * thread; after an R2DBC query on Netty, that same event loop (the driver's connections run on the
 * server's loop here); on the JDK client, its client-N thread, on Netty as on a servlet container.
 */
class WorkTest extends WorkContract {

    WorkTest() {
        super(App::endpoint, List.of(
                Cell.call("webflux", "netty", Where.HANDLER).withClient("reactor-netty"),
                Cell.call("webflux", "netty", Where.CLIENT),
                Cell.call("webflux", "jetty", Where.CLIENT),
                Cell.call("webflux", "netty", Where.HANDLER).onPostgres("r2dbc")));
    }
}
