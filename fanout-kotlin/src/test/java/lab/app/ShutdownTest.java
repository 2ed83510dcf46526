package lab.app;

import lab.common.ShutdownContract;

/** SIGTERM ends each app of this module within 5 s (each app on one container; v1 for the first), whatever is in flight. */
class ShutdownTest extends ShutdownContract {

    ShutdownTest() {
        super(App.APPS, "/fanout?n=2&ms=", true);
    }
}
