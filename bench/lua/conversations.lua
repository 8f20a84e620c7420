-- A conversation view, as a client shows one: the history page before a random stored id, then
-- the reaction summaries of exactly that page's ids (one GET /api/reactions with its 50
-- messageIds), then the next page, and so on. Run with one wrk thread per connection
-- (-t = -c): a thread's Lua state then belongs to one connection, so the two requests of a
-- pair are known, and the pair's own latency (page sent -> summaries received) is recorded
-- here with a monotonic clock (LuaJIT's ffi), beside each kind's. report_extra() prints them
-- as one WRK_EXTRA line (the per-request figures of report.lua mix both kinds).
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } conv_timespec;
  int clock_gettime(int clock, conv_timespec *ts);
]]
local ts = ffi.new("conv_timespec")
local find, sub = string.find, string.sub
local function now_us()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
end

-- Main state: the threads, numbered (each seeds its own random sequence).
local threads = {}
setup = function(thread)
  threads[#threads + 1] = thread
  thread:set("thread_no", #threads)
end

init = function(args)
  init_ids(args)
  math.randomseed(os.time() * 1000 + (thread_no or 0) * 7919)
end

-- Per thread (one connection): the figures it recorded, read by report_extra().
page_us, summary_us, pair_us = {}, {}, {}
bad_pages, bad_summaries, empty_pages, emoji_seen = 0, 0, 0, 0

local in_flight = "page"
local summary_path = nil
local page_start, summary_start = 0, 0

request = function()
  if summary_path ~= nil then
    in_flight = "summary"
    summary_start = now_us()
    return wrk.format("GET", summary_path)
  end
  in_flight = "page"
  page_start = now_us()
  return wrk.format("GET", "/api/messages?order=desc&limit=50&before=" .. random_id())
end

response = function(status, headers, body)
  local t = now_us()
  if in_flight == "page" then
    page_us[#page_us + 1] = t - page_start
    if status ~= 200 then
      bad_pages = bad_pages + 1
      return
    end
    -- Each message's JSON starts with {"id":" and those bytes occur nowhere else. A plain
    -- find (memchr), not a pattern: a pattern scan of a 15 kB page costs the client ~0.3 ms.
    local parts, n, at = {}, 0, 1
    while true do
      local s = find(body, '{"id":"', at, true)
      if s == nil then break end
      n = n + 1
      parts[n] = sub(body, s + 7, s + 42)
      at = s + 43
    end
    if n == 0 then
      empty_pages = empty_pages + 1
      return
    end
    summary_path = "/api/reactions?messageId=" .. table.concat(parts, "&messageId=")
  else
    summary_us[#summary_us + 1] = t - summary_start
    pair_us[#pair_us + 1] = t - page_start
    summary_path = nil
    if status ~= 200 then
      bad_summaries = bad_summaries + 1
      return
    end
    local at = 1
    while true do
      local s = find(body, '"emoji":', at, true)
      if s == nil then break end
      emoji_seen = emoji_seen + 1
      at = s + 8
    end
  end
end

local function figures(values, seconds)
  table.sort(values)
  local n = #values
  local function at(p)
    if n == 0 then return 0 end
    return values[math.max(1, math.ceil(n * p / 100))]
  end
  return string.format('{"count":%d,"perSecond":%.1f,"p50Us":%.0f,"p99Us":%.0f,"maxUs":%.0f}',
    n, n / seconds, at(50), at(99), at(100))
end

report_extra = function(summary)
  local page, sum, pair = {}, {}, {}
  local counts = { bad_pages = 0, bad_summaries = 0, empty_pages = 0, emoji_seen = 0 }
  for _, thread in ipairs(threads) do
    for _, v in ipairs(thread:get("page_us")) do page[#page + 1] = v end
    for _, v in ipairs(thread:get("summary_us")) do sum[#sum + 1] = v end
    for _, v in ipairs(thread:get("pair_us")) do pair[#pair + 1] = v end
    for name, _ in pairs(counts) do counts[name] = counts[name] + thread:get(name) end
  end
  local seconds = summary.duration / 1e6
  io.write(string.format(
    'WRK_EXTRA {"page":%s,"summary":%s,"pair":%s,"badPages":%d,"badSummaries":%d,' ..
    '"emptyPages":%d,"emojiSeen":%d}\n',
    figures(page, seconds), figures(sum, seconds), figures(pair, seconds),
    counts.bad_pages, counts.bad_summaries, counts.empty_pages, counts.emoji_seen))
end
