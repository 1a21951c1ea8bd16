// Reads Lens's REST API (/v1): the envelope unwrapped, errors as ApiError with the server's
// message, the bearer token (when the API asks for one) kept for this browser tab only.
const TOKEN_KEY = "lens.token";
// The API's largest page (api.max_page_size), told by /v1/about before a page first reads.
export const limits = { pageSize: 1000 };

// The API's clock, told by /v1/about: the end of every "last hour" a page asks for. It is the
// cluster's time, which `lens demo --speed` runs faster than the browser's, and a browser
// whose own clock is off still sees the latest minutes.
const clock = { told: Date.now() / 1000, at: Date.now() / 1000, rate: 1 };

export function setClock(now, rate) {
  clock.told = Date.now() / 1000;
  clock.at = now;
  clock.rate = rate;
}

// Now by the API's clock, in whole Unix seconds.
export function now() {
  return Math.floor(clock.at + (Date.now() / 1000 - clock.told) * clock.rate);
}

export class ApiError extends Error {
  constructor(status, message, path) {
    super(message);
    this.status = status;
    this.path = path;
  }
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function url(path, query) {
  const made = new URL(path, location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") made.searchParams.set(key, value);
  }
  return made;
}

async function request(path, query, accept) {
  const headers = { Accept: accept };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(url(path, query), { headers });
  if (!response.ok) {
    let message = response.statusText;
    try {
      message = (await response.json()).meta.message;
    } catch {
      // not the envelope: the status text says enough
    }
    throw new ApiError(response.status, message, path);
  }
  return response;
}

// The answer's `data` (the bare array of trainingPerformance as it is).
export async function get(path, query) {
  const body = await (await request(path, query, "application/json")).json();
  return Array.isArray(body) ? body : body.data;
}

// A page of `wanted` rows, or the API's largest (app.js learns it before any page reads).
export function pageSize(wanted) {
  return Math.min(wanted, limits.pageSize);
}

// Every row of a paged list: its first page, then the others side by side.
export async function getAll(path, query) {
  const size = limits.pageSize;
  const first = await get(path, { ...query, page_num: 1, page_size: size });
  const pages = Math.ceil(first.total / size);
  const rest = [];
  for (let page = 2; page <= pages; page++) {
    rest.push(get(path, { ...query, page_num: page, page_size: size }));
  }
  const rows = [...first.data];
  for (const more of await Promise.all(rest)) rows.push(...more.data);
  return { ...first, data: rows };
}

// The same route's CSV (Accept: text/csv), as text.
export async function getCsv(path, query) {
  return (await request(path, query, "text/csv")).text();
}
