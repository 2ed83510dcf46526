package lab.app;

import java.util.List;

import lab.common.AppContract;
import lab.common.Endpoint;

/** Runs the shared contract (answers, errors, and the model with one thread) for this module's apps. */
class AppTest extends AppContract {

    @Override
    protected List<String> apps() {
        return App.APPS;
    }

    @Override
    protected Endpoint.Factory factory() {
        return App::endpoint;
    }

    @Override
    protected boolean blocking() {
        return false;
    }
}
