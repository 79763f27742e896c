import type { CodeInfo } from './types.js';

/** Errors answered by the HTTP endpoints, as `{"error":{"code","message"}}`. */
export const HTTP_CODES: readonly CodeInfo[] = [
  {
    code: 'BAD_JSON',
    http: 400,
    title: 'The request body is not valid JSON.',
    hint: 'Send the RT.Request as a JSON object with Content-Type application/json.',
  },
  {
    code: 'BAD_REQUEST',
    http: 400,
    title: 'The request is not a valid RT.Request: a field is missing or has the wrong type.',
    hint:
      'An RT.Request has all 14 fields (app, callid, request_hash, cli_name, cli_number, date_started, number, ' +
      'command, command_id, command_result, command_error, call_status, cdr_field, variables); the message ' +
      'names the field.',
  },
  {
    code: 'BODY_TOO_DEEP',
    http: 400,
    title:
      'The request body nests objects and arrays deeper than server.body_depth (default 32; the body itself is 1).',
    hint:
      'The service sends a flat RT.Request whose variables are what your flows echo: raise server.body_depth ' +
      'in callscript.yaml only if your variables really nest that deep.',
  },
  {
    code: 'UNSUPPORTED_ENCODING',
    http: 415,
    title:
      'The request has a Content-Encoding other than identity (gzip, deflate, br, ...): callscript reads ' +
      'bodies as sent, never decompressed.',
    hint:
      'Send the body uncompressed, without a Content-Encoding header (or with identity). A decompressed body ' +
      'could be far larger than server.body_limit.',
  },
  {
    code: 'BODY_TOO_LARGE',
    http: 413,
    title: 'The request body is larger than the configured limit.',
    hint:
      'Raise server.body_limit in callscript.yaml if the service really sends such bodies (large variables ' +
      'maps). On the webhook route the limit is webhooks.body_limit (default 256 KiB).',
  },
  {
    code: 'AUTH_REQUIRED',
    http: 401,
    title: 'The request has no valid HTTP Basic credentials.',
    hint:
      'Set the same login and password in the REALTIME10 application (apps.create params login/password) and ' +
      'in callscript.yaml auth (or RT_LOGIN/RT_PASSWORD).',
  },
  {
    code: 'UNKNOWN_FLOW',
    http: 404,
    title: 'No flow of that name is loaded.',
    hint:
      'Check the name in the URL /rt/:flow against GET /health; a flow with errors is not loaded (run ' +
      'callscript validate).',
  },
  {
    code: 'NO_ROUTE',
    http: 404,
    title: 'POST /rt found no flow for this call: no route for its app or number and no default.',
    hint: 'Add routes.apps, routes.numbers or routes.default in callscript.yaml, or use /rt/:flow.',
  },
  {
    code: 'UNKNOWN_CALL',
    http: 404,
    title: 'A non-first request for a call we hold no state for, with unknown_call: reject.',
    hint:
      'The call state was lost (restart with the memory store, TTL expiry). Use unknown_call: restart or ' +
      'hangup to answer such requests.',
  },
  {
    code: 'STALE_REQUEST',
    http: 409,
    title: 'The request answers a command older than the previous one; the call does not advance.',
    hint:
      'The service sent an out-of-date request (command_id far behind the latest). Nothing to do unless it ' +
      'repeats: check for duplicate deliveries.',
  },
  {
    code: 'FLOW_VERSION_GONE',
    http: 500,
    title: 'The call started on a flow version that is no longer loaded.',
    hint: 'The process restarted with a persistent store after the flow changed; the call cannot go on on its version.',
  },
  {
    code: 'DEADLINE',
    http: 200,
    title: 'The step did not finish before the deadline; a fallback command was answered.',
    hint:
      'Logged, not returned: the call gets the fallback (a short wait) and goes on when the step lands. Look ' +
      'at store latency or slow logic steps.',
  },
  {
    code: 'NOT_FOUND',
    http: 404,
    title: 'No such route.',
    hint: 'The real-time endpoint is POST /rt or POST /rt/:flow; health is GET /health.',
  },
  {
    code: 'METHOD_NOT_ALLOWED',
    http: 405,
    title: 'The real-time endpoint only takes POST.',
    hint: 'The telephony service POSTs RT.Requests.',
  },
  {
    code: 'ADMIN_AUTH_REQUIRED',
    http: 401,
    title: 'An admin API request (or GET /metrics with metrics.auth: admin) has no valid admin HTTP Basic credentials.',
    hint:
      'Send the admin login and password (admin.login/admin.password in callscript.yaml, or ' +
      "ADMIN_LOGIN/ADMIN_PASSWORD); they are not the real-time route's. A Prometheus scrape job sets them with " +
      'basic_auth (docs/operations.md).',
  },
  {
    code: 'BAD_ADMIN_BODY',
    http: 400,
    title: 'An admin API POST body is not the JSON object the route expects.',
    hint:
      'POST /admin/flows/:name/current takes {"version": "..."}; POST /admin/flows/:name/canary takes ' +
      '{"percent": 0..100} or {"percent": null}; POST /admin/calls takes {"app", "number", "vars"?, ' +
      '"cdr_field"?, "cli"?} (number E.164, vars a flat object of strings, numbers and booleans, 64 at most, 8 ' +
      'KB as JSON); POST /admin/queues/:name/agents takes {"number": E.164, "paused": true|false}. See ' +
      'docs/admin.md.',
  },
  {
    code: 'UNKNOWN_VERSION',
    http: 404,
    title: 'The flow has no such version (never published, or released and its source not kept).',
    hint: 'List the versions with GET /admin/flows/:name.',
  },
  {
    code: 'GRAPH_TOO_LARGE',
    http: 422,
    title:
      "GET /admin/flows/:name/graph: the flow version's diagram is too large for the web console (more boxes " +
      'than it draws, or not laid out within 10 s).',
    hint:
      'Draw it with callscript graph --format dot (Graphviz) instead. The answer is the same for that version ' +
      'until the server restarts.',
  },
  {
    code: 'GRAPH_UNAVAILABLE',
    http: 503,
    title:
      'GET /admin/flows/:name/graph: the diagram could not be laid out now (the layout thread stopped, or ' +
      'the server is closing).',
    hint: 'Try again: a new layout thread is started. If it keeps failing, the log says why.',
  },
  {
    code: 'CALL_NOT_FOUND',
    http: 404,
    title:
      'GET /admin/calls/:callid: no live call has that callid, and the call history holds no finished call ' +
      'of it; DELETE /admin/calls/:callid: no live call has that callid.',
    hint:
      'The call ended (its record is kept only with the call history on, for history.ttl_ms, the last ' +
      'history.keep calls), or its state expired (server.call_ttl_s). GET /admin/calls lists the live calls, ' +
      'GET /admin/calls?status=finished the finished ones.',
  },
  {
    code: 'BAD_CALLID',
    http: 400,
    title: 'The callid in an admin URL (/admin/calls/:callid) is not an unsigned 64-bit integer in decimal.',
    hint:
      "Callids are the service's: digits only, at most 18446744073709551615 (leading zeros are ignored). GET " +
      '/admin/calls lists them.',
  },
  {
    code: 'BAD_ADMIN_QUERY',
    http: 400,
    title:
      'The query string of GET /admin/calls is not valid: status other than live or finished, a limit ' +
      'outside 1..500, a parameter given twice, or a cursor this server did not give (or gave for the other ' +
      'status); of GET /admin/queues: a limit outside 1..1000.',
    hint:
      'GET /admin/calls?status=live|finished&limit=1..500&cursor=<the next of the previous page>. A cursor is ' +
      'opaque: take it from `next` as it is; after a restart of a memory store, start again without one.',
  },
  {
    code: 'CALL_BUSY',
    http: 409,
    title:
      'DELETE /admin/calls/:callid: another instance is running a step of the call that performs an effect ' +
      '(it holds a claim on the call); nothing was changed.',
    hint:
      'Try again in a moment: the claim ends with that step (at most the deadline and a second). A claim whose ' +
      'instance died expires and does not block the call.',
  },
  {
    code: 'CALL_ENDED_BY_ADMIN',
    title: 'A live call was ended from the admin API (DELETE /admin/calls/:callid): its state became a tombstone.',
    hint:
      'Logged (warn) with the callid, flow, version and step. The service is not told at once: the call ends ' +
      'at its next request, which is answered hangup; a long dialout or conference runs on until it returns.',
  },
  {
    code: 'HISTORY_WRITE_FAILED',
    title:
      'Writes of the call history to the store failed (logged at most once per 10 s, with the number of failures).',
    hint:
      'The calls are not affected: the history is written beside them and never holds a reply up. Check the ' +
      'store (GET /health); the paths and records of the calls of that time are incomplete or missing.',
  },
  {
    code: 'TRACING_API_MISMATCH',
    title:
      "An OpenTelemetry SDK is registered, but through another copy of @opentelemetry/api than callscript's, " +
      "of a version callscript's copy does not accept: no span is recorded (logged at start, warn).",
    hint:
      'Install SDK packages whose @opentelemetry/api dependency accepts the version callscript uses (the ' +
      'message names both); `npm ls @opentelemetry/api` should show one copy. See docs/operations.md, Traces.',
  },
  {
    code: 'HISTORY_UNSUPPORTED',
    title:
      'The call store given to the plugin has no history methods (a store of your own written before them): ' +
      'no call history is kept.',
    hint:
      'Implement appendPath, readPath, dropPath, addFinished, listFinished, getFinished and listLive (the ' +
      'HistoryStore interface; test it with the store contract suite), or pass history: false to silence this.',
  },
  {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    http: 415,
    title:
      'A request body (POST /rt, an admin POST, a webhook event) is sent with a Content-Type other than ' +
      'application/json, or with none.',
    hint:
      'Send Content-Type: application/json (a charset, if given, must be utf-8). A body without a Content-Type ' +
      'is refused too: browsers may send text/plain and form bodies to any site, never JSON without asking, so ' +
      'this keeps web pages from posting here.',
  },
  {
    code: 'SERVICE_UNCONFIGURED',
    http: 503,
    title: 'POST /admin/calls: the server has no account of the service (the CALLR API) to place calls with.',
    hint:
      'Give account: { login, password } in callscript.yaml (or CALLSCRIPT_ACCOUNT=LOGIN:PASSWORD) and, for ' +
      'another address than the CALLR API, api: (or CALLSCRIPT_API, e.g. http://127.0.0.1:4010 for the ' +
      'emulator) where the server runs; restart it. See docs/service.md.',
  },
  {
    code: 'SERVICE_ERROR',
    http: 502,
    title:
      'POST /admin/calls: the service refused calls.realtime with a JSON-RPC error; `serviceCode` in the ' +
      "error object is its code (22: the server's account was refused).",
    hint:
      "The message is the service's: an unknown application hash (code 20 on the emulator), a number the " +
      "account cannot call, a cli that is not one of the account's numbers. Code 22: check the account " +
      'configured where the server runs. No call was placed.',
  },
  {
    code: 'SERVICE_UNREACHABLE',
    http: 502,
    title:
      "POST /admin/calls: no connection could be made to the service's JSON-RPC address (connection refused, " +
      'host not found, no route): the request was never sent.',
    hint:
      'Check api: (CALLSCRIPT_API) where the server runs: the CALLR API is ' +
      'https://api.callr.com/json-rpc/v1.1/, the emulator http://127.0.0.1:4010. No call was placed.',
  },
  {
    code: 'SERVICE_OUTCOME_UNKNOWN',
    http: 502,
    title:
      'POST /admin/calls: calls.realtime was sent, but its answer was lost or unusable (the connection cut, ' +
      'an HTTP error, an answer that is not JSON-RPC, a result that is not a call id): the service may have ' +
      'placed the call.',
    hint:
      "Do not place it again before checking (the service's call records, or whether the person was called): " +
      'callscript dial exits 3 and callscript campaign marks the row unknown and never calls it again. Check ' +
      'api: (CALLSCRIPT_API) if it keeps happening.',
  },
  {
    code: 'SERVICE_TIMEOUT',
    http: 504,
    title: 'POST /admin/calls: the service did not answer calls.realtime in time (10 s).',
    hint:
      "The call may or may not have been placed: look at the service's call records before trying again, or a " +
      'number may be called twice.',
  },
  {
    code: 'UNKNOWN_QUEUE',
    http: 404,
    title:
      'GET /admin/queues/:name: the call store knows no queue of that name (no caller waits in it and no agent ' +
      'was seen or paused in it).',
    hint:
      'A queue exists in the store from its first caller or its first pause: GET /admin/queues lists those it ' +
      "knows. The name is the queue step's, as the flow writes it (case matters).",
  },
  {
    code: 'QUEUES_UNSUPPORTED',
    http: 404,
    title:
      'An admin queues route (/admin/queues...) was asked, but the call store has no queues (a store of your ' +
      'own that does not declare capabilities.queues()).',
    hint:
      'The memory and Redis stores have queues; a store of your own needs capabilities.queues() returning ' +
      'QueueLines (src/store/queues.ts). Without it the queue steps of the flows take their error branch.',
  },
  {
    code: 'QUEUE_AGENT_PAUSED',
    title:
      'An agent was paused or resumed in a queue through the admin API (POST /admin/queues/:name/agents; ' +
      'logged at info with the queue, the number and paused).',
    hint:
      'Informational. A paused agent is offered to no caller of that queue until resumed; a call it is on ' +
      'goes on.',
  },
  {
    code: 'METRICS_QUEUES_UNAVAILABLE',
    title:
      'A scrape of /metrics could not read the queues from the call store (it failed, or did not answer within ' +
      '1 s): the callscript_queue_* series of the store were left out of that answer (logged at warn, at most ' +
      'once per minute; counted in callscript_queue_view_failures_total).',
    hint:
      'The rest of the scrape is answered as usual. Check the store (GET /health says why it fails); the next ' +
      'scrape tries again.',
  },
  {
    code: 'OUTBOUND_NOT_FOUND',
    http: 404,
    title:
      "GET /admin/outbound/:id: no outbound call of that id was placed through this server's store, or its " +
      'record expired (6 hours after it was placed).',
    hint:
      "The id is the one POST /admin/calls answered (the call's request_hash). Calls placed by other tools are " +
      'not known here: find them in the call history (GET /admin/calls?status=finished).',
  },
  {
    code: 'OUTBOUND_PLACED',
    title:
      'An outbound call was placed through the admin API (logged at info with its id, app, number and the ' +
      'names of its vars).',
    hint: 'Informational. Its first request (request_hash = the id) starts the flow with the vars.',
  },
  {
    code: 'OUTBOUND_UNSUPPORTED',
    title:
      'The call store given to the plugin has no outbound methods (a store of your own written before them): ' +
      'POST /admin/calls and GET /admin/outbound/:id are off.',
    hint: 'Implement putOutbound and getOutbound (the OutboundStore interface; test it with the store contract suite).',
  },
  {
    code: 'CROSS_ORIGIN',
    http: 403,
    title:
      'An admin API request sent by a browser on behalf of another site (Sec-Fetch-Site other than ' +
      'same-origin or none, or an Origin that is not the host the request was sent to).',
    hint:
      'Use the admin API from a command-line client or a page served by the same host and port. Behind a ' +
      'reverse proxy, keep the Host header (and list the proxy in server.trust_proxy if it sets ' +
      'X-Forwarded-Host).',
  },
  {
    code: 'HOST_NOT_ALLOWED',
    http: 403,
    title:
      'A request to the admin API, the console, /metrics or /health named a host (Host, or X-Forwarded-Host ' +
      'from a proxy of server.trust_proxy) that is not localhost, an IP address, server.host or a name of ' +
      'server.allowed_hosts: refused before its credentials are looked at.',
    hint:
      'List the names your browsers, scrapers and probes use in server.allowed_hosts (exact, or *.example.com). ' +
      'This keeps a DNS-rebinding page (a name of its own pointed at this server) from reading them; /rt, the ' +
      'webhooks and /health/live answer any name.',
  },
  {
    code: 'AUTH_RATE_LIMITED',
    http: 429,
    title:
      'Too many failed authentications from this address within the window (server.auth_failure_limit per ' +
      'server.auth_failure_window_s); the address is refused until the window ends.',
    hint:
      'Wait for Retry-After seconds and fix the credentials. Failures are logged with the address; an address ' +
      'that authenticated within the window keeps being served when its credentials are right.',
  },
  {
    code: 'BAD_HTTP_REQUEST',
    http: 400,
    title:
      'The request is not valid HTTP/1.1: a broken request line or header, bad chunked framing, a ' +
      'Content-Length that does not match the body, an invalid % escape in the URL, no Host header, or more ' +
      'than one.',
    hint: 'A client or proxy bug: send well-formed HTTP/1.1. The connection is closed when the framing is broken.',
  },
  {
    code: 'REQUEST_TIMEOUT',
    http: 408,
    title:
      'The client did not send the whole request in time: its headers within server.headers_timeout_ms, or ' +
      'the whole request within server.request_timeout_ms.',
    hint: 'The connection is closed. A slow or stalled client; raise the timeouts only if a real client needs it.',
  },
  {
    code: 'URI_TOO_LONG',
    http: 414,
    title: 'A path segment of the URL (such as the flow name of /rt/:flow) is longer than 100 characters.',
    hint: 'Flow names are at most 64 characters; check the URL configured in the service.',
  },
  {
    code: 'HEADERS_TOO_LARGE',
    http: 431,
    title: 'The request line and headers are larger than 16 KiB.',
    hint: 'The connection is closed. Send shorter URLs and fewer or smaller headers.',
  },
  {
    code: 'EXPECTATION_FAILED',
    http: 417,
    title: 'The request has an Expect header other than 100-continue.',
    hint: 'Send no Expect header, or Expect: 100-continue.',
  },
  {
    code: 'SHUTTING_DOWN',
    http: 503,
    title: 'The request arrived while the server was shutting down; it was not handled.',
    hint:
      'Send it to another instance (a load balancer does so when the instance leaves it). The connection is ' +
      'closed.',
  },
  {
    code: 'CONNECTION_LIMIT',
    title:
      'A connection was refused because server.max_connections connections were open (logged at most once ' +
      'per 10 s, with the count).',
    hint:
      'Logged, not answered: the connection is closed as it is accepted. Raise server.max_connections (with ' +
      "the process's open-files limit, ulimit -n) if real clients need more; otherwise a client is holding " +
      'many connections open.',
  },
  {
    code: 'CALL_LIMIT',
    http: 503,
    title: 'A new call was refused: as many calls are live in this process as limits.max_live_calls allows.',
    hint:
      'The service retries (or places the call on another instance). Raise limits.max_live_calls if the ' +
      'machine has the memory, or run more instances on a shared store.',
  },
  {
    code: 'STORE_UNAVAILABLE',
    http: 503,
    title: 'The call store (Redis) could not be reached or answered too late; nothing of the request was written.',
    hint: 'The service retries the request. Check Redis (GET /health says why); the client reconnects by itself.',
  },
  {
    code: 'METRICS_PARTIAL',
    title:
      'With --workers N, a scrape of /metrics was answered without some workers: they did not answer within ' +
      '1.5 s (stopped, overloaded), or the primary did not answer within 2 s (logged by the worker scraped, ' +
      'with how many answered).',
    hint:
      'Logged, not returned: the answer sums the workers that answered (callscript_processes says how many). ' +
      'One scrape now and then is harmless; if it lasts, look at the worker left out (its event loop lag, its ' +
      'CPU).',
  },
  {
    code: 'WEBHOOK_SIGNATURE',
    http: 401,
    title:
      'A POST to the webhook route (webhooks.path, default /webhooks/callr) has no X-CALLR-HmacSignature ' +
      'header, or one that is not the base64 HMAC-SHA256 of the raw body with the webhook secret; nothing ' +
      'was recorded.',
    hint:
      'Subscribe the endpoint with webhooks.subscribe and hmac_secret set to the same secret as ' +
      'webhooks.secret (or CALLSCRIPT_WEBHOOK_SECRET), hmac_algo SHA256 (docs/webhooks.md). A proxy in front ' +
      'must pass the body unchanged. Refusals are logged at most once per 10 s, with their number.',
  },
  {
    code: 'WEBHOOK_BAD_EVENT',
    http: 400,
    title:
      'A signed webhook event is not one: event_id (1 to 128 of letters, digits and . _ : -), type, event_at ' +
      '(ISO 8601), try (an integer) or data (an object) is missing or wrong, X-CALLR-EventId differs from ' +
      'event_id, or an sms.mt.status_update has no SMS hash and status.',
    hint:
      'The message names the field. The service sends {event_id, event_at, hook_hash, try, type, data}; check ' +
      'what sends to the route.',
  },
  {
    code: 'WEBHOOK_EVENT_TIME',
    http: 400,
    title:
      "A signed webhook event whose event_at is further from this server's clock than webhooks.tolerance_ms " +
      '(default 5 minutes), before or after: refused, nothing recorded (logged at most once per 10 s).',
    hint:
      'A replayed capture of an old event, or one dated ahead; else the clock of this server (or of the ' +
      "service) is wrong: check NTP. If the service's retries of an event last longer than the tolerance, raise " +
      'webhooks.tolerance_ms (at most 48 h, how long event ids are remembered).',
  },
  {
    code: 'WEBHOOK_DUPLICATE',
    title:
      'A webhook event whose event_id was handled already (within 48 h) came again: answered 200, not ' +
      'recorded again (logged at debug).',
    hint:
      'The service retries an event when it got no 2xx in time (its try counter goes up): nothing to do. ' +
      'Instances on one Redis share the event ids.',
  },
  {
    code: 'WEBHOOK_SMS_MO',
    title:
      'An SMS was received (an sms.mo webhook event): logged at info with its hash, sender, recipient, ' +
      'length and parts; its text is never logged.',
    hint:
      'Read the text from the service (sms.get with the hash) if a flow or a person needs it. GET ' +
      '/admin/webhooks counts the events.',
  },
  {
    code: 'WEBHOOKS_OFF',
    title:
      'Webhooks are configured (webhooks: in callscript.yaml, or the plugin option) without a secret: the ' +
      'webhook route does not exist (404).',
    hint:
      'Set CALLSCRIPT_WEBHOOK_SECRET (or webhooks.secret, at least 16 characters, e.g. openssl rand -base64 ' +
      '32) and give the same secret to webhooks.subscribe as hmac_secret. There is no unsigned mode.',
  },
  {
    code: 'WEBHOOKS_UNSUPPORTED',
    title:
      'The call store given to the plugin has no delivery status methods (a store of your own written before ' +
      'them): the webhook route is off.',
    hint:
      'Implement smsSent, smsReport, smsStatus, claimEvent and releaseEvent (the SmsStatusStore interface; ' +
      'test it with the store contract suite), or use the memory or Redis store.',
  },
  {
    code: 'INTERNAL',
    http: 500,
    title: 'An unexpected error; the call state was not changed.',
    hint: 'A bug: the log line with the same request id has the stack. Please report it.',
  },
];
