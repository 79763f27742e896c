// DOM building without markup: every text goes in as a text node (textContent), never
// parsed as HTML. Attribute names come from this code only; values are set with setAttribute.

const SVG_NS = 'http://www.w3.org/2000/svg';

function setProps(el, props) {
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : String(v));
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** An HTML element: h('td', {class: 'n'}, 'text', child...). */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/** An SVG element. */
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A link inside the console (a hash route); parts are URI-encoded. */
export function link(text, ...parts) {
  return h('a', { href: '#/' + parts.map((p) => encodeURIComponent(String(p))).join('/') }, text);
}

/** A table: head labels and rows (arrays of cells, or elements). */
export function table(cls, head, rows, empty) {
  const body = h(
    'tbody',
    null,
    rows.length === 0 && empty ? h('tr', { class: 'empty' }, h('td', { colspan: head.length }, empty)) : rows,
  );
  return h(
    'table',
    { class: cls },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        head.map((c) => h('th', null, c)),
      ),
    ),
    body,
  );
}

/** A table row of cells (strings or nodes); props on the row. */
export function row(props, cells) {
  return h(
    'tr',
    props,
    cells.map((c) => (c instanceof HTMLTableCellElement ? c : h('td', null, c))),
  );
}
