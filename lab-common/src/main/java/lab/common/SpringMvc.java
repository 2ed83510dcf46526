package lab.common;

import java.io.InputStream;

import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.AbstractResource;
import org.springframework.core.io.Resource;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

import lab.common.container.Container;
import lab.common.outbound.Remote;

/**
 * Plain Spring MVC (no Boot): a DispatcherServlet over an annotation context holding the
 * controller and the shared {@link Remote}. Async support is on the servlet and the stats filter
 * registrations (docs/traps.md #8), done by {@link Container}.
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

    /**
     * An answer body for {@code ResponseEntity<Resource>}: the text, then {@code filler} bytes
     * ({@link Filler}). MVC's ResourceHttpMessageConverter sets Content-Length from it and copies
     * it to the servlet output stream with blocking writes, on whichever container thread handles
     * the return value — the request thread, or the async dispatch's thread for a future. That is
     * how MVC writes any body; unlike a {@code byte[]} it needs no N-byte array per request, and
     * unlike {@code StreamingResponseBody} (which MVC runs on an async task executor) it does not
     * change the model.
     */
    public static Resource answer(String text, int filler) {
        byte[] head = Replies.bytes(text);
        return new AbstractResource() {
            @Override
            public InputStream getInputStream() {
                return Filler.stream(head, filler);
            }

            @Override
            public long contentLength() {
                return head.length + (long) filler;
            }

            @Override
            public boolean exists() {
                return true;
            }

            @Override
            public String getDescription() {
                return "answer of " + contentLength() + " bytes";
            }
        };
    }
}
