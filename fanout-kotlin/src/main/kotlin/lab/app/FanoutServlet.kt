package lab.app

import java.io.IOException
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger

import jakarta.servlet.AsyncContext
import jakarta.servlet.http.HttpServlet
import jakarta.servlet.http.HttpServletRequest
import jakarta.servlet.http.HttpServletResponse

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.flatMapMerge
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.future.await
import kotlinx.coroutines.launch

import lab.common.Fanout
import lab.common.Replies
import lab.common.outbound.Remote
import lab.common.work.Work

/**
 * Coroutine fan-out on a dispatcher of K named threads. The container thread starts the request
 * as Servlet 3.0 async and goes back to its pool; a coroutine on the dispatcher makes the N calls
 * and writes the answer. Whether K matters depends on one thing only: does a call block its
 * thread ([callBlocking]) or suspend ([callSuspending])?
 */
class FanoutServlet(
    private val remote: Remote,
    private val app: String,
    threads: Int,
    private val concurrency: Int,
) : HttpServlet() {

    private val work: Work = remote.work()
    private val dispatcher = Executors.newFixedThreadPool(threads, named()).asCoroutineDispatcher()
    private val scope = CoroutineScope(dispatcher + SupervisorJob())

    override fun doGet(request: HttpServletRequest, response: HttpServletResponse) {
        val fanout = try {
            Fanout.Request.parse(request.getParameter("n"), request.getParameter("ms"))
        } catch (e: IllegalArgumentException) {
            Replies.send(response, 400, e.message ?: "bad request")
            return
        }
        val async = request.startAsync()
        scope.launch { // this container thread returns now; a dispatcher thread carries on
            try {
                val tally = fanout(fanout)
                work.run() // --work: on the dispatcher thread the coroutine resumed on, once the N calls are done
                Replies.send(response, tally.status(), Fanout.answer(app, fanout, tally))
            } catch (e: IOException) {
                // The client went away: nothing left to tell anyone.
            } catch (e: IllegalStateException) {
                // The container already ended the request (async timeout).
            } finally {
                complete(async)
            }
        }
    }

    /**
     * A container that stops (SIGTERM) ends its open requests itself; a coroutine finishing later
     * must not throw out of `finally`: uncaught, a coroutine's exception is printed, one stack
     * trace per request, into the very stderr that carries the one `shutdown:` line.
     */
    private fun complete(async: AsyncContext) {
        try {
            async.complete()
        } catch (e: IllegalStateException) {
            // already completed by the container (async timeout, or it is stopping)
        }
    }

    private suspend fun fanout(request: Fanout.Request): Fanout.Tally = when (app) {
        "fanout-coroutines-blocking" -> asyncAwaitAll(request) { callBlocking(it) }
        "fanout-coroutines-suspending" -> asyncAwaitAll(request) { callSuspending(it) }
        "fanout-flow-blocking" -> flatMapMerge(request) { callBlocking(it) }
        else -> flatMapMerge(request) { callSuspending(it) }
    }

    /** One coroutine per call, all started at once; they run as far as the dispatcher's K threads let them. */
    private suspend fun asyncAwaitAll(request: Fanout.Request, call: suspend (Int?) -> Fanout.Call): Fanout.Tally =
        coroutineScope {
            Fanout.Tally.of((1..request.n()).map { async { call(request.ms()) } }.awaitAll())
        }

    /** The Flow write-up's model: at most C inner flows collected at once. */
    @OptIn(ExperimentalCoroutinesApi::class)
    private suspend fun flatMapMerge(request: Fanout.Request, call: suspend (Int?) -> Fanout.Call): Fanout.Tally =
        Fanout.Tally.of((1..request.n()).asFlow().flatMapMerge(concurrency) { flow { emit(call(request.ms())) } }.toList())

    /** `HttpClient.send`: the dispatcher thread running this is held for the whole M ms. */
    private fun callBlocking(ms: Int?): Fanout.Call = try {
        Fanout.Call.ok(remote.call(ms))
    } catch (e: InterruptedException) {
        Thread.currentThread().interrupt()
        Fanout.Call.failed(e)
    } catch (e: IOException) {
        Fanout.Call.failed(e)
    } catch (e: RuntimeException) {
        Fanout.Call.failed(e)
    }

    /** `sendAsync(...).await()`: the coroutine suspends, its thread runs other coroutines meanwhile. */
    private suspend fun callSuspending(ms: Int?): Fanout.Call = try {
        Fanout.Call.ok(remote.callAsync(ms).await())
    } catch (e: CancellationException) {
        throw e
    } catch (e: Exception) {
        Fanout.Call.failed(e)
    }

    override fun destroy() {
        scope.cancel()
        dispatcher.close()
    }

    private fun named(): (Runnable) -> Thread {
        val n = AtomicInteger()
        return { r -> Thread(r, "fanout-${n.incrementAndGet()}").apply { isDaemon = true } }
    }
}
