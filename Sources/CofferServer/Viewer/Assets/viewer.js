// Coffer's browser viewer. It talks only to the server's JSON API (/v1/...), with the session
// cookie and the session's CSRF header, and puts every stored value on the page as text
// (textContent, never HTML), so a stored "<script>" shows as those characters.
"use strict";

(function () {
  const state = {
    session: null,
    info: null,
    schemas: [],
    counts: new Map(),
    schema: null,
    sort: [],
    filterModel: null,
    filter: { all: true },
    pageSize: 100,
    cursors: [null],
    page: 0,
    rows: [],
    next: null,
    total: null,
    history: [],
    detail: null,
    live: null,
  };
  const canWrite = () => Boolean(state.session && state.session.scopes.includes("write"));

  // ---- JSON that keeps 64-bit integers whole: long ints and dates travel as strings inside
  // the page and as JSON numbers on the wire.
  function parseJSON(text) {
    return JSON.parse(text.replace(/"(int|date)":(-?\d{16,})/g, '"$1":"$2"'));
  }
  function toJSON(value) {
    return JSON.stringify(value).replace(/"(int|date)":"(-?\d+)"/g, '"$1":$2');
  }

  class ApiError extends Error {
    constructor(status, error) {
      super((error && error.message) || "The server answered " + status + ".");
      this.status = status;
      this.code = (error && error.code) || "unknown";
      this.error = error || {};
    }
  }

  async function call(method, path, body) {
    const headers = { Accept: "application/json" };
    if (state.session && state.session.csrf) headers["X-Coffer-CSRF"] = state.session.csrf;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : toJSON(body),
      credentials: "same-origin",
      cache: "no-store",
    });
    const text = await response.text();
    let parsed = null;
    try {
      parsed = text ? parseJSON(text) : null;
    } catch (e) {
      parsed = null;
    }
    if (response.status === 401) {
      window.location.assign("/ui/login");
      throw new ApiError(401, parsed && parsed.error);
    }
    if (!response.ok) throw new ApiError(response.status, parsed && parsed.error);
    return parsed;
  }
  const post = (path, body) => call("POST", path, body);
  const get = (path) => call("GET", path);

  // ---- Elements, built with text only.
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    if (props) {
      for (const [key, value] of Object.entries(props)) {
        if (value === undefined || value === null || value === false) continue;
        if (key === "text") node.textContent = value;
        else if (key === "class") node.className = value;
        else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
        else if (key === "value") node.value = value;
        else if (key === "checked" || key === "disabled" || key === "selected" || key === "hidden") node[key] = true;
        else node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  const $ = (id) => document.getElementById(id);
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }
  let uniqueCounter = 0;
  const uid = (prefix) => prefix + "-" + ++uniqueCounter;
  function labelled(text, control, extra) {
    if (!control.id) control.id = uid("c");
    return el("span", { class: "labelled" + (extra ? " " + extra : "") }, el("label", { for: control.id, text }), control);
  }
  function select(options, current, props) {
    const node = el("select", props || {});
    for (const [value, text] of options) {
      const option = el("option", { value, text });
      if (value === current) option.selected = true;
      node.append(option);
    }
    return node;
  }
  function status(text, isError) {
    const node = $("status");
    node.textContent = text || "";
    node.className = isError ? "error" : "";
  }
  const number = (n) => Number(n).toLocaleString("en-US");

  // ---- Values.
  function base64ToBytes(text) {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }
  function bytesToBase64(bytes) {
    let binary = "";
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary);
  }
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");
  function hexToBytes(text) {
    const clean = text.replace(/\s+/g, "");
    if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new Error("Bytes are written as hex digit pairs, e.g. 0a ff.");
    const bytes = new Uint8Array(clean.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(clean.substr(i * 2, 2), 16);
    return bytes;
  }
  function dateText(micros) {
    const big = BigInt(micros);
    const ms = Number(big / 1000n) - (big % 1000n < 0n ? 1 : 0);
    const rest = Number(((big % 1000n) + 1000n) % 1000n);
    const date = new Date(ms);
    if (isNaN(date.getTime())) return String(micros) + " µs";
    const iso = date.toISOString();
    return rest === 0 ? iso : iso.replace("Z", String(rest).padStart(3, "0") + "Z");
  }
  function documentText(base64, pretty) {
    const bytes = base64ToBytes(base64);
    try {
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      return pretty ? JSON.stringify(JSON.parse(text), null, 2) : text;
    } catch (e) {
      return hex(bytes);
    }
  }
  function valueKind(value) {
    return value ? Object.keys(value)[0] : "null";
  }
  // A value as text: short for a table cell, whole (documents pretty-printed) for the detail.
  function show(value, whole) {
    const kind = valueKind(value);
    const v = value[kind];
    let text;
    switch (kind) {
      case "null":
        return "null";
      case "bool":
        return v ? "true" : "false";
      case "int":
        return String(v);
      case "double":
        return typeof v === "string" ? v : Object.is(v, -0) ? "-0.0" : String(v);
      case "string":
        text = v;
        break;
      case "bytes":
        text = hex(base64ToBytes(v));
        break;
      case "date":
        return dateText(v);
      case "uuid":
        return v;
      case "document":
        text = documentText(v, whole);
        break;
      default:
        text = JSON.stringify(value);
    }
    if (!whole && text.length > 120) return text.slice(0, 119) + "…";
    return text;
  }
  // A value as plain JSON, for JSON Lines export.
  function plain(value) {
    const kind = valueKind(value);
    const v = value[kind];
    switch (kind) {
      case "null":
        return null;
      case "int":
        return { raw: String(v) };
      case "double":
        return typeof v === "string" ? v : v;
      case "bytes":
        return hex(base64ToBytes(v)).replace(/ /g, "");
      case "date":
        return dateText(v);
      case "document":
        try {
          return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(base64ToBytes(v)));
        } catch (e) {
          return v;
        }
      default:
        return v;
    }
  }
  function plainJSON(object) {
    return JSON.stringify(object, (key, value) =>
      value && typeof value === "object" && Object.keys(value).length === 1 && "raw" in value
        ? "\u0000RAW" + value.raw + "\u0000"
        : value
    ).replace(/"\\u0000RAW(-?\d+)\\u0000"/g, "$1");
  }
  // Text typed for a field of `kind` as a Value; throws with a message saying what is expected.
  function parseValue(text, kind) {
    switch (kind) {
      case "bool":
        if (text === "true" || text === "false") return { bool: text === "true" };
        throw new Error("A bool is true or false.");
      case "int":
        if (/^-?\d+$/.test(text.trim())) {
          const big = BigInt(text.trim());
          if (big > 9223372036854775807n || big < -9223372036854775808n) throw new Error("The int is out of range.");
          return { int: big.toString() };
        }
        throw new Error("An int is whole digits, e.g. 42 or -7.");
      case "double": {
        const t = text.trim();
        if (t === "inf" || t === "-inf") return { double: t };
        const n = Number(t);
        if (t === "" || isNaN(n)) throw new Error("A double is a number, e.g. 2.5, or inf.");
        return { double: n };
      }
      case "string":
        return { string: text };
      case "bytes":
        return { bytes: bytesToBase64(hexToBytes(text)) };
      case "date": {
        const t = text.trim();
        if (/^-?\d+$/.test(t)) return { date: t };
        const ms = Date.parse(t);
        if (isNaN(ms)) throw new Error("A date is ISO 8601, e.g. 2026-01-31T12:00:00Z.");
        const fraction = /\.(\d+)/.exec(t);
        const extra = fraction ? Number((fraction[1] + "000000").slice(3, 6)) : 0;
        return { date: (BigInt(ms) * 1000n + BigInt(ms >= 0 ? extra : -extra)).toString() };
      }
      case "uuid":
        if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(text.trim())) {
          return { uuid: text.trim().toUpperCase() };
        }
        throw new Error("A UUID looks like E621E1F8-C36C-495A-93FC-0C247A3E6E5F.");
      case "document":
        try {
          JSON.parse(text);
        } catch (e) {
          throw new Error("A document is JSON.");
        }
        return { document: bytesToBase64(new TextEncoder().encode(text)) };
      default:
        throw new Error("Unknown kind " + kind + ".");
    }
  }
  // The text an edit box starts with for a value.
  function editText(value) {
    const kind = valueKind(value);
    if (kind === "null") return "";
    if (kind === "document") return documentText(value.document, true);
    return show(value, true);
  }
  const sameValue = (a, b) => toJSON(a) === toJSON(b);

  // ---- Schemas.
  const idIndex = (schema) => schema.fields.findIndex((f) => f.name === schema.idField);
  const schemaNamed = (name) => state.schemas.find((s) => s.name === name);
  function referencesTo(entity) {
    const found = [];
    for (const schema of state.schemas) {
      for (const reference of schema.references || []) {
        if (reference.entity === entity) found.push({ schema, reference });
      }
    }
    return found;
  }

  // ---- Start.
  async function start() {
    $("logout").addEventListener("click", logout);
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !$("detail").hidden) closeDetail();
    });
    try {
      state.session = await get("/ui/session");
      state.info = await get("/v1/store");
    } catch (error) {
      status("The viewer could not start: " + error.message, true);
      return;
    }
    $("store").textContent = state.session.store;
    $("mode").textContent = canWrite() ? "read and write" : "read only";
    await loadEntities();
    startLive();
  }

  async function logout() {
    try {
      await post("/ui/logout", {});
    } catch (e) {
      // The session is gone either way.
    }
    window.location.assign("/ui/login");
  }

  async function loadEntities() {
    const answer = await post("/v1/prepare", { schemas: [] });
    state.schemas = answer.schemas;
    const list = clear($("entities"));
    if (state.schemas.length === 0) list.append(el("li", { text: "No entities are stored yet." }));
    for (const schema of state.schemas) {
      const count = el("span", { class: "count", "data-count-for": schema.name, text: "…" });
      list.append(
        el(
          "li",
          null,
          el(
            "button",
            { type: "button", class: "entity-link", "data-entity": schema.name, onclick: () => openEntity(schema.name) },
            el("span", { class: "name", text: schema.name }),
            count
          )
        )
      );
    }
    refreshCounts();
  }

  async function refreshCounts() {
    for (const schema of state.schemas) {
      try {
        const answer = await post("/v1/count", { entity: schema.name });
        state.counts.set(schema.name, answer.count);
        const node = document.querySelector('[data-count-for="' + CSS.escape(schema.name) + '"]');
        if (node) node.textContent = number(answer.count);
      } catch (error) {
        // A count that fails leaves the old one.
      }
    }
  }

  // ---- An entity.
  function openEntity(name, filterModel, remember) {
    const schema = schemaNamed(name);
    if (!schema) return;
    if (remember !== false && state.schema) state.history.push(snapshot());
    state.schema = schema;
    state.sort = [];
    state.filterModel = filterModel || newGroup("and");
    state.filter = compileGroup(state.filterModel);
    state.search = null;
    renderSearch();
    closeDetail();
    for (const node of document.querySelectorAll(".entity-link")) {
      node.setAttribute("aria-current", node.dataset.entity === name ? "page" : "false");
    }
    $("welcome").hidden = true;
    $("entity").hidden = false;
    $("entity-title").textContent = name;
    $("back").hidden = state.history.length === 0;
    renderSchema();
    renderFilter();
    renderGroupPanel();
    showTab("rows");
    resetPaging();
  }
  function snapshot() {
    return {
      entity: state.schema.name,
      filterModel: state.filterModel,
      sort: state.sort,
      cursors: state.cursors,
      page: state.page,
    };
  }
  function goBack() {
    const previous = state.history.pop();
    if (!previous) return;
    openEntity(previous.entity, previous.filterModel, false);
    state.sort = previous.sort;
    state.cursors = previous.cursors;
    state.page = previous.page;
    loadPage();
    countRows();
  }

  function showTab(name) {
    for (const tab of ["rows", "schema", "group"]) {
      const button = $("tab-" + tab);
      button.setAttribute("aria-selected", tab === name ? "true" : "false");
      button.tabIndex = tab === name ? 0 : -1;
      $(tab + "-panel").hidden = tab !== name;
    }
  }

  // Back to the first page; `recount` is false when only the order changed, which leaves the
  // number of rows as it is (a count of a large entity costs the server about a scan).
  function resetPaging(recount = true) {
    state.cursors = [null];
    state.page = 0;
    loadPage();
    if (recount) countRows();
  }

  // The filter of the builder, and the search box's full-text search when there is one.
  function effectiveFilter() {
    if (!state.search) return state.filter;
    const search = { matches: { field: state.search.field, query: state.search.query } };
    return isAll(state.filter) ? search : { and: [state.filter, search] };
  }
  const isAll = (filter) => filter && filter.all === true && Object.keys(filter).length === 1;

  function currentQuery() {
    return { entity: state.schema.name, filter: effectiveFilter(), sort: state.sort };
  }

  // The keyset cursor after `row`, as the server takes it: the values of the sort fields, then
  // the id (a sort that names the id ends there).
  function cursorAfter(row) {
    const schema = state.schema;
    const keys = [];
    for (const sort of state.sort) {
      keys.push(sort.field);
      if (sort.field === schema.idField) break;
    }
    if (!keys.includes(schema.idField)) keys.push(schema.idField);
    return { values: keys.map((name) => row[schema.fields.findIndex((f) => f.name === name)]) };
  }

  let pageRequest = 0;
  async function loadPage() {
    const ticket = ++pageRequest;
    const query = currentQuery();
    // One row more than the page shows, so that Next is offered only when there is a next page.
    query.limit = state.pageSize + 1;
    const after = state.cursors[state.page];
    if (after) query.after = after;
    const started = performance.now();
    try {
      const answer = await post("/v1/read", query);
      if (ticket !== pageRequest) return;
      state.rows = answer.rows.slice(0, state.pageSize);
      state.next = answer.rows.length > state.pageSize ? cursorAfter(state.rows[state.rows.length - 1]) : null;
      renderRows(performance.now() - started);
    } catch (error) {
      if (ticket !== pageRequest) return;
      status("Reading " + state.schema.name + " failed: " + error.message, true);
    }
  }

  async function countRows() {
    state.total = null;
    renderPager();
    try {
      const answer = await post("/v1/count", { entity: state.schema.name, filter: effectiveFilter() });
      state.total = answer.count;
      renderPager();
    } catch (error) {
      status("Counting failed: " + error.message, true);
    }
  }

  function renderPager() {
    const first = state.page * state.pageSize + 1;
    const last = state.page * state.pageSize + state.rows.length;
    const of = state.total === null ? "" : " of " + number(state.total);
    $("range").textContent = state.rows.length === 0 ? "No rows" + of : "Rows " + number(first) + "–" + number(last) + of;
    $("prev").disabled = state.page === 0;
    $("first").disabled = state.page === 0;
    $("next").disabled = !state.next;
  }

  function sortButton(field) {
    const current = state.sort.find((s) => s.field === field.name);
    const arrow = current ? (current.ascending ? " ▲" : " ▼") : "";
    return el("button", {
      type: "button",
      class: "sort",
      "data-sort": field.name,
      "aria-label": "Sort by " + field.name,
      text: field.name + arrow,
      onclick: () => {
        if (!current) state.sort = [{ field: field.name, ascending: true }];
        else if (current.ascending) state.sort = [{ field: field.name, ascending: false }];
        else state.sort = [];
        resetPaging(false);
      },
    });
  }

  function renderRows(milliseconds) {
    const schema = state.schema;
    const table = $("rows");
    const head = clear(table.tHead || table.createTHead());
    const headRow = el("tr");
    for (const field of schema.fields) {
      const current = state.sort.find((s) => s.field === field.name);
      headRow.append(
        el(
          "th",
          { scope: "col", "aria-sort": current ? (current.ascending ? "ascending" : "descending") : "none" },
          sortButton(field),
          el("span", { class: "kind", text: field.kind + (field.isOptional ? "?" : "") })
        )
      );
    }
    head.append(headRow);
    const body = clear(table.tBodies[0] || table.createTBody());
    const references = new Map((schema.references || []).map((r) => [r.field, r]));
    const id = idIndex(schema);
    state.rows.forEach((row, index) => {
      const tr = el("tr", { "data-row": index });
      schema.fields.forEach((field, position) => {
        const value = row[position];
        const kind = valueKind(value);
        const td = el("td", { class: "v-" + kind });
        if (position === id) {
          td.append(
            el("button", {
              type: "button",
              class: "open-row",
              "aria-label": "Open row " + show(value),
              text: show(value),
              onclick: () => openDetail(schema, row),
            })
          );
        } else if (references.has(field.name) && kind !== "null") {
          const reference = references.get(field.name);
          td.append(
            el("button", {
              type: "button",
              class: "follow",
              "aria-label": "Open " + reference.entity + " " + show(value),
              text: "→ " + show(value),
              onclick: () => followReference(reference.entity, value),
            })
          );
        } else {
          td.textContent = show(value);
        }
        tr.append(td);
      });
      body.append(tr);
    });
    renderPager();
    $("timing").textContent = "Page read in " + Math.round(milliseconds) + " ms.";
    $("rows").dataset.loadedMs = String(Math.round(milliseconds));
    $("rows").dataset.page = String(state.page);
  }

  // ---- Filter builder: groups of conditions, each group all of (and), any of (or) or not all
  // of (not and). Every filter of the query model has a form here.
  const OPERATORS = [
    ["==", "="],
    ["!=", "≠"],
    ["<", "<"],
    ["<=", "≤"],
    [">", ">"],
    [">=", "≥"],
    ["isNull", "is null"],
    ["isNotNull", "is not null"],
    ["in", "is one of (comma-separated)"],
    ["contains", "contains"],
    ["hasPrefix", "starts with"],
    ["hasSuffix", "ends with"],
    ["equalIgnoringCase", "equals, ignoring case"],
    ["containsIgnoringCase", "contains, ignoring case"],
    ["hasPrefixIgnoringCase", "starts with, ignoring case"],
    ["hasSuffixIgnoringCase", "ends with, ignoring case"],
    ["matches", "matches words (full-text search)"],
    ["field==", "= field"],
    ["field!=", "≠ field"],
    ["field<", "< field"],
    ["field<=", "≤ field"],
    ["field>", "> field"],
    ["field>=", "≥ field"],
  ];
  const STRING_MATCHES = [
    "contains",
    "hasPrefix",
    "hasSuffix",
    "equalIgnoringCase",
    "containsIgnoringCase",
    "hasPrefixIgnoringCase",
    "hasSuffixIgnoringCase",
  ];
  const newGroup = (mode) => ({ type: "group", mode, items: [] });
  const newCondition = () => ({ type: "cond", field: state.schema.fields[0].name, op: "==", value: "", other: "" });

  function compileCondition(c) {
    const field = state.schema.fields.find((f) => f.name === c.field);
    if (!field) throw new Error("Choose a field.");
    if (c.op === "isNull") return { compare: { field: c.field, op: "==", value: { null: true } } };
    if (c.op === "isNotNull") return { compare: { field: c.field, op: "!=", value: { null: true } } };
    if (c.op.startsWith("field")) {
      if (!c.other) throw new Error("Choose the field to compare " + c.field + " with.");
      return { compareFields: { field: c.field, op: c.op.slice(5), other: c.other } };
    }
    if (STRING_MATCHES.includes(c.op)) return { string: { field: c.field, match: c.op, pattern: c.value } };
    if (c.op === "matches") return { matches: { field: c.field, query: c.value } };
    try {
      if (c.op === "in") {
        const parts = c.value === "" ? [] : c.value.split(",").map((part) => (field.kind === "string" ? part : part.trim()));
        return { in: { field: c.field, values: parts.map((part) => parseValue(part, field.kind)) } };
      }
      return { compare: { field: c.field, op: c.op, value: parseValue(c.value, field.kind) } };
    } catch (error) {
      throw new Error(c.field + ": " + error.message);
    }
  }
  function compileGroup(group) {
    const items = group.items.map((item) => (item.type === "group" ? compileGroup(item) : compileCondition(item)));
    if (group.mode === "or") return { or: items };
    if (items.length === 0) return group.mode === "nand" ? { not: { all: true } } : { all: true };
    const all = items.length === 1 ? items[0] : { and: items };
    return group.mode === "nand" ? { not: all } : all;
  }

  function renderFilter() {
    const root = clear($("filter-tree"));
    root.append(renderGroup(state.filterModel, null));
  }
  function renderGroup(group, parent) {
    const box = el("fieldset", { class: "group" });
    const mode = select(
      [
        ["and", "all of these hold"],
        ["or", "any of these holds"],
        ["nand", "not all of these hold"],
      ],
      group.mode,
      { onchange: (event) => (group.mode = event.target.value), class: "group-mode" }
    );
    box.append(el("legend", null, labelled(parent ? "Group: rows where" : "Rows where", mode)));
    for (const item of group.items) {
      box.append(item.type === "group" ? renderGroup(item, group) : renderCondition(item, group));
    }
    const actions = el(
      "div",
      { class: "actions" },
      el("button", {
        type: "button",
        class: "add-condition",
        text: "Add condition",
        onclick: () => {
          group.items.push(newCondition());
          renderFilter();
          const selects = document.querySelectorAll("#filter-tree .cond-field");
          if (selects.length) selects[selects.length - 1].focus();
        },
      }),
      el("button", {
        type: "button",
        text: "Add group",
        onclick: () => {
          group.items.push(newGroup("or"));
          renderFilter();
        },
      })
    );
    if (parent) {
      actions.append(
        el("button", {
          type: "button",
          text: "Remove group",
          onclick: () => {
            parent.items.splice(parent.items.indexOf(group), 1);
            renderFilter();
          },
        })
      );
    }
    box.append(actions);
    return box;
  }
  function renderCondition(condition, group) {
    const fields = state.schema.fields.map((f) => [f.name, f.name]);
    const row = el("div", { class: "condition" });
    const field = select(fields, condition.field, {
      class: "cond-field",
      onchange: (event) => (condition.field = event.target.value),
    });
    const op = select(OPERATORS, condition.op, {
      class: "cond-op",
      onchange: (event) => {
        condition.op = event.target.value;
        renderFilter();
      },
    });
    row.append(labelled("Field", field), labelled("Operator", op));
    if (condition.op.startsWith("field")) {
      if (!condition.other) condition.other = state.schema.fields[0].name;
      row.append(
        labelled(
          "Other field",
          select(fields, condition.other, { class: "cond-other", onchange: (event) => (condition.other = event.target.value) })
        )
      );
    } else if (condition.op !== "isNull" && condition.op !== "isNotNull") {
      row.append(
        labelled(
          "Value",
          el("input", {
            type: "text",
            class: "cond-value",
            value: condition.value,
            oninput: (event) => (condition.value = event.target.value),
          })
        )
      );
    }
    row.append(
      el("button", {
        type: "button",
        class: "remove",
        text: "Remove",
        "aria-label": "Remove condition on " + condition.field,
        onclick: () => {
          group.items.splice(group.items.indexOf(condition), 1);
          renderFilter();
        },
      })
    );
    return row;
  }
  function applyFilter(event) {
    event.preventDefault();
    try {
      state.filter = compileGroup(state.filterModel);
    } catch (error) {
      status("The filter is not complete: " + error.message, true);
      return;
    }
    resetPaging();
    refreshGroups();
  }

  // ---- The search box: a full-text search (the `matches` filter) on one string field.
  function renderSearch() {
    const form = clear($("search-form"));
    const fields = state.schema.fields.filter((f) => f.kind === "string").map((f) => [f.name, f.name]);
    form.hidden = fields.length === 0;
    if (!fields.length) return;
    const field = select(fields, fields[0][0], { id: "search-field" });
    const query = el("input", { type: "search", id: "search-query", placeholder: 'words, "a phrase", pre*, NOT word' });
    form.append(
      labelled("Search in", field),
      labelled("Words", query),
      el("button", { type: "submit", text: "Search" }),
      el("button", {
        type: "button",
        text: "Clear search",
        onclick: () => {
          query.value = "";
          state.search = null;
          resetPaging();
          refreshGroups();
        },
      })
    );
  }
  function applySearch(event) {
    event.preventDefault();
    const query = $("search-query").value.trim();
    state.search = query ? { field: $("search-field").value, query } : null;
    resetPaging();
    refreshGroups();
  }

  // ---- Schema page.
  async function renderSchema() {
    const schema = state.schema;
    const panel = clear($("schema-panel"));
    const fields = el(
      "table",
      { class: "schema" },
      el("caption", { text: "Fields" }),
      el("thead", null, el("tr", null, ["Field", "Kind", "Optional", "Default", "Id"].map((t) => el("th", { scope: "col", text: t }))))
    );
    const body = el("tbody");
    for (const field of schema.fields) {
      body.append(
        el(
          "tr",
          null,
          el("td", { text: field.name }),
          el("td", { text: field.kind }),
          el("td", { text: field.isOptional ? "yes" : "no" }),
          el("td", { text: field.defaultValue ? show(field.defaultValue, true) : "" }),
          el("td", { text: field.name === schema.idField ? "id" : "" })
        )
      );
    }
    fields.append(body);
    panel.append(fields);
    panel.append(el("h3", { text: "Indexes" }));
    const indexes = el("ul");
    for (const index of schema.indexes || []) {
      indexes.append(el("li", { text: (index.kind === "text" ? "text: " : index.isUnique ? "unique: " : "index: ") + index.fields.join(", ") }));
    }
    if (!(schema.indexes || []).length) indexes.append(el("li", { text: "None besides the id." }));
    panel.append(indexes);
    panel.append(el("h3", { text: "References" }));
    const references = el("ul");
    for (const reference of schema.references || []) {
      references.append(
        el("li", { text: reference.field + " → " + reference.entity + " (on delete: " + reference.onDelete + ")" })
      );
    }
    for (const { schema: other, reference } of referencesTo(schema.name)) {
      references.append(el("li", { text: other.name + "." + reference.field + " refers here (on delete: " + reference.onDelete + ")" }));
    }
    if (!references.childElementCount) references.append(el("li", { text: "None." }));
    panel.append(references);
    panel.append(el("h3", { text: "Migrations the store ran" }));
    const migrations = el("ul");
    panel.append(migrations);
    try {
      const records = await get("/ui/migrations");
      for (const record of records) {
        migrations.append(
          el("li", {
            text:
              record.position + ". " + record.name + " — " + new Date(record.appliedAt).toISOString() + ", " + number(record.rowsTouched) + " rows",
          })
        );
      }
      if (!records.length) migrations.append(el("li", { text: "None." }));
    } catch (error) {
      migrations.append(el("li", { text: "Unknown: " + error.message }));
    }
  }

  // ---- Group-by and aggregates.
  function renderGroupPanel() {
    const panel = clear($("group-panel"));
    const fields = state.schema.fields.map((f) => [f.name, f.name]);
    const by = select([["", "(no grouping)"]].concat(fields), "", { id: "group-by" });
    const fn = select(
      [
        ["count", "count"],
        ["countDistinct", "count distinct"],
        ["sum", "sum"],
        ["min", "min"],
        ["max", "max"],
        ["average", "average"],
      ],
      "count",
      { id: "group-function" }
    );
    const of = select(fields, state.schema.fields[0].name, { id: "group-field" });
    const form = el(
      "form",
      { class: "toolbar", onsubmit: (event) => {
        event.preventDefault();
        refreshGroups(true);
      } },
      labelled("Group by", by),
      labelled("Function", fn),
      labelled("Of field", of),
      el("button", { type: "submit", text: "Compute" })
    );
    panel.append(el("p", { class: "hint", text: "Over the rows the filter selects." }), form, el("div", { id: "group-result" }));
  }
  async function refreshGroups(asked) {
    const result = $("group-result");
    if (!result || (!asked && !result.hasChildNodes())) return;
    const groupBy = $("group-by").value;
    const name = $("group-function").value;
    const fn = name === "count" ? { count: true } : { [name]: $("group-field").value };
    const request = { query: { entity: state.schema.name, filter: effectiveFilter() }, function: fn };
    if (groupBy) request.groupBy = groupBy;
    try {
      const answer = await post("/v1/aggregate", request);
      const table = el(
        "table",
        { class: "groups" },
        el("thead", null, el("tr", null, el("th", { scope: "col", text: groupBy || "all rows" }), el("th", { scope: "col", text: name })))
      );
      const body = el("tbody");
      for (const group of answer.groups.slice(0, 1000)) {
        body.append(el("tr", null, el("td", { text: groupBy ? show(group.key) : "" }), el("td", { text: show(group.value) })));
      }
      table.append(body);
      clear(result).append(table);
      if (answer.groups.length > 1000) result.append(el("p", { text: "The first 1,000 of " + number(answer.groups.length) + " groups." }));
    } catch (error) {
      clear(result).append(el("p", { class: "error", text: error.message }));
    }
  }

  // ---- Export the current query (filter and sort), page by page.
  async function exportRows(format) {
    const schema = state.schema;
    const names = schema.fields.map((f) => f.name);
    const parts = [];
    if (format === "csv") parts.push(names.map(csvCell).join(",") + "\r\n");
    let after = null;
    let done = 0;
    try {
      for (;;) {
        const query = currentQuery();
        query.limit = 5000;
        if (after) query.after = after;
        const answer = await post("/v1/read", query);
        for (const row of answer.rows) {
          if (format === "csv") {
            parts.push(row.map((value, i) => csvCell(csvText(value, schema.fields[i].kind))).join(",") + "\r\n");
          } else {
            const object = {};
            names.forEach((name, i) => (object[name] = plain(row[i])));
            parts.push(plainJSON(object) + "\n");
          }
        }
        done += answer.rows.length;
        status("Exporting: " + number(done) + " rows…");
        if (!answer.next) break;
        after = answer.next;
      }
    } catch (error) {
      status("The export failed: " + error.message, true);
      return;
    }
    const blob = new Blob(parts, { type: format === "csv" ? "text/csv" : "application/x-ndjson" });
    const link = el("a", { href: URL.createObjectURL(blob), download: schema.name + (format === "csv" ? ".csv" : ".jsonl") });
    document.body.append(link);
    link.click();
    link.remove();
    status("Exported " + number(done) + " rows.");
  }
  function csvText(value, kind) {
    const text = valueKind(value) === "null" ? "" : show(value, true);
    // A spreadsheet would run a cell that starts like a formula.
    return kind === "string" && /^[=+\-@\t\r]/.test(text) ? "'" + text : text;
  }
  function csvCell(text) {
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  // ---- Row detail, references and edits.
  async function followReference(entity, id) {
    const schema = schemaNamed(entity);
    if (!schema) return;
    try {
      const answer = await post("/v1/get", { entity, ids: [id] });
      if (!answer.rows.length) {
        status("No " + entity + " row has the id " + show(id) + ".", true);
        return;
      }
      if (state.schema) state.history.push(snapshot());
      openEntity(entity, idFilter(schema, id), false);
      openDetail(schema, answer.rows[0]);
    } catch (error) {
      status("Following the reference failed: " + error.message, true);
    }
  }
  function idFilter(schema, id) {
    const group = newGroup("and");
    group.items.push({ type: "cond", field: schema.idField, op: "==", value: editText(id), other: "" });
    return group;
  }

  function openDetail(schema, row, mode) {
    state.detail = { schema, row, mode: mode || "view" };
    renderDetail();
    $("detail").hidden = false;
    $("detail-title").focus();
  }
  function closeDetail() {
    state.detail = null;
    $("detail").hidden = true;
  }

  function renderDetail(conflict) {
    const { schema, row, mode } = state.detail;
    const box = clear($("detail-body"));
    const id = idIndex(schema);
    $("detail-title").textContent = mode === "insert" ? "New " + schema.name + " row" : schema.name + " " + show(row[id]);
    const editing = mode === "edit" || mode === "insert";
    const form = el("form", { id: "detail-form", onsubmit: (event) => saveDetail(event) });
    const list = el("dl", { class: "fields" });
    schema.fields.forEach((field, position) => {
      const value = row ? row[position] : { null: true };
      list.append(el("dt", null, el("span", { text: field.name }), el("span", { class: "kind", text: " " + field.kind + (field.isOptional ? "?" : "") })));
      const dd = el("dd", { "data-field": field.name });
      if (editing && !(mode === "edit" && position === id)) {
        const multiline = field.kind === "document" || field.kind === "string";
        const input = multiline
          ? el("textarea", { rows: field.kind === "document" ? 6 : 2, class: "edit", "data-field": field.name })
          : field.kind === "bool"
            ? select(
                [
                  ["true", "true"],
                  ["false", "false"],
                ],
                valueKind(value) === "bool" ? String(value.bool) : "false",
                { class: "edit", "data-field": field.name }
              )
            : el("input", { type: "text", class: "edit", "data-field": field.name });
        input.value = field.kind === "bool" ? input.value : editText(value);
        dd.append(labelled("New value of " + field.name, input, "visually-labelled"));
        if (field.isOptional) {
          const isNull = el("input", { type: "checkbox", class: "null", "data-field": field.name });
          isNull.checked = valueKind(value) === "null";
          dd.append(labelled("null", isNull, "inline"));
        }
      } else {
        const text = show(value, true);
        dd.append(field.kind === "document" || text.includes("\n") ? el("pre", { text }) : el("span", { class: "v-" + valueKind(value), text }));
        const reference = (schema.references || []).find((r) => r.field === field.name);
        if (reference && valueKind(value) !== "null") {
          dd.append(
            " ",
            el("button", {
              type: "button",
              class: "follow",
              text: "Open " + reference.entity + " row",
              onclick: () => followReference(reference.entity, value),
            })
          );
        }
      }
      list.append(dd);
    });
    form.append(list);
    const actions = el("div", { class: "actions" });
    if (editing) {
      actions.append(el("button", { type: "submit", id: "save", text: mode === "insert" ? "Insert" : "Save" }));
      actions.append(el("button", { type: "button", text: "Cancel", onclick: () => (mode === "insert" ? closeDetail() : setMode("view")) }));
    } else if (canWrite()) {
      actions.append(el("button", { type: "button", id: "edit", text: "Edit", onclick: () => setMode("edit") }));
      actions.append(el("button", { type: "button", id: "delete", class: "danger", text: "Delete", onclick: deleteRow }));
    }
    actions.append(el("button", { type: "button", text: "Close", onclick: closeDetail }));
    form.append(actions);
    if (conflict) box.append(conflict);
    box.append(form);
    if (mode === "view" && row) {
      const referring = referencesTo(schema.name);
      if (referring.length) {
        const list = el("ul", { class: "referring" });
        for (const { schema: other, reference } of referring) {
          list.append(
            el(
              "li",
              null,
              el("button", {
                type: "button",
                class: "referring-rows",
                "data-entity": other.name,
                text: other.name + " rows whose " + reference.field + " is this row",
                onclick: () => {
                  const group = newGroup("and");
                  group.items.push({ type: "cond", field: reference.field, op: "==", value: editText(row[id]), other: "" });
                  openEntity(other.name, group);
                },
              })
            )
          );
        }
        box.append(el("h3", { text: "Rows that refer to this row" }), list);
      }
    }
  }
  function setMode(mode) {
    state.detail.mode = mode;
    renderDetail();
    const first = document.querySelector("#detail-form .edit");
    if (first) first.focus();
  }

  function rowFromForm() {
    const { schema, row, mode } = state.detail;
    const id = idIndex(schema);
    return schema.fields.map((field, position) => {
      if (mode === "edit" && position === id) return row[position];
      const isNull = document.querySelector('#detail-form input.null[data-field="' + CSS.escape(field.name) + '"]');
      if (isNull && isNull.checked) return { null: true };
      const input = document.querySelector('#detail-form .edit[data-field="' + CSS.escape(field.name) + '"]');
      try {
        return parseValue(input.value, field.kind);
      } catch (error) {
        throw new Error(field.name + ": " + error.message);
      }
    });
  }
  // A precondition that the row is still as the page read it: another change in between makes
  // the batch fail with a conflict instead of overwriting it.
  function unchanged(schema, row) {
    const id = idIndex(schema);
    return {
      query: { entity: schema.name, filter: { compare: { field: schema.idField, op: "==", value: row[id] } } },
      rows: [row],
    };
  }
  async function saveDetail(event) {
    event.preventDefault();
    const { schema, row, mode } = state.detail;
    let next;
    try {
      next = rowFromForm();
    } catch (error) {
      status(error.message, true);
      return;
    }
    const batch =
      mode === "insert"
        ? { operations: [{ insert: { entity: schema.name, row: next } }] }
        : { operations: [{ update: { entity: schema.name, row: next } }], preconditions: [unchanged(schema, row)] };
    await applyBatch(batch, schema, row, next, mode === "insert" ? "Inserted the row." : "Saved.");
  }
  async function deleteRow() {
    const { schema, row } = state.detail;
    if (!window.confirm("Delete " + schema.name + " " + show(row[idIndex(schema)]) + "? Its reference rules apply.")) return;
    const id = row[idIndex(schema)];
    const batch = { operations: [{ delete: { entity: schema.name, id } }], preconditions: [unchanged(schema, row)] };
    await applyBatch(batch, schema, row, null, "Deleted.");
  }
  async function applyBatch(batch, schema, original, mine, done) {
    try {
      await post("/v1/apply", batch);
      status(done);
      if (mine) {
        state.detail.row = mine;
        state.detail.mode = "view";
        renderDetail();
      } else {
        closeDetail();
      }
      loadPage();
      countRows();
      refreshCounts();
    } catch (error) {
      if (error.code === "conflict" && original) {
        await showConflict(schema, original, mine);
      } else {
        status(error.message, true);
      }
    }
  }
  // Both values side by side: what the page had, what is stored now, and what was typed.
  async function showConflict(schema, original, mine) {
    const id = original[idIndex(schema)];
    let current = null;
    try {
      const answer = await post("/v1/get", { entity: schema.name, ids: [id] });
      current = answer.rows[0] || null;
    } catch (error) {
      current = null;
    }
    const table = el(
      "table",
      { class: "conflict-table" },
      el("thead", null, el("tr", null, ["Field", "When you opened it", "Stored now", "Yours"].map((t) => el("th", { scope: "col", text: t }))))
    );
    const body = el("tbody");
    schema.fields.forEach((field, i) => {
      const now = current ? current[i] : null;
      const changed = !current || !sameValue(now, original[i]) || (mine && !sameValue(mine[i], original[i]));
      if (!changed) return;
      body.append(
        el(
          "tr",
          { "data-field": field.name },
          el("th", { scope: "row", text: field.name }),
          el("td", { text: show(original[i], true) }),
          el("td", { class: "theirs", text: current ? show(now, true) : "(deleted)" }),
          el("td", { class: "mine", text: mine ? show(mine[i], true) : "(delete)" })
        )
      );
    });
    table.append(body);
    const box = el(
      "section",
      { id: "conflict", class: "conflict", role: "alert" },
      el("h3", { text: "Conflict: this row changed since you opened it" }),
      el("p", { text: "Nothing was written. Compare the values, then keep the stored row or write yours over it." }),
      table
    );
    const actions = el("div", { class: "actions" });
    if (current) {
      actions.append(
        el("button", {
          type: "button",
          id: "keep-theirs",
          text: "Keep the stored row",
          onclick: () => openDetail(schema, current),
        })
      );
      if (mine) {
        actions.append(
          el("button", {
            type: "button",
            id: "overwrite",
            text: "Write mine over it",
            onclick: () =>
              applyBatch(
                { operations: [{ update: { entity: schema.name, row: mine } }], preconditions: [unchanged(schema, current)] },
                schema,
                current,
                mine,
                "Saved."
              ),
          })
        );
      }
    }
    box.append(actions);
    status("Conflict: the row changed since you opened it.", true);
    // The row as it is stored now, under the comparison; nothing of yours was written.
    if (current) state.detail.row = current;
    state.detail.mode = "view";
    renderDetail(box);
    box.tabIndex = -1;
    box.focus();
  }

  // ---- Live: the change feed's event stream when the store records one, else the commit
  // marker, polled.
  async function startLive() {
    const indicator = $("live");
    let bounds = null;
    try {
      bounds = (await get("/v1/changes/bounds")).bounds || null;
    } catch (error) {
      bounds = null;
    }
    if (bounds) {
      const source = new EventSource("/v1/changes/stream?after=" + encodeURIComponent(String(bounds.last)));
      state.live = source;
      indicator.textContent = "Live";
      indicator.className = "on";
      source.addEventListener("batch", (event) => {
        let data;
        try {
          data = parseJSON(event.data);
        } catch (e) {
          return;
        }
        const entities = new Set(data.changes.map((change) => change.entity));
        changed(entities);
      });
      source.addEventListener("error", () => {
        indicator.textContent = "Reconnecting…";
        indicator.className = "";
      });
      source.addEventListener("open", () => {
        indicator.textContent = "Live";
        indicator.className = "on";
      });
      return;
    }
    if ((state.info.abilities || []).includes("commitMarker")) {
      let marker = null;
      try {
        marker = (await get("/v1/commit-marker")).marker;
      } catch (e) {
        marker = null;
      }
      indicator.textContent = "Live (polling)";
      indicator.className = "on";
      setInterval(async () => {
        try {
          const now = (await get("/v1/commit-marker")).marker;
          if (String(now) !== String(marker)) {
            marker = now;
            changed(null);
          }
        } catch (e) {
          // Try again on the next tick.
        }
      }, 2000);
      return;
    }
    indicator.textContent = "Not live: this store records no changes";
  }
  let refreshTimer = null;
  function changed(entities) {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      refreshCounts();
      if (state.schema && (!entities || entities.has(state.schema.name))) {
        loadPage();
        countRows();
        refreshGroups();
        $("live").textContent = "Live — updated " + new Date().toLocaleTimeString();
      }
    }, 200);
  }

  // ---- Wiring.
  function wire() {
    $("filter-form").addEventListener("submit", applyFilter);
    $("search-form").addEventListener("submit", applySearch);
    $("filter-clear").addEventListener("click", () => {
      state.filterModel = newGroup("and");
      state.filter = { all: true };
      renderFilter();
      resetPaging();
      refreshGroups();
    });
    $("next").addEventListener("click", () => {
      if (!state.next) return;
      state.cursors[state.page + 1] = state.next;
      state.page += 1;
      loadPage();
    });
    $("prev").addEventListener("click", () => {
      if (state.page === 0) return;
      state.page -= 1;
      loadPage();
    });
    $("first").addEventListener("click", () => {
      state.page = 0;
      loadPage();
    });
    $("page-size").addEventListener("change", (event) => {
      state.pageSize = Number(event.target.value);
      resetPaging();
    });
    $("export-jsonl").addEventListener("click", () => exportRows("jsonl"));
    $("export-csv").addEventListener("click", () => exportRows("csv"));
    $("back").addEventListener("click", goBack);
    $("insert").addEventListener("click", () => openDetail(state.schema, null, "insert"));
    for (const tab of ["rows", "schema", "group"]) {
      $("tab-" + tab).addEventListener("click", () => showTab(tab));
      $("tab-" + tab).addEventListener("keydown", (event) => {
        const order = ["rows", "schema", "group"];
        const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
        if (!step) return;
        const next = order[(order.indexOf(tab) + step + order.length) % order.length];
        showTab(next);
        $("tab-" + next).focus();
      });
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    wire();
    $("insert").hidden = true;
    start().then(() => {
      $("insert").hidden = !canWrite();
    });
  });
})();
