-- wrk-json.lua: wrk's done() hook writes this run's numbers as JSON to the file named by $WRK_JSON,
-- so bench/report.py never parses wrk's human output. Latencies are in microseconds, as wrk keeps them.
--
-- bench.sh also sets WRK_CONNECTIONS and WRK_TIMEOUT_S (the -c and --timeout it passed), which
-- the "slow_2s" count below needs. Tested with wrk 4.1.0 (Debian's package).

-- "slow_2s" counts responses slower than 2 s: wrk's default --timeout, the threshold behind the
-- "timeouts" column of the reference table (docs/prior-art.md), so runs with a long --timeout stay comparable.
local SLOW_US = 2000000

-- Two facts about wrk 4.1 that decide how slow_2s is counted:
-- 1. A response slower than --timeout counts in summary.requests and in errors.timeout (only
--    when it does arrive) but is left out of the latency histogram.
-- 2. After the run, wrk "corrects coordinated omission": with E = duration / (requests per
--    connection), every recorded latency n > 2E also adds synthetic samples at n-E, n-2E, ...
--    (while > E). The histogram, and so every percentile wrk reports, then holds more samples
--    than there were responses. See stats_correct() in wrk's src/stats.c.

-- The interval E wrk used for its correction, or nil when it did not correct.
local function correction_interval(summary, latency)
   local conns = tonumber(os.getenv("WRK_CONNECTIONS") or "")
   if not conns then return nil, "unknown (WRK_CONNECTIONS not set)" end
   local per_conn = math.floor(summary.requests / conns)
   if per_conn < 1 then return nil end
   local e = math.floor(summary.duration / per_conn)
   if latency.max > 2 * e then return e end
   return nil
end

-- Sum of the histogram counts in (low, high]: walks the distinct values from the largest down
-- (latency(i) = i-th distinct value and its count; #latency = how many distinct values).
local function histogram_count(latency, low, high)
   local sum = 0
   for i = #latency, 1, -1 do
      local value, count = latency(i)
      if value <= low then break end
      if value <= high then sum = sum + count end
   end
   return sum
end

-- Samples <= limit_us when the histogram holds exactly n real samples (no correction).
-- latency:percentile(p) returns the smallest value whose cumulative count reaches
-- rank = round(p/100 * n + 0.5); p = (r - 0.25) * 100 / n makes that rank exactly r, so the
-- r-th smallest sample is found by bisection over r: exact, and log2(n) passes in C.
local function count_at_or_below(latency, n, limit_us)
   if n == 0 or latency.min > limit_us then return 0 end
   if latency.max <= limit_us then return n end
   local lo, hi = 1, n                    -- the 1st sample is <= limit, the n-th is not
   while hi - lo > 1 do
      local mid = math.floor((lo + hi) / 2)
      if latency:percentile((mid - 0.25) * 100 / n) <= limit_us then lo = mid else hi = mid end
   end
   return lo
end

-- Responses slower than SLOW_US, and a sentence saying how that number was obtained.
local function slow_responses(summary, latency)
   local timeout_s = tonumber(os.getenv("WRK_TIMEOUT_S") or "")
   if not timeout_s or timeout_s * 1000000 < SLOW_US then
      return nil, "not known: --timeout below 2 s hides slower responses"
   end
   local timed_out = summary.errors.timeout   -- arrived after --timeout, so slower than 2 s
   local recorded = summary.requests - timed_out
   local how = "responses > 2 s in wrk's latency histogram"
   if timed_out > 0 then how = how .. " + wrk's timeouts (arrived after --timeout)" end
   if latency.max <= SLOW_US then return timed_out, how end
   local e, why = correction_interval(summary, latency)
   if why then return nil, "not known: " .. why end
   if not e then
      return recorded - count_at_or_below(latency, recorded, SLOW_US) + timed_out, how
   end
   -- Corrected histogram: a real response u > L is counted once in (L, L+E] (as itself or as one
   -- of its synthetic copies u-E, u-2E, ...), and synthetic samples never land at or below E.
   -- So real responses > L = histogram count in (L, max(L, E) + E].
   local slow = histogram_count(latency, SLOW_US, math.max(SLOW_US, e) + e)
   return slow + timed_out, how .. ", net of wrk's coordinated-omission samples (E = "
      .. string.format("%.3f", e / 1e6) .. " s)"
end

-- ---------------------------------------------------------------- completion times
-- wrk's req/s counts whole responses in a window, which moves in ~10 % steps with 1 s responses
-- (docs/traps.md #14, #20). Each thread records when every response completed (a monotonic clock
-- through LuaJIT's ffi) and done() writes them all, sorted, in seconds after the first: the bench
-- turns them into the steady rate (bench/labbench/steady.py, where it is tested on recorded runs).
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } lab_timespec;
int clock_gettime(int clk_id, lab_timespec *tp);
]]
local CLOCK_REALTIME, CLOCK_MONOTONIC = 0, 1
local ts = ffi.new("lab_timespec")
local function now_s(clock)
   ffi.C.clock_gettime(clock or CLOCK_MONOTONIC, ts)
   return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local threads = {}
function setup(thread)
   table.insert(threads, thread)
end

completed_at = {}        -- per wrk thread (each has its own Lua state); read in done()
function response(status, headers, body)
   completed_at[#completed_at + 1] = now_s()
end

-- Every thread's completion times, sorted, in seconds after the first; and the first as wall-clock
-- time (Unix seconds), so that several load hosts' times can be laid on one axis (HOSTS, issue 28).
local function completions()
   local all = {}
   for _, t in ipairs(threads) do
      for _, v in ipairs(t:get("completed_at") or {}) do all[#all + 1] = v end
   end
   table.sort(all)
   local rel = {}
   for i, v in ipairs(all) do rel[i] = string.format("%.4f", v - all[1]) end
   local first_unix = nil
   if #all > 0 then first_unix = all[1] + (now_s(CLOCK_REALTIME) - now_s(CLOCK_MONOTONIC)) end
   return rel, first_unix
end

local function num(x)
   if x == nil then return "null" end
   return string.format("%.0f", x)
end

-- The whole latency histogram, as [[microseconds, count], ...] in ascending order: what every
-- percentile above is taken from (after wrk's correction, if any). Several load hosts' histograms
-- summed are exactly the histogram one wrk would have had (bench/labbench/loadgens/histogram.py):
-- percentiles are never averaged. wrk's own `latency(i)` walks the whole array for every i
-- (stats_value_at in src/stats.c), so k values cost k x (max - min) steps: 20,000 values over 2 s
-- of spread would take minutes. So the array is read once, through the FFI, as wrk 4.1 lays it out
-- (src/stats.h: count, limit, min, max, data[]; the Lua object holds a stats *, src/script.c), and
-- checked against what wrk itself says (min, max, the number of values, their total): nil and the
-- reason if anything differs.
ffi.cdef[[
typedef struct { uint64_t count; uint64_t limit; uint64_t min; uint64_t max; uint64_t data[1]; } lab_stats;
]]   -- data[1] stands for C's data[]: the FFI does not check the index
local function histogram(latency)
   local s = ffi.cast("lab_stats **", latency)[0]
   local lo, hi = tonumber(s.min), tonumber(s.max)
   if lo ~= latency.min or hi ~= latency.max or hi >= tonumber(s.limit) then
      return nil, "wrk's stats are not laid out as this script expects (wrk 4.1)"
   end
   local out, values, total = {}, 0, 0
   for v = lo, hi do
      local c = tonumber(s.data[v])
      if c > 0 then
         values, total = values + 1, total + c
         out[values] = "[" .. v .. "," .. c .. "]"
      end
   end
   if values ~= #latency or total ~= tonumber(s.count) then
      return nil, "the histogram read does not add up to wrk's (" .. values .. " values, " .. total .. " samples)"
   end
   return table.concat(out, ",")
end

function done(summary, latency, requests)
   local path = os.getenv("WRK_JSON")
   if not path or path == "" then
      io.stderr:write("wrk-json.lua: set WRK_JSON to the output file\n")
      return
   end
   local e = summary.errors
   local empty = (latency.max == 0)       -- no sample at all: wrk's min is then UINT64_MAX
   local function p(q) return empty and 0 or latency:percentile(q) end
   local slow, how = slow_responses(summary, latency)
   local corrected = (not empty) and correction_interval(summary, latency) ~= nil
   local f = assert(io.open(path, "w"))
   f:write("{\n")
   f:write('  "duration_us": ', num(summary.duration), ",\n")
   f:write('  "requests": ', num(summary.requests), ",\n")
   f:write('  "bytes": ', num(summary.bytes), ",\n")
   f:write('  "errors": {"connect": ', num(e.connect), ', "read": ', num(e.read),
           ', "write": ', num(e.write), ', "status": ', num(e.status),
           ', "timeout": ', num(e.timeout), "},\n")
   f:write('  "latency_us": {"min": ', num(empty and 0 or latency.min), ', "mean": ', num(latency.mean),
           ', "stdev": ', num(latency.stdev), ', "p50": ', num(p(50)), ', "p90": ', num(p(90)),
           ', "p99": ', num(p(99)), ', "p999": ', num(p(99.9)), ', "max": ', num(latency.max), "},\n")
   f:write('  "latency_corrected": ', tostring(corrected), ",\n")
   local hist, why = "", nil
   if not empty then hist, why = histogram(latency) end
   f:write('  "histogram_us": ', hist and ("[" .. hist .. "]") or "null", ",\n")
   if why then f:write('  "histogram_why": "', why, '",\n') end
   local times, first_unix = completions()
   f:write('  "connections": ', num(tonumber(os.getenv("WRK_CONNECTIONS") or "")), ",\n")
   f:write('  "steady_responses": ', num(#times), ",\n")
   f:write('  "completions_s": [', table.concat(times, ","), "],\n")
   f:write('  "completions_t0_unix": ', first_unix and string.format("%.4f", first_unix) or "null", ",\n")
   f:write('  "slow_2s": ', num(slow), ",\n")
   f:write('  "slow_2s_how": "', how, '"\n')
   f:write("}\n")
   f:close()
end
