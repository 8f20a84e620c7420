-- POST /api/messages: the same small chat message every time (each gets a new id).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"author":"bench","room":"general","content":"Hello from the benchmark: a chat message of a typical length."}'
