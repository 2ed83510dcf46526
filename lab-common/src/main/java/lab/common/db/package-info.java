/**
 * {@code --backend postgres}: the database drivers and pools behind the same seam as the HTTP
 * clients ({@link lab.common.outbound.Remote}), their /stats numbers, failures and queries, and
 * Spring's database idioms on them.
 */
package lab.common.db;
