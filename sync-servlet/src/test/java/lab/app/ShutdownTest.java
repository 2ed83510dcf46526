package lab.app;

import lab.common.ShutdownContract;

/** SIGTERM ends each app of this module within 5 s, on every container, whatever is in flight. */
class ShutdownTest extends ShutdownContract {

    ShutdownTest() {
        super(App.APPS, "/call?ms=");
    }
}
