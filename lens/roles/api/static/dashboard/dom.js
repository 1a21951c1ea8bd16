// Building the page: elements, figure cards, sortable tables, pagers and empty states. Text
// is always set as text (never parsed as HTML), so nothing a cluster names can inject markup.
import { now } from "./api.js";
import * as format from "./format.js";
import * as view from "./view.js";

export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "text") element.textContent = value;
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "style") Object.assign(element.style, value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function link(text, target) {
  return h("a", { href: target, text });
}

// A link to a workload's page; a pod without an owner is listed as its own workload (kind
// Pod) and has no such page: its name alone.
export function workloadLink(name, uid, kind) {
  return uid && kind !== "Pod" ? link(name, view.href(["workloads", uid])) : name;
}

// A figure: its raw value in data-value (what the API said), its text as written.
export function figure(name, value, text) {
  return h("span", { "data-figure": name, "data-value": value === null ? "null" : String(value), text });
}

// When figures were measured (a `measured` of the API: {as_of, stale}): "as of HH:MM", marked
// stale when what measures them is behind; `missing` says why there is no time at all.
export function asOf(measured, { missing = "not measured yet", name } = {}) {
  const text = format.asOf(measured, now());
  const stale = !measured || measured.stale;
  return h(
    "span",
    {
      class: stale ? "as-of stale" : "as-of",
      "data-as-of": name || "",
      "data-value": measured && measured.as_of !== null ? String(measured.as_of) : "null",
      "data-stale": stale ? "true" : "false",
      title: stale && text ? "older than its source's interval allows: what measures it is behind or stopped" : null,
    },
    text ? (stale ? `stale · ${text}` : text) : missing,
  );
}

// A card: a figure with its label, an optional note, and when it was measured — said on the
// card when that differs from `common` (the time the page names once for most of its cards)
// or the figure is stale.
export function card(label, name, value, text, note, measured, common) {
  const stale = measured !== undefined && (!measured || measured.stale);
  const minute = (m) => (m && m.as_of !== null ? Math.floor(m.as_of / 60) : null);
  const own = measured !== undefined && (stale || !common || minute(measured) !== minute(common));
  return h(
    "div",
    { class: stale ? "card stale" : "card", "data-card": name, "data-as-of": measured ? String(measured.as_of) : null },
    h("div", { class: "label", text: label }),
    h("div", { class: "value" }, figure(name, value, text)),
    note ? h("div", { class: "note", text: note }) : null,
    own ? h("div", { class: "note" }, asOf(measured, { name })) : null,
  );
}

export function empty(text) {
  return h("div", { class: "empty", "data-empty": "", text });
}

export function section(title, ...children) {
  return h("section", null, h("h2", { text: title }), ...children);
}

export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.flatMap(([term, value]) => [h("dt", { text: term }), h("dd", null, value)]));
}

export function badge(text, tone) {
  return h("span", { class: `badge ${tone}`, text });
}

// A table of `rows`; a column is {label, cell(row) -> Node|string, sort?: the API's order_by
// key, numeric?}. `sort` is {key, desc, onSort(key, desc)} when the server sorts.
export function table(columns, rows, { sort, emptyText, name } = {}) {
  if (rows.length === 0) return empty(emptyText || "Nothing here yet.");
  const head = h(
    "tr",
    null,
    columns.map((column) => {
      const classes = [column.numeric ? "num" : ""];
      let onclick = null;
      if (sort && column.sort) {
        classes.push("sortable");
        if (sort.key === column.sort) classes.push(sort.desc ? "sorted-desc" : "sorted-asc");
        onclick = () => sort.onSort(column.sort, sort.key === column.sort ? !sort.desc : column.numeric === true);
      }
      return h("th", { class: classes.join(" ").trim(), "data-sort": column.sort, onclick, text: column.label });
    }),
  );
  const body = rows.map((row) =>
    h("tr", null, columns.map((column) => h("td", { class: column.numeric ? "num" : "" }, column.cell(row)))),
  );
  return h("table", { "data-table": name }, h("thead", null, head), h("tbody", null, body));
}

// Sorting kept in the URL as order_by and desc.
export function urlSort(params, fallbackKey, fallbackDesc = true) {
  const desc = params.has("desc") ? params.get("desc") === "1" : fallbackDesc;
  return {
    key: params.get("order_by") || fallbackKey,
    desc,
    onSort: (key, descending) => view.update({ order_by: key, desc: descending ? "1" : "0", page: null }),
  };
}

// Previous and next pages of a list of `total` rows, the page number kept in the URL.
export function pager(page, pageSize, total) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (page > pages) page = pages;
  return h(
    "div",
    { class: "pager" },
    h("button", { type: "button", disabled: page <= 1, onclick: () => view.update({ page: page - 1 }), text: "‹ previous" }),
    h("span", { "data-pager": "", text: `page ${page} of ${pages} · ${total.toLocaleString("en-US")} in all` }),
    h("button", { type: "button", disabled: page >= pages, onclick: () => view.update({ page: page + 1 }), text: "next ›" }),
  );
}

// A filter bound to a URL parameter: a text box (applied on Enter or leaving it) or a select
// (`fallback`: the option meant while the URL names none).
export function filter(params, key, label, options, fallback = "") {
  const value = params.get(key) || fallback;
  const apply = (event) => view.update({ [key]: event.target.value.trim(), page: null });
  if (options) {
    return h(
      "label",
      { class: "control" },
      label,
      h(
        "select",
        { "data-filter": key, onchange: apply },
        options.map(([optionValue, text]) => h("option", { value: optionValue, selected: optionValue === value, text })),
      ),
    );
  }
  return h(
    "label",
    { class: "control" },
    label,
    h("input", {
      type: "search",
      "data-filter": key,
      value,
      onchange: apply,
      placeholder: "any",
    }),
  );
}

export function progress(share) {
  const width = `${Math.max(0, Math.min(100, share * 100)).toFixed(1)}%`;
  const bar = h("span");
  bar.style.width = width;
  return h("div", { class: "bar" }, bar);
}
