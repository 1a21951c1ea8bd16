// The view lives in the URL's fragment, `#/<page>/<argument>?<key>=<value>&...`, so that a
// view can be shared, bookmarked and reloaded.
export function current() {
  const raw = location.hash.replace(/^#\/?/, "");
  const cut = raw.indexOf("?");
  const path = cut < 0 ? raw : raw.slice(0, cut);
  const query = cut < 0 ? "" : raw.slice(cut + 1);
  const parts = path.split("/").filter(Boolean).map(decoded);
  return { parts, params: new URLSearchParams(query) };
}

function decoded(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part; // a malformed escape is kept as written: the page says what it cannot find
  }
}

// What every view keeps, whichever page a link goes to.
const GLOBAL = ["refresh", "theme"];

export function href(parts, params) {
  const path = parts.map(encodeURIComponent).join("/");
  const carried = new URLSearchParams(params || undefined);
  const now = current().params;
  for (const key of GLOBAL) if (now.has(key) && !carried.has(key)) carried.set(key, now.get(key));
  const query = carried.toString();
  return `#/${path}${query ? `?${query}` : ""}`;
}

// Go to the current page with `changes` made to its parameters (null or "" removes one).
export function update(changes) {
  const { parts, params } = current();
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === "") params.delete(key);
    else params.set(key, String(value));
  }
  location.hash = href(parts, params);
}

export function integer(params, key, fallback, least = 0) {
  const value = Number.parseInt(params.get(key) ?? "", 10);
  return Number.isFinite(value) ? Math.max(least, value) : fallback;
}

// The value of `key` in `table` when the URL names one of its own keys, else `fallback`.
export function choice(params, key, table, fallback) {
  const value = params.get(key);
  return value !== null && Object.hasOwn(table, value) ? value : fallback;
}
