/**
 * The admin port, outside the measured container: {@code /stats}, {@code POST /pool} and the CPU
 * profile on demand ({@link lab.common.admin.AdminServer}); who may change state there and where a
 * profile may be written ({@link lab.agent.AdminAccess}, shared with the lab's Java agent: the bench's per-run token, issue 40).
 */
package lab.common.admin;
