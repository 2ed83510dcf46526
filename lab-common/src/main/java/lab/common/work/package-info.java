/**
 * {@code --work}: what each request does of its own after the remote call returns, on the thread
 * where the model runs its code — a calibrated computation, an allocation, one-byte writes to
 * /dev/null ({@link lab.common.work.Work}). The controls of the cost card (issue 39): each moves
 * its own counter by the amount asked.
 */
package lab.common.work;
