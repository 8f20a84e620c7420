-- Appended to every scenario script: prints one machine-readable line when wrk is done.
-- Latencies are in microseconds; "status" counts responses with a status >= 400.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
  -- A scenario may print figures of its own (conversations.lua: each kind and the pair).
  if report_extra ~= nil then report_extra(summary) end
end
