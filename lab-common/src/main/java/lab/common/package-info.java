/**
 * What every app module uses: {@link lab.common.Launcher} starts one app, {@link lab.common.Endpoint}
 * is what the app hands the container, {@link lab.common.Replies} and {@link lab.common.Filler} are
 * its answers ({@link lab.common.Fanout} those of the fan-out apps, {@link lab.common.SpringMvc} a
 * Spring MVC app's). The machinery behind them is in sub-packages named by role:
 * <ul>
 *   <li>{@code config}: {@code LabConfig}, parsed from the flags by a small parser per concern;</li>
 *   <li>{@code container}: Jetty, Tomcat and Reactor Netty, each with its pool pinned to {@code --threads};</li>
 *   <li>{@code stats}: the counters of /stats and the filter that counts every request;</li>
 *   <li>{@code outbound}: {@code Remote}, the one seam to the backend, and the HTTP clients behind it;</li>
 *   <li>{@code db}: the same seam on PostgreSQL ({@code --backend postgres});</li>
 *   <li>{@code admin}: the admin port ({@code /stats}, {@code /pool}, {@code /profile});</li>
 *   <li>{@code profile}: the CPU profiler it drives;</li>
 *   <li>{@code work}: {@code --work}, what each request does of its own after the remote call returns.</li>
 * </ul>
 */
package lab.common;
