import type { CodeInfo } from './types.js';

/** Errors answered by the HTTP endpoints, as `{"error":{"code","message"}}`. */
export const HTTP_CODES: readonly CodeInfo[] = [
  { code: 'BAD_JSON', http: 400, title: 'The request body is not valid JSON.', hint: 'Send the RT.Request as a JSON object with Content-Type application/json.' },
  { code: 'BAD_REQUEST', http: 400, title: 'The request is not a valid RT.Request: a field is missing or has the wrong type.', hint: 'An RT.Request has all 14 fields (app, callid, request_hash, cli_name, cli_number, date_started, number, command, command_id, command_result, command_error, call_status, cdr_field, variables); the message names the field.' },
  { code: 'BODY_TOO_LARGE', http: 413, title: 'The request body is larger than the configured limit.', hint: 'Raise server.body_limit in callscript.yaml if the service really sends such bodies (large variables maps).' },
  { code: 'AUTH_REQUIRED', http: 401, title: 'The request has no valid HTTP Basic credentials.', hint: 'Set the same login and password in the REALTIME10 application (apps.create params login/password) and in callscript.yaml auth (or RT_LOGIN/RT_PASSWORD).' },
  { code: 'UNKNOWN_FLOW', http: 404, title: 'No flow of that name is loaded.', hint: 'Check the name in the URL /rt/:flow against GET /health; a flow with errors is not loaded (run callscript validate).' },
  { code: 'NO_ROUTE', http: 404, title: 'POST /rt found no flow for this call: no route for its app or number and no default.', hint: 'Add routes.apps, routes.numbers or routes.default in callscript.yaml, or use /rt/:flow.' },
  { code: 'UNKNOWN_CALL', http: 404, title: 'A non-first request for a call we hold no state for, with unknown_call: reject.', hint: 'The call state was lost (restart with the memory store, TTL expiry). Use unknown_call: restart or hangup to answer such requests.' },
  { code: 'STALE_REQUEST', http: 409, title: 'The request answers a command older than the previous one; the call does not advance.', hint: 'The service sent an out-of-date request (command_id far behind the latest). Nothing to do unless it repeats: check for duplicate deliveries.' },
  { code: 'FLOW_VERSION_GONE', http: 500, title: 'The call started on a flow version that is no longer loaded.', hint: 'The process restarted with a persistent store after the flow changed; the call cannot go on on its version.' },
  { code: 'DEADLINE', http: 200, title: 'The step did not finish before the deadline; a fallback command was answered.', hint: 'Logged, not returned: the call gets the fallback (a short wait) and goes on when the step lands. Look at store latency or slow logic steps.' },
  { code: 'NOT_FOUND', http: 404, title: 'No such route.', hint: 'The real-time endpoint is POST /rt or POST /rt/:flow; health is GET /health.' },
  { code: 'METHOD_NOT_ALLOWED', http: 405, title: 'The real-time endpoint only takes POST.', hint: 'The telephony service POSTs RT.Requests.' },
  { code: 'ADMIN_AUTH_REQUIRED', http: 401, title: 'An admin API request has no valid admin HTTP Basic credentials.', hint: 'Send the admin login and password (admin.login/admin.password in callscript.yaml, or ADMIN_LOGIN/ADMIN_PASSWORD); they are not the real-time route\'s.' },
  { code: 'BAD_ADMIN_BODY', http: 400, title: 'An admin API POST body is not the JSON object the route expects.', hint: 'POST /admin/flows/:name/current takes {"version": "..."}; POST /admin/flows/:name/canary takes {"percent": 0..100} or {"percent": null}. See docs/admin.md.' },
  { code: 'UNKNOWN_VERSION', http: 404, title: 'The flow has no such version (never published, or released and its source not kept).', hint: 'List the versions with GET /admin/flows/:name.' },
  { code: 'CALL_NOT_FOUND', http: 404, title: 'GET /admin/calls/:callid: no live call has that callid.', hint: 'The call ended, or its state expired (server.call_ttl_s). Live calls are counted in GET /admin/flows.' },
  { code: 'INTERNAL', http: 500, title: 'An unexpected error; the call state was not changed.', hint: 'A bug: the log line with the same request id has the stack. Please report it.' },
];
