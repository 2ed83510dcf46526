package lab.common;

import org.springframework.context.annotation.Configuration;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

/**
 * Plain Spring MVC (no Boot): a DispatcherServlet over an annotation context holding the
 * controller and the shared {@link Remote}. Async support is on the servlet and the stats filter
 * registrations (lab-notes trap 8), done by {@link Container}.
 */
public final class SpringMvc {

    private SpringMvc() {
    }

    @Configuration
    @EnableWebMvc
    static class WebConfig {
    }

    public static Endpoint dispatcher(Remote remote, Class<?>... components) {
        AnnotationConfigWebApplicationContext context = new AnnotationConfigWebApplicationContext();
        context.register(WebConfig.class);
        context.register(components);
        context.addBeanFactoryPostProcessor(beans -> beans.registerSingleton("remote", remote));
        return Endpoint.everything(new DispatcherServlet(context));
    }
}
