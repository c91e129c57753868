-- wrk script for every Svc scenario where one request shape repeats (ingest, the ceiling, REST
-- listing, the tool endpoint). The runner (svc-bench suite) sets:
--   SVC_BENCH_METHOD   GET or POST
--   SVC_BENCH_PATH     request path with query
--   SVC_BENCH_HEADERS  extra headers, one "name: value" per line
--   SVC_BENCH_BODIES   optional file with one request body per line; requests cycle through them
-- Requests are formatted once per thread in init(), so the generator spends its CPU on sending, not
-- on Lua; except that a header whose value is "{unique}" gets a value of its own in every request
-- (an Idempotency-Key, as the widget sends one with every report), formatted as it is sent: a UUID
-- version 7 (the time in milliseconds first) as the widget makes them, or with SVC_BENCH_KEYS=random
-- a random UUID (version 4), as some API clients make them.
-- done() prints one line "JSON {...}" with counts and latency percentiles (microseconds).

local requests = {}
local count = 0
local next_index = 0
-- Per-request formatting, when a header asks for unique values.
local unique_names = {}
local method, path, headers, bodies_text = nil, nil, nil, {}

local threads = 0
local ffi = require("ffi")
ffi.cdef("struct svc_timeval { long tv_sec; long tv_usec; }; int gettimeofday(struct svc_timeval *tv, void *tz);")
local timeval = ffi.new("struct svc_timeval")
local random_keys = os.getenv("SVC_BENCH_KEYS") == "random"

-- A UUID: version 7 (48 bits of Unix milliseconds, then random) or, for random keys, version 4.
local function new_key()
  local head
  if random_keys then
    head = string.format("%08x-%04x-4", math.random(0, 0xffffffff), math.random(0, 0xffff))
  else
    ffi.C.gettimeofday(timeval, nil)
    local ms = tonumber(timeval.tv_sec) * 1000 + math.floor(tonumber(timeval.tv_usec) / 1000)
    head = string.format("%08x-%04x-7", math.floor(ms / 65536), ms % 65536)
  end
  return head .. string.format("%03x-%04x-%06x%06x", math.random(0, 0xfff), math.random(0x8000, 0xbfff),
    math.random(0, 0xffffff), math.random(0, 0xffffff))
end

setup = function(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

init = function(args)
  method = os.getenv("SVC_BENCH_METHOD") or "GET"
  path = os.getenv("SVC_BENCH_PATH") or "/"
  headers = {}
  for line in string.gmatch(os.getenv("SVC_BENCH_HEADERS") or "", "[^\n]+") do
    local name, value = string.match(line, "^%s*([^:]+):%s*(.-)%s*$")
    if name then headers[name] = value end
    if value == "{unique}" then table.insert(unique_names, name) end
  end
  -- Each thread's Lua state would otherwise draw the same random numbers (and the same keys).
  math.randomseed(os.time() * 1000 + (thread_number or 0))
  local bodies = os.getenv("SVC_BENCH_BODIES")
  if bodies and bodies ~= "" then
    for body in io.lines(bodies) do
      if body ~= "" then
        count = count + 1
        bodies_text[count] = body
        requests[count] = wrk.format(method, path, headers, body)
      end
    end
  else
    count = 1
    requests[1] = wrk.format(method, path, headers, nil)
  end
  -- Threads start at different bodies.
  next_index = math.random(count) - 1
end

request = function()
  next_index = next_index % count + 1
  if #unique_names > 0 then
    local key = new_key()
    for _, name in ipairs(unique_names) do headers[name] = key end
    return wrk.format(method, path, headers, bodies_text[next_index])
  end
  return requests[next_index]
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'JSON {"requests":%d,"duration_us":%d,"bytes":%d,"non2xx":%d,"connect_errors":%d,"read_errors":%d,' ..
    '"write_errors":%d,"timeouts":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
