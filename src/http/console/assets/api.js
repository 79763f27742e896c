// The admin API, with the browser's credentials for this origin (HTTP Basic, asked once by
// the browser). Paths are relative to the page (/admin/console): "flows" is /admin/flows.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function answer(r) {
  const text = await r.text();
  let body;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!r.ok)
    throw new ApiError(
      r.status,
      body?.error?.code ?? `HTTP_${r.status}`,
      body?.error?.message ?? (r.statusText || `HTTP ${r.status}`),
    );
  return body;
}

export async function getJson(path) {
  return answer(
    await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' }),
  );
}

export async function send(method, path) {
  return answer(
    await fetch(path, {
      method,
      headers: { accept: 'application/json' },
      cache: 'no-store',
      credentials: 'same-origin',
    }),
  );
}

/** A request with a JSON body (the admin API's POST routes take one). */
export async function sendJson(method, path, body) {
  return answer(
    await fetch(path, {
      method,
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify(body),
      cache: 'no-store',
      credentials: 'same-origin',
    }),
  );
}

/** A path segment. */
export const seg = (s) => encodeURIComponent(String(s));
