/**
 * A CPU profile of this JVM on demand, from inside it (issue 15): {@link
 * lab.common.profile.Profiler}, async-profiler with a JFR fallback.
 */
package lab.common.profile;
