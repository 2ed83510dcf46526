/**
 * The admin port, outside the measured container: {@code /stats}, {@code POST /pool} and the CPU
 * profile on demand ({@link lab.common.admin.AdminServer}).
 */
package lab.common.admin;
