// The styles and script every HTML report inlines, written for Latte (no library, nothing fetched).
// The script reads the page's two JSON blocks (the view's --format json, and the models' graphs)
// and draws the report with DOM and SVG calls only: text from model files is never parsed as HTML.
#include "report/html_assets.h"

namespace latte {

const std::string_view kReportStyle = R"latte_css(
:root { --ink: #1d232b; --muted: #5d6875; --line: #d7dce2; --bg: #ffffff; --panel: #f5f7f9; --accent: #2f5fb3;
  --bad: #b3261e; --bad-bg: #fdecea; --warn: #8a5a00; --warn-bg: #fff4d6; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { padding: 14px 20px 6px; border-bottom: 1px solid var(--line); }
h1 { font-size: 20px; margin: 0; word-break: break-all; }
h2 { font-size: 16px; margin: 18px 0 8px; }
#subtitle { margin: 4px 0 6px; color: var(--muted); word-break: break-all; }
main { padding: 0 20px 40px; }
.problem, .warning { border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
.problem { background: var(--bad-bg); border: 2px solid var(--bad); color: var(--bad); }
.warning { background: var(--warn-bg); border: 1px solid #e0b44a; color: var(--warn); }
.problem strong, .warning strong { display: block; margin-bottom: 4px; }
.problem ul, .warning ul { margin: 4px 0 0; padding-left: 20px; max-height: 12em; overflow: auto; color: var(--ink); }
.stats { display: flex; flex-wrap: wrap; gap: 10px; margin: 14px 0; }
.stat { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 120px; }
.stat .label { color: var(--muted); font-size: 12px; }
.stat .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.stat .note { color: var(--muted); font-size: 12px; }
.graph-row { display: flex; gap: 12px; align-items: flex-start; }
.graph-box { flex: 1 1 auto; min-width: 0; height: 620px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; background: #fcfcfd; }
.details { flex: 0 0 340px; height: 620px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; background: var(--panel); font-size: 13px; }
.details h3 { margin: 0 0 6px; font-size: 15px; overflow-wrap: anywhere; }
.details dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0; }
.details dt { color: var(--muted); }
.details dd { margin: 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
.toolbar { display: flex; gap: 6px; align-items: center; margin: 0 0 6px; color: var(--muted); font-size: 12px; flex-wrap: wrap; }
button, select { font: inherit; font-size: 12px; padding: 2px 8px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
.legend { display: inline-flex; align-items: center; gap: 6px; }
.legend .ramp { width: 140px; height: 10px; border: 1px solid var(--line); }
svg text { font-family: system-ui, sans-serif; }
.node rect { stroke: #6b7785; stroke-width: 1; }
.node text { font-size: 11px; pointer-events: none; }
.node .op { font-weight: 600; }
.node { cursor: pointer; }
.node.uncovered rect { stroke: var(--bad); stroke-width: 2.5; stroke-dasharray: 5 3; }
.node.selected rect { stroke: var(--accent); stroke-width: 3; }
.edges { fill: none; stroke: #a9b2bd; stroke-width: 1; }
.edges.hot { stroke: var(--accent); stroke-width: 2; }
table.data { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
table.data th { position: sticky; top: 0; background: var(--panel); text-align: left; border-bottom: 2px solid var(--line);
  padding: 4px 8px; cursor: pointer; user-select: none; white-space: nowrap; }
table.data th.num, table.data td.num { text-align: right; }
table.data th.sorted-asc::after { content: " \25B2"; font-size: 10px; }
table.data th.sorted-desc::after { content: " \25BC"; font-size: 10px; }
table.data td { border-bottom: 1px solid #eceff2; padding: 3px 8px; vertical-align: top; }
table.data td.text { max-width: 340px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
table.data tr:hover td { background: #eef3fb; }
table.data tr.selected td { background: #dde8fa; }
td.bar { position: relative; min-width: 140px; }
td.bar .fill { position: absolute; left: 0; top: 3px; bottom: 3px; background: #f4a582; opacity: 0.75; border-radius: 2px; }
td.bar .fill.alt { background: #92c5de; }
td.bar span { position: relative; }
.table-box { max-height: 640px; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
.chart { border: 1px solid var(--line); border-radius: 6px; background: #fff; max-width: 100%; }
.chart .axis { stroke: #6b7785; }
.chart .grid { stroke: #eceff2; }
.chart text { font-size: 11px; fill: #333; }
.bad { color: var(--bad); font-weight: 600; }
.muted { color: var(--muted); }
)latte_css";

const std::string_view kReportScript = R"latte_js(
'use strict';
(function () {
  const data = JSON.parse(document.getElementById('latte-data').textContent);
  const graphs = JSON.parse(document.getElementById('latte-graphs').textContent);
  const kind = document.body.getAttribute('data-kind');
  const main = document.getElementById('report');
  const SVG = 'http://www.w3.org/2000/svg';

  // Every element is built with textContent and setAttribute: names from model files are
  // never parsed as HTML.
  function fill(e, attrs, children) {
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === 'text') e.textContent = String(v);
        else if (k === 'on') for (const ev of Object.keys(v)) e.addEventListener(ev, v[ev]);
        else e.setAttribute(k, String(v));
      }
    }
    add(e, children);
    return e;
  }
  function add(e, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) c.forEach((x) => add(e, x));
    else if (typeof c === 'object') e.appendChild(c);
    else e.appendChild(document.createTextNode(String(c)));
  }
  const h = (tag, attrs, children) => fill(document.createElement(tag), attrs, children);
  const s = (tag, attrs, children) => fill(document.createElementNS(SVG, tag), attrs, children);

  const isNum = (x) => typeof x === 'number' && isFinite(x);
  const ms = (x) => (isNum(x) ? x.toFixed(3) : '–');
  // Small times keep two significant digits where three decimals would show 0.000.
  const fine = (x) => (isNum(x) && x !== 0 && Math.abs(x) < 0.01 ? x.toPrecision(2) : ms(x));
  const pct = (x, digits = 1) => (isNum(x) ? x.toFixed(digits) + '%' : '–');
  const signedPct = (x) => (isNum(x) ? (x >= 0 ? '+' : '') + x.toFixed(1) + '%' : '–');
  const int = (x) => (isNum(x) ? Math.round(x).toLocaleString('en-US') : '?');
  function big(x) {
    if (!isNum(x)) return '?';
    const a = Math.abs(x);
    if (a >= 1e9) return (x / 1e9).toFixed(2) + ' G';
    if (a >= 1e6) return (x / 1e6).toFixed(2) + ' M';
    if (a >= 1e3) return (x / 1e3).toFixed(1) + ' k';
    return String(Math.round(x));
  }
  function bytes(x) {
    if (!isNum(x)) return '?';
    if (x >= 1 << 20) return (x / (1 << 20)).toFixed(2) + ' MiB';
    if (x >= 1 << 10) return (x / (1 << 10)).toFixed(1) + ' KiB';
    return x + ' B';
  }
  const shape = (sh) => (Array.isArray(sh) ? sh.map((d) => (d === null ? '?' : d)).join('×') : '?');
  const clip = (text, n) => (text.length > n ? text.slice(0, n - 1) + '…' : text);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  // Not Math.max(...xs): a spread of a huge array overflows the call's arguments.
  const maxOf = (xs, init) => xs.reduce((a, b) => (b > a ? b : a), init);
  const minOf = (xs, init) => xs.reduce((a, b) => (b < a ? b : a), init);

  // A sequential colour ramp (light yellow to dark red) over log-scaled values.
  const RAMP = [[255, 247, 205], [254, 204, 92], [240, 120, 50], [190, 30, 45], [110, 0, 40]];
  function ramp(t) {
    t = Math.max(0, Math.min(1, t)) * (RAMP.length - 1);
    const i = Math.min(Math.floor(t), RAMP.length - 2), f = t - i;
    const c = RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
    return 'rgb(' + c.join(',') + ')';
  }
  // Colour by rank (quantile), so a few slow layers do not wash out the rest; lo and hi for the legend.
  function rankScale(values) {
    const sorted = values.filter((v) => isNum(v) && v > 0).sort((a, b) => a - b);
    if (!sorted.length) return { of: () => 0, lo: 0, hi: 0 };
    const of = (v) => {
      if (!(isNum(v) && v > 0)) return 0;
      let lo = 0, hi = sorted.length;  // first index with sorted[i] >= v
      while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid] < v) lo = mid + 1; else hi = mid; }
      return sorted.length > 1 ? lo / (sorted.length - 1) : 1;
    };
    return { of, lo: sorted[0], hi: sorted[sorted.length - 1] };
  }

  function section(title, id) {
    const sec = h('section', { id });
    if (title) sec.appendChild(h('h2', { text: title }));
    main.appendChild(sec);
    return sec;
  }
  // Problems go first, where they are seen: `level` 'problem' (red) or 'warning'.
  const problemBox = h('div', { id: 'problems' });
  main.appendChild(problemBox);
  function problem(level, title, items) {
    const box = h('div', { class: level }, [h('strong', { text: title })]);
    if (items && items.length) {
      const ul = h('ul');
      const shown = items.slice(0, 200);
      for (const it of shown) ul.appendChild(h('li', { text: it }));
      if (items.length > shown.length) ul.appendChild(h('li', { text: '… and ' + (items.length - shown.length) + ' more' }));
      box.appendChild(ul);
    }
    problemBox.appendChild(box);
  }
  function stats(parent, cards) {
    const box = h('div', { class: 'stats' });
    for (const c of cards) {
      box.appendChild(h('div', { class: 'stat' }, [
        h('div', { class: 'label', text: c.label }),
        h('div', { class: 'value', id: c.id, 'data-value': c.raw, text: c.value }),
        c.note ? h('div', { class: 'note', text: c.note }) : null,
      ]));
    }
    parent.appendChild(box);
  }
  function subtitle(text) { document.getElementById('subtitle').textContent = text; }

  // ---- sortable table with bars -------------------------------------------------------------
  // columns: {label, get(row) → value to sort by, show(row) → text (default: the value),
  // num: right-aligned, bar: a bar of value / column max (alt: second colour)}.
  function table(parent, id, columns, rows, onRow) {
    const tbl = h('table', { class: 'data', id });
    const headRow = h('tr');
    const maxes = columns.map((c) => (c.bar ? maxOf(rows.map((r) => (isNum(c.get(r)) ? c.get(r) : 0)), 0) : 0));
    const body = h('tbody');
    const trs = rows.map((r, i) => {
      const tr = h('tr', { 'data-row': i });
      columns.forEach((c, k) => {
        const v = c.get(r);
        const text = c.show ? c.show(r) : (v === null || v === undefined ? '' : String(v));
        const cls = [c.num || c.bar ? 'num' : 'text', c.bar ? 'bar' : '', c.cls ? c.cls(r) : ''].join(' ').trim();
        const td = h('td', { class: cls, title: c.num || c.bar ? null : text });
        if (c.bar && isNum(v) && maxes[k] > 0) {
          td.appendChild(h('div', { class: 'fill' + (c.alt ? ' alt' : ''), style: 'width:' + (100 * Math.max(0, v) / maxes[k]).toFixed(2) + '%' }));
        }
        td.appendChild(h('span', { text }));
        tr.appendChild(td);
      });
      if (onRow) tr.addEventListener('click', () => onRow(i, tr));
      return tr;
    });
    let sortedBy = -1, dir = 1;
    columns.forEach((c, k) => {
      const th = h('th', { class: c.num || c.bar ? 'num' : '', title: 'sort by ' + c.label, text: c.label });
      th.addEventListener('click', () => {
        dir = sortedBy === k ? -dir : (c.num || c.bar ? -1 : 1);
        sortedBy = k;
        const order = rows.map((r, i) => i);
        const key = (i) => c.get(rows[i]);
        order.sort((a, b) => {
          const x = key(a), y = key(b);
          const nx = x === null || x === undefined, ny = y === null || y === undefined;
          if (nx || ny) return nx === ny ? a - b : nx ? 1 : -1;  // blanks last either way
          if (x < y) return -dir;
          if (x > y) return dir;
          return a - b;
        });
        const frag = document.createDocumentFragment();
        for (const i of order) frag.appendChild(trs[i]);
        body.appendChild(frag);
        headRow.querySelectorAll('th').forEach((t, j) => {
          t.classList.toggle('sorted-asc', j === k && dir > 0);
          t.classList.toggle('sorted-desc', j === k && dir < 0);
        });
      });
      headRow.appendChild(th);
    });
    body.append(...trs);
    tbl.append(h('thead', null, [headRow]), body);
    const box = h('div', { class: 'table-box' }, [tbl]);
    parent.appendChild(box);
    let selected = null;
    return {
      select(i) {
        if (selected) selected.classList.remove('selected');
        selected = trs[i] || null;
        if (selected) {
          selected.classList.add('selected');
          const top = selected.offsetTop - box.clientHeight / 2;
          box.scrollTop = Math.max(0, top);
        }
      },
    };
  }

  // ---- the model as a layered graph ----------------------------------------------------------
  // g: `latte inspect --format json` (nodes in execution order). style(i) → {fill, cls, sub};
  // details(i) → [[label, text], ...]. Layout: longest-path layers from the inputs, nodes in a
  // layer ordered by the mean position of their neighbours (a few sweeps). Linear in the graph.
  const NW = 150, NH = 36, GX = 14, GY = 34;
  function layoutGraph(nodes) {
    const n = nodes.length;
    const producer = new Map();
    nodes.forEach((node, i) => (node.outputs || []).forEach((t) => { if (t) producer.set(t.tensor, i); }));
    const preds = nodes.map((node, i) => {
      const set = new Set();
      for (const t of node.inputs || []) {
        if (t && producer.has(t.tensor) && producer.get(t.tensor) !== i) set.add(producer.get(t.tensor));
      }
      return Array.from(set);
    });
    const succs = nodes.map(() => []);
    preds.forEach((ps, i) => ps.forEach((p) => succs[p].push(i)));
    // Kahn's order (execution order normally is one already); a node on a cycle keeps what it has.
    const indeg = preds.map((ps) => ps.length), level = new Array(n).fill(0), queue = [];
    for (let i = 0; i < n; ++i) if (!indeg[i]) queue.push(i);
    for (let q = 0; q < queue.length; ++q) {
      const v = queue[q];
      for (const w of succs[v]) {
        level[w] = Math.max(level[w], level[v] + 1);
        if (--indeg[w] === 0) queue.push(w);
      }
    }
    const layers = [];
    for (let i = 0; i < n; ++i) (layers[level[i]] = layers[level[i]] || []).push(i);
    for (let l = 0; l < layers.length; ++l) layers[l] = layers[l] || [];
    const pos = new Float64Array(n);
    const place = (layer) => layer.forEach((v, k) => { pos[v] = k - (layer.length - 1) / 2; });
    layers.forEach(place);
    const sweep = (order, neighbours) => {
      for (const l of order) {
        const layer = layers[l];
        const key = new Map();
        for (const v of layer) {
          const ns = neighbours[v];
          key.set(v, ns.length ? sum(ns.map((u) => pos[u])) / ns.length : pos[v]);
        }
        layer.sort((a, b) => key.get(a) - key.get(b) || a - b);
        place(layer);
      }
    };
    const down = layers.map((_, l) => l), up = down.slice().reverse();
    sweep(down, preds); sweep(up, succs); sweep(down, preds);
    const widest = maxOf(layers.map((l) => l.length), 1);
    const x = new Float64Array(n), y = new Float64Array(n);
    layers.forEach((layer, l) => layer.forEach((v) => {
      x[v] = GX + (pos[v] + (widest - 1) / 2) * (NW + GX);
      y[v] = GY / 2 + l * (NH + GY);
    }));
    return { preds, succs, x, y, width: widest * (NW + GX) + GX, height: layers.length * (NH + GY) + GY / 2 };
  }
  function edgePath(lay, p, v) {
    const x1 = lay.x[p] + NW / 2, y1 = lay.y[p] + NH, x2 = lay.x[v] + NW / 2, y2 = lay.y[v];
    const dy = Math.max(12, (y2 - y1) / 2);
    return 'M' + x1 + ',' + y1 + 'C' + x1 + ',' + (y1 + dy) + ' ' + x2 + ',' + (y2 - dy) + ' ' + x2 + ',' + y2;
  }
  function nodeDetails(g, i) {
    const node = g.nodes[i];
    const tensor = (t) => (t ? (t.name || '#' + t.tensor) + ': ' + shape(t.shape) + ' ' + (t.dtype || '') + (t.constant ? ' (constant)' : '') : '(none)');
    const rows = [
      ['node', '#' + node.index],
      ['op', node.op + (node.source_op && node.source_op !== node.op ? ' (' + node.source_op + ' in the file)' : '')],
    ];
    (node.inputs || []).forEach((t, k) => rows.push(['input ' + k, tensor(t)]));
    (node.outputs || []).forEach((t, k) => rows.push(['output ' + k, tensor(t)]));
    if (node.geometry) rows.push(['geometry', node.geometry]);
    for (const [k, v] of Object.entries(node.attributes || {})) rows.push([k, clip(JSON.stringify(v), 200)]);
    if (node.supported) {
      rows.push(['MACs', int(node.macs)], ['FLOPs', int(node.flops)], ['params', int(node.params)],
        ['weight bytes', bytes(node.weight_bytes)], ['input bytes', bytes(node.input_bytes)], ['output bytes', bytes(node.output_bytes)]);
    } else if (node.why) {
      rows.push(['unsupported', node.why]);
    }
    return rows;
  }
  // Draws g into parent; returns {select(i)} to highlight a node from elsewhere.
  function drawGraph(parent, g, style, extraDetails, onSelect, legendIn) {
    let legend = legendIn || null;
    const nodes = g.nodes || [];
    const lay = layoutGraph(nodes);
    let scale = Math.min(1, 900 / Math.max(lay.width, 1));
    if (scale < 0.45) scale = 0.45;  // smaller is unreadable: scroll instead
    const svg = s('svg', { id: 'graph', class: 'graph', viewBox: '0 0 ' + lay.width + ' ' + lay.height, role: 'img',
      'aria-label': 'the model as a graph, ' + nodes.length + ' nodes' });
    const resize = () => { svg.setAttribute('width', Math.ceil(lay.width * scale)); svg.setAttribute('height', Math.ceil(lay.height * scale)); };
    resize();
    // Every edge in one path: thousands of nodes stay cheap to draw.
    let d = '';
    lay.preds.forEach((ps, v) => ps.forEach((p) => { d += edgePath(lay, p, v); }));
    svg.appendChild(s('path', { class: 'edges', d }));
    const hot = s('path', { class: 'edges hot', d: '' });
    svg.appendChild(hot);
    const paint = (el, i, st) => {
      const name = nodes[i].name || '#' + nodes[i].index;
      el.setAttribute('class', 'node' + (st.cls ? ' ' + st.cls : '') + (i === pinned ? ' selected' : ''));
      el.childNodes[0].setAttribute('fill', st.fill);
      el.childNodes[1].setAttribute('fill', st.ink || '#1d232b');
      el.childNodes[2].setAttribute('fill', st.ink || '#1d232b');
      el.childNodes[2].textContent = clip((st.sub ? st.sub + ' · ' : '') + name, 26);
    };
    let pinned = -1;
    const elems = nodes.map((node, i) => {
      const el = s('g', { 'data-i': i, transform: 'translate(' + lay.x[i] + ',' + lay.y[i] + ')' }, [
        s('rect', { width: NW, height: NH, rx: 5 }),
        s('text', { x: 6, y: 14, class: 'op', text: clip(node.op, 22) }),
        s('text', { x: 6, y: 29 }),
      ]);
      paint(el, i, style(i));
      return el;
    });
    svg.append(...elems);
    const details = h('aside', { class: 'details', id: 'details' }, [h('p', { class: 'muted', text: 'Hover over a node for its details; click to keep them.' })]);
    const show = (i) => {
      details.textContent = '';
      const node = nodes[i];
      details.appendChild(h('h3', { text: node.name || '#' + node.index }));
      const dl = h('dl');
      for (const [k, v] of (extraDetails ? extraDetails(i) : []).concat(nodeDetails(g, i))) {
        dl.append(h('dt', { text: k }), h('dd', { text: v }));
      }
      details.appendChild(dl);
    };
    const select = (i, scroll) => {
      if (pinned >= 0) elems[pinned].classList.remove('selected');
      pinned = i;
      if (i < 0) { hot.setAttribute('d', ''); return; }
      elems[i].classList.add('selected');
      let hd = '';
      lay.preds[i].forEach((p) => { hd += edgePath(lay, p, i); });
      lay.succs[i].forEach((w) => { hd += edgePath(lay, i, w); });
      hot.setAttribute('d', hd);
      show(i);
      if (scroll) {
        box.scrollLeft = Math.max(0, (lay.x[i] + NW / 2) * scale - box.clientWidth / 2);
        box.scrollTop = Math.max(0, (lay.y[i] + NH / 2) * scale - box.clientHeight / 2);
      }
    };
    const nodeOf = (ev) => {
      const el = ev.target.closest && ev.target.closest('g.node');
      return el ? Number(el.getAttribute('data-i')) : -1;
    };
    svg.addEventListener('mouseover', (ev) => { const i = nodeOf(ev); if (i >= 0 && pinned < 0) show(i); });
    svg.addEventListener('click', (ev) => {
      const i = nodeOf(ev);
      select(i === pinned ? -1 : i, false);
      if (i >= 0 && onSelect) onSelect(i);
    });
    const box = h('div', { class: 'graph-box' }, [svg]);
    const zoom = (f) => { scale = Math.max(0.1, Math.min(3, scale * f)); resize(); };
    const toolbar = h('div', { class: 'toolbar' }, [
      h('button', { type: 'button', text: '−', title: 'zoom out', on: { click: () => zoom(1 / 1.25) } }),
      h('button', { type: 'button', text: '+', title: 'zoom in', on: { click: () => zoom(1.25) } }),
      h('button', { type: 'button', text: 'fit width', on: { click: () => { scale = Math.min(3, box.clientWidth / lay.width); resize(); } } }),
      h('span', { text: nodes.length + ' nodes, ' + sum(lay.preds.map((p) => p.length)) + ' edges' }),
      legend,
    ]);
    parent.append(toolbar, h('div', { class: 'graph-row' }, [box, details]));
    // #node=N in the address selects node N once the page is drawn (a link to a node).
    const m = /^#node=(\d+)$/.exec(location.hash);
    if (m && Number(m[1]) < nodes.length) setTimeout(() => select(Number(m[1]), true), 0);
    return {
      select: (i) => select(i, true),
      restyle: (newStyle, newLegend) => {
        elems.forEach((el, i) => paint(el, i, newStyle(i)));
        if (legend && newLegend) { legend.replaceWith(newLegend); legend = newLegend; }
      },
    };
  }
  function rampLegend(label, lo, hi, fmt) {
    const stops = RAMP.map((c, k) => 'rgb(' + c.join(',') + ') ' + (100 * k / (RAMP.length - 1)) + '%').join(',');
    return h('span', { class: 'legend' }, [label + ' (by rank) ', fmt(lo), h('span', { class: 'ramp', style: 'background:linear-gradient(90deg,' + stops + ')' }), fmt(hi)]);
  }
  const inkOn = (t) => (t > 0.62 ? '#ffffff' : '#1d232b');

  // ---- scatter plot (validate, pareto) -------------------------------------------------------
  // series: {label, color, points: [{x, y, title, r, hollow, shape}], line}; log axes when asked.
  function scatter(parent, opts) {
    const W = 760, H = 440, L = 70, R = 20, T = 20, B = 50;
    const pts = opts.series.flatMap((se) => se.points).filter((p) => isNum(p.x) && isNum(p.y) && (!opts.log || (p.x > 0 && p.y > 0)));
    if (!pts.length) { parent.appendChild(h('p', { class: 'muted', text: 'nothing to plot' })); return; }
    const tf = opts.log ? Math.log10 : (v) => v;
    const xs = pts.map((p) => tf(p.x)), ys = pts.map((p) => tf(p.y));
    let x0 = minOf(xs, Infinity), x1 = maxOf(xs, -Infinity), y0 = minOf(ys, Infinity), y1 = maxOf(ys, -Infinity);
    if (opts.square) { x0 = y0 = Math.min(x0, y0); x1 = y1 = Math.max(x1, y1); }
    const padX = (x1 - x0 || Math.abs(x0) || 1) * 0.06, padY = (y1 - y0 || Math.abs(y0) || 1) * 0.06;
    x0 -= padX; x1 += padX; y0 -= padY; y1 += padY;
    const sx = (v) => L + (tf(v) - x0) / (x1 - x0) * (W - L - R);
    const sy = (v) => H - B - (tf(v) - y0) / (y1 - y0) * (H - T - B);
    const svg = s('svg', { class: 'chart', id: opts.id, viewBox: '0 0 ' + W + ' ' + H, width: W, height: H });
    const ticks = (a, b) => {
      if (opts.log) {
        // 1-2-5 per decade over a narrow range, one tick per decade over a wide one.
        const out = [], mantissas = b - a > 4 ? [1] : [1, 2, 5];
        for (let e = Math.floor(a); e <= Math.ceil(b); ++e) for (const m of mantissas) { const v = Math.log10(m) + e; if (v >= a && v <= b) out.push(Math.pow(10, v)); }
        return out;
      }
      const step = Math.pow(10, Math.floor(Math.log10((b - a) / 5 || 1))); const out = [];
      for (let v = Math.ceil(a / step) * step; v <= b; v += step) out.push(v);
      return out.length > 12 ? out.filter((_, k) => k % Math.ceil(out.length / 8) === 0) : out;
    };
    const tickText = (v) => (Math.abs(v) >= 1000 ? big(v) : +v.toPrecision(3) + '');
    for (const v of ticks(x0, x1)) {
      svg.append(s('line', { class: 'grid', x1: sx(v), x2: sx(v), y1: T, y2: H - B }), s('text', { x: sx(v), y: H - B + 16, 'text-anchor': 'middle', text: tickText(v) }));
    }
    for (const v of ticks(y0, y1)) {
      svg.append(s('line', { class: 'grid', x1: L, x2: W - R, y1: sy(v), y2: sy(v) }), s('text', { x: L - 6, y: sy(v) + 4, 'text-anchor': 'end', text: tickText(v) }));
    }
    svg.append(s('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }), s('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }));
    svg.append(s('text', { x: (L + W - R) / 2, y: H - 12, 'text-anchor': 'middle', text: opts.xLabel }));
    svg.append(s('text', { x: 16, y: (T + H - B) / 2, 'text-anchor': 'middle', transform: 'rotate(-90 16 ' + (T + H - B) / 2 + ')', text: opts.yLabel }));
    if (opts.diagonal) {
      // y = x and ±10% (log axes: straight lines).
      const lo = Math.pow(10, Math.max(x0, y0)), hi = Math.pow(10, Math.min(x1, y1));
      for (const [f, dash] of [[1, ''], [1.1, '4 3'], [1 / 1.1, '4 3']]) {
        svg.appendChild(s('line', { x1: sx(lo), y1: sy(lo * f), x2: sx(hi), y2: sy(hi * f), stroke: '#888', 'stroke-dasharray': dash || null }));
      }
    }
    for (const se of opts.series) {
      const ps = se.points.filter((p) => isNum(p.x) && isNum(p.y) && (!opts.log || (p.x > 0 && p.y > 0)));
      if (se.line && ps.length > 1) {
        svg.appendChild(s('polyline', { fill: 'none', stroke: se.color, 'stroke-width': 1.5, points: ps.map((p) => sx(p.x) + ',' + sy(p.y)).join(' ') }));
      }
      for (const p of ps) {
        const r = p.r || se.r || 4, cx = sx(p.x), cy = sy(p.y);
        const attrs = { fill: se.hollow ? '#fff' : se.color, stroke: se.color, 'stroke-width': se.hollow ? 2 : 1, class: 'point' };
        const mark = se.shape === 'diamond'
          ? s('path', Object.assign({ d: 'M' + cx + ',' + (cy - r - 2) + 'l' + (r + 2) + ',' + (r + 2) + 'l' + -(r + 2) + ',' + (r + 2) + 'l' + -(r + 2) + ',' + -(r + 2) + 'z' }, attrs))
          : s('circle', Object.assign({ cx, cy, r }, attrs));
        mark.appendChild(s('title', { text: p.title || '' }));
        svg.appendChild(mark);
        if (p.label) svg.appendChild(s('text', { x: cx + r + 4, y: cy - r - 2, text: p.label }));
      }
    }
    // Legend.
    let ly = T + 4;
    for (const se of opts.series) {
      svg.append(s('circle', { cx: W - R - 150, cy: ly + 4, r: 4, fill: se.hollow ? '#fff' : se.color, stroke: se.color }), s('text', { x: W - R - 140, y: ly + 8, text: se.label }));
      ly += 16;
    }
    parent.appendChild(svg);
  }

  // ---- inspect -------------------------------------------------------------------------------
  function renderInspect() {
    const t = data.totals || {};
    subtitle((data.model || '') + ' · ' + (data.format || '') + ' · inputs ' +
      (data.inputs || []).map((x) => x.name + ' ' + shape(x.shape)).join(', '));
    const uncovered = data.uncovered || [];
    if (uncovered.length) {
      problem('problem', uncovered.length + ' node(s) Latte does not know: their MACs and bytes are left out of the totals',
        uncovered.map((u) => '#' + u.node + ' ' + u.op + ': ' + u.why));
    }
    if (t.unknown_cost_nodes) problem('warning', t.unknown_cost_nodes + ' node(s) with unknown cost');
    const sum_ = section(null, 'summary');
    stats(sum_, [
      { label: 'nodes', value: int(t.nodes), raw: t.nodes, id: 'total-nodes' },
      { label: 'MACs', value: big(t.macs), raw: t.macs, id: 'total', note: int(t.macs) },
      { label: 'FLOPs', value: big(t.flops), raw: t.flops },
      { label: 'params', value: big(t.params), raw: t.params },
      { label: 'weights', value: bytes(t.weight_bytes), raw: t.weight_bytes },
      { label: 'activations written', value: bytes(t.activation_bytes), raw: t.activation_bytes },
    ]);
    const nodes = data.nodes || [];
    // Colour by a measure of the node's work; FLOPs by default, as elementwise nodes have no MACs.
    const measures = {
      FLOPs: (n) => n.flops, MACs: (n) => n.macs, params: (n) => n.params,
      bytes: (n) => (n.supported ? n.weight_bytes + n.input_bytes + n.output_bytes : null),
    };
    const styleBy = (name) => {
      const get = measures[name], scale = rankScale(nodes.map(get));
      const style = (i) => {
        const n = nodes[i];
        if (!n.supported) return { fill: '#e5e7ea', cls: 'uncovered', sub: 'unknown' };
        const v = get(n), t = scale.of(v);
        return v > 0 ? { fill: ramp(t), ink: inkOn(t), sub: big(v) + ' ' + name } : { fill: '#eef1f4', sub: '' };
      };
      return { style, legend: rampLegend(name, scale.lo, scale.hi, big) };
    };
    const g = section('Graph', 'graph-section');
    const pick = h('select', { id: 'colour-by', title: 'colour the nodes by' }, Object.keys(measures).map((k) => h('option', { value: k, text: k })));
    g.appendChild(h('div', { class: 'toolbar' }, ['colour by ', pick]));
    let tbl = null;
    const first = styleBy('FLOPs');
    const graph = drawGraph(g, data, first.style, null, (i) => tbl && tbl.select(i), first.legend);
    pick.addEventListener('change', () => { const next = styleBy(pick.value); graph.restyle(next.style, next.legend); });
    const tsec = section('Nodes', 'table-section');
    const act = (ts) => (ts || []).filter((x) => x && !x.constant).map((x) => shape(x.shape)).join(', ');
    tbl = table(tsec, 'layer-table', [
      { label: '#', get: (n) => n.index, num: true },
      { label: 'op', get: (n) => n.op },
      { label: 'name', get: (n) => n.name },
      { label: 'input', get: (n) => act(n.inputs) },
      { label: 'output', get: (n) => act(n.outputs) },
      { label: 'geometry', get: (n) => n.geometry || '' },
      { label: 'MACs', get: (n) => n.macs, show: (n) => int(n.macs), bar: true },
      { label: 'params', get: (n) => n.params, show: (n) => int(n.params), num: true },
      { label: 'bytes', get: (n) => (n.supported ? n.weight_bytes + n.input_bytes + n.output_bytes : null),
        show: (n) => (n.supported ? int(n.weight_bytes + n.input_bytes + n.output_bytes) : '?'), bar: true, alt: true },
    ], nodes, (i) => graph.select(i));
  }

  // ---- predict -------------------------------------------------------------------------------
  // One model's prediction: graph coloured by its layers' time, and the layer table.
  // layers[k] needs predicted_ms (and, for validate, measured_ms).
  function drawPrediction(parent, g, layers, uncovered, withMeasured) {
    const layerOf = g.layer_of_node || [], uncoveredOf = g.uncovered_of_node || [];
    const scale = rankScale(layers.map((l) => l.predicted_ms));
    const firstNode = new Map();  // layer → its first user node, to show from the table
    layerOf.forEach((k, i) => { if (k !== null && !firstNode.has(k)) firstNode.set(k, i); });
    let tbl = null;
    const gsec = h('div');
    parent.appendChild(gsec);
    const graph = drawGraph(gsec, g, (i) => {
      const k = layerOf[i];
      if (k !== null && k !== undefined && layers[k]) {
        const t = scale.of(layers[k].predicted_ms);
        // The layer's time on its first node; the nodes fused into it say so.
        return { fill: ramp(t), ink: inkOn(t), sub: firstNode.get(k) === i ? ms(layers[k].predicted_ms) + ' ms' : 'fused' };
      }
      if (uncoveredOf[i] !== null && uncoveredOf[i] !== undefined) return { fill: '#e5e7ea', cls: 'uncovered', sub: 'NOT predicted' };
      return { fill: '#eef1f4', sub: '' };
    }, (i) => {
      const k = layerOf[i];
      if (k !== null && k !== undefined && layers[k]) {
        const l = layers[k];
        const rows = [['layer', '#' + k + ' of ' + layers.length + (l.nodes && l.nodes.length > 1 ? ' (' + l.nodes.length + ' nodes: ' + l.nodes.join(', ') + ')' : '')],
          ['kernel', l.kernel]];
        if (l.geometry) rows.push(['kernel geometry', l.geometry]);
        rows.push(['predicted', fine(l.predicted_ms) + ' ms']);
        if (withMeasured) rows.push(['measured', fine(l.measured_ms) + ' ms']);
        if (isNum(l.kernel_ms)) rows.push(['kernel alone', fine(l.kernel_ms) + ' ms']);
        if (isNum(l.context_ms) && l.context_ms !== 0) rows.push(['in graph', (l.context_ms > 0 ? '+' : '') + fine(l.context_ms) + ' ms']);
        if (isNum(l.spread_ms)) rows.push(['interval (±1 sd)', fine(l.predicted_ms - l.spread_ms) + ' – ' + fine(l.predicted_ms + l.spread_ms) + ' ms (±' + fine(l.spread_ms) + ')']);
        rows.push(['predictor', l.source + (l.outside_training_range ? ' (outside training range: extrapolated)' : '')]);
        if (l.key) rows.push(['key', l.key]);
        return rows;
      }
      const k2 = uncoveredOf[i];
      if (k2 !== null && k2 !== undefined) return [['NOT predicted', uncovered[k2] ? uncovered[k2].why : 'see the coverage above']];
      return [['layer', 'none (runs in no kernel)']];
    }, (i) => { const k = layerOf[i]; if (tbl && k !== null && k !== undefined) tbl.select(k); },
    rampLegend('predicted ms', scale.lo, scale.hi, fine));
    const cols = [
      { label: '#', get: (l) => l.index, num: true },
      { label: 'layer', get: (l) => (l.nodes && l.nodes.length ? l.nodes[0] + (l.nodes.length > 1 ? ' (+' + (l.nodes.length - 1) + ')' : '') : '') },
      { label: 'kernel', get: (l) => l.kernel },
    ];
    if (!withMeasured) cols.push({ label: 'geometry', get: (l) => l.geometry || '' });
    cols.push({ label: 'predicted ms', get: (l) => l.predicted_ms, show: (l) => ms(l.predicted_ms), bar: true });
    if (withMeasured) {
      cols.push({ label: 'measured ms', get: (l) => l.measured_ms, show: (l) => ms(l.measured_ms), bar: true, alt: true });
      cols.push({ label: 'error', get: (l) => (l.measured_ms > 0 ? 100 * (l.predicted_ms - l.measured_ms) / l.measured_ms : null),
        show: (l) => (l.measured_ms > 0 ? signedPct(100 * (l.predicted_ms - l.measured_ms) / l.measured_ms) : '–'), num: true });
    } else {
      cols.push({ label: '± ms', get: (l) => l.spread_ms, show: (l) => fine(l.spread_ms), num: true });
      cols.push({ label: 'in graph ms', get: (l) => l.context_ms, show: (l) => ms(l.context_ms), num: true });
    }
    cols.push({ label: 'source', get: (l) => l.source + (l.outside_training_range ? ' (outside training range)' : '') });
    const rows = layers.map((l, k) => Object.assign({ index: k }, l));
    const tsec = h('div');
    parent.append(h('h2', { text: 'Layers (' + layers.length + ' kernels)' }), tsec);
    tbl = table(tsec, 'layer-table', cols, rows, (k) => { if (firstNode.has(k)) graph.select(firstNode.get(k)); });
  }

  function renderPredict() {
    const p = data.pack || {};
    const device = p.device && typeof p.device === 'object' ? p.device.description || p.device.key || '' : '';
    subtitle((data.model || '') + ' · pack: ' + [p.backend, p.backend_version, p.threads + (p.threads === 1 ? ' thread' : ' threads'), p.precision].filter(Boolean).join(' ') + (device ? ' on ' + device : ''));
    const cov = data.coverage || { uncovered: [] };
    if (cov.uncovered.length) {
      const missing = cov.total_nodes - cov.covered_nodes;
      problem('problem', missing + ' of ' + cov.total_nodes + ' node(s) NOT predicted and NOT in the total',
        cov.uncovered.map((u) => u.node + (u.nodes && u.nodes.length > 1 ? ' (+' + (u.nodes.length - 1) + ')' : '') + ' (' + u.op + '): ' + u.why));
    }
    if (data.machine_note) problem('warning', 'note: ' + data.machine_note);
    if (data.outside_training_range) problem('warning', data.outside_training_range + ' kernel(s) lie outside the pack\'s training ranges: their predictions extrapolate',
      data.layers.filter((l) => l.outside_training_range).map((l) => l.nodes[0] + ': ' + l.kernel + ' ' + (l.geometry || '')));
    const sum_ = section(null, 'summary');
    const iv = data.interval_ms || [];
    stats(sum_, [
      { label: 'predicted total', value: ms(data.total_ms) + ' ms', raw: data.total_ms, id: 'total' },
      { label: Math.round(100 * data.interval_level) + '% interval', value: ms(iv[0]) + ' – ' + ms(iv[1]) + ' ms', id: 'interval',
        note: data.uncertainty && data.uncertainty.interval_networks ? 'bounds ' + Math.round(100 * data.interval_level) + '% of ' + data.uncertainty.interval_networks + ' random networks' : 'from the kernels\' spreads, context and drift' },
      { label: 'kernels', value: int(data.layers.length), raw: data.layers.length, id: 'layer-count' },
      { label: 'coverage', value: cov.covered_nodes + ' / ' + cov.total_nodes + ' nodes', id: 'coverage', note: cov.uncovered.length ? 'some NOT predicted' : 'all predicted' },
      { label: 'in graph', value: (data.context_ms >= 0 ? '+' : '') + ms(data.context_ms) + ' ms', note: data.context ? 'context fitted on ' + (data.context_fitted_on || 'random networks') : 'no context model' },
      { label: 'by source', value: Object.keys(data.ms_by_source || {}).length + ' sources',
        note: Object.entries(data.ms_by_source || {}).map(([k, v]) => k + ' ' + ms(v) + ' ms').join(', ') },
    ]);
    const g = graphs && graphs[0];
    const sec = section('Graph (colour: predicted time of the node\'s layer)', 'graph-section');
    drawPrediction(sec, g || { nodes: [] }, data.layers, cov.uncovered, false);
  }

  // ---- validate ------------------------------------------------------------------------------
  function renderValidate() {
    const models = data.models || [];
    const p = data.pack || {};
    subtitle(models.length + ' model(s) · pack: ' + p.backend + ' ' + p.threads + (p.threads === 1 ? ' thread' : ' threads'));
    const incomplete = models.filter((m) => !m.complete);
    if (incomplete.length) {
      problem('problem', incomplete.length + ' model(s) with nodes NOT predicted: their predicted totals lack those nodes (never counted inside the interval)',
        incomplete.map((m) => m.model + ': ' + m.covered_nodes + ' of ' + m.total_nodes + ' nodes predicted; the others measured ' + ms(m.uncovered_measured_ms) + ' ms'));
    }
    const noisy = models.filter((m) => m.noisy || m.host_busy);
    if (noisy.length) problem('warning', 'measured on a noisy or busy machine', noisy.map((m) => m.model + (m.host_busy ? ': host busy' : ': noisy')));
    if (data.machine_note) problem('warning', 'note: ' + data.machine_note);
    if (data.drift && data.drift.why) problem('warning', 'drift not measured: ' + data.drift.why);
    const sum_ = section(null, 'summary');
    stats(sum_, [
      { label: 'models', value: int(models.length), raw: models.length, id: 'model-count' },
      { label: 'within ±5%', value: pct(data.within5_pct), raw: data.within5_pct, id: 'within5' },
      { label: 'within ±10%', value: pct(data.within10_pct), raw: data.within10_pct, id: 'within10' },
      { label: 'RMSPE', value: pct(data.rmspe_pct), raw: data.rmspe_pct, id: 'rmspe' },
      { label: 'inside ' + Math.round(100 * data.interval_level) + '% interval', value: pct(data.inside_interval_pct), raw: data.inside_interval_pct,
        note: 'median half-width ±' + pct(data.median_half_interval_pct) },
      data.drift && isNum(data.drift.ratio) ? { label: 'machine now / pack', value: data.drift.ratio.toFixed(3) + '×', note: clip(data.drift.kernel || '', 60) } : null,
    ].filter(Boolean));
    const chart = section('Predicted against measured', 'chart-section');
    scatter(chart, {
      id: 'scatter', log: true, square: true, diagonal: true, xLabel: 'measured ms', yLabel: 'predicted ms',
      series: [
        { label: 'kernels', color: '#9ab', r: 2.5, points: models.flatMap((m) => m.layers.map((l) => ({ x: l.measured_ms, y: l.predicted_ms, title: m.model + ': ' + l.nodes[0] + ' ' + l.kernel }))) },
        { label: 'models', color: '#c33', r: 5, points: models.map((m) => ({ x: m.measured_ms, y: m.predicted_ms, title: m.model + ': ' + ms(m.predicted_ms) + ' predicted, ' + ms(m.measured_ms) + ' measured' })) },
      ],
    });
    const msec = section('Models', 'model-section');
    let pick = null;
    table(msec, 'model-table', [
      { label: 'model', get: (m) => m.model },
      { label: 'predicted ms', get: (m) => m.predicted_ms, show: (m) => ms(m.predicted_ms), bar: true },
      { label: 'measured ms', get: (m) => m.measured_ms, show: (m) => ms(m.measured_ms), bar: true, alt: true },
      { label: 'error', get: (m) => m.error_pct, show: (m) => signedPct(m.error_pct), num: true },
      { label: 'interval ms', get: (m) => m.interval_ms[0], show: (m) => ms(m.interval_ms[0]) + ' – ' + ms(m.interval_ms[1]) },
      { label: 'inside', get: (m) => (m.inside_interval ? 1 : 0), show: (m) => (m.inside_interval ? 'yes' : 'no') },
      { label: 'coverage', get: (m) => m.covered_nodes / Math.max(1, m.total_nodes), show: (m) => m.covered_nodes + ' / ' + m.total_nodes, cls: (m) => (m.complete ? '' : 'bad') },
      { label: 'noise', get: (m) => (m.host_busy ? 'host busy' : m.noisy ? 'noisy' : ''), show: (m) => (m.host_busy ? 'host busy' : m.noisy ? 'noisy' : 'quiet') },
    ], models, (i) => { if (pick) { pick.value = String(i); showModel(i); } });
    const gsec = section('Layers of one model', 'graph-section');
    pick = h('select', { id: 'model-pick' }, models.map((m, i) => h('option', { value: i, text: m.model })));
    gsec.appendChild(h('div', { class: 'toolbar' }, ['model: ', pick]));
    const holder = h('div');
    gsec.appendChild(holder);
    const showModel = (i) => {
      holder.textContent = '';
      const m = models[i];
      if (!m) return;
      const layers = m.layers;
      drawPrediction(holder, (graphs && graphs[i]) || { nodes: [] }, layers, [], true);
    };
    pick.addEventListener('change', () => showModel(Number(pick.value)));
    showModel(0);
  }

  // ---- compare -------------------------------------------------------------------------------
  function renderCompare() {
    const rows = data.rows || [];
    subtitle((data.device || '') + ' · ' + rows.length + ' configuration(s)');
    const failed = rows.filter((r) => !r.ok);
    if (failed.length) problem('warning', failed.length + ' configuration(s) could not run', failed.map((r) => r.model + ' · ' + r.backend + ' · ' + r.threads + ' thr · ' + r.precision + ': ' + r.why));
    const busy = rows.filter((r) => r.ok && r.contended);
    if (busy.length) problem('warning', busy.length + ' row(s) measured while other processes took the cores they needed (likely slow)', busy.map((r) => r.model + ' · ' + r.backend + ' · ' + r.threads + ' thr · ' + r.precision));
    const ok = rows.filter((r) => r.ok);
    const sum_ = section(null, 'summary');
    const best = ok.length ? ok.reduce((a, b) => (b.p50_us < a.p50_us ? b : a)) : null;
    stats(sum_, [
      { label: 'configurations', value: int(rows.length), raw: rows.length, id: 'row-count' },
      { label: 'ran', value: int(ok.length), raw: ok.length },
      { label: 'fastest p50', value: best ? ms(best.p50_us / 1000) + ' ms' : '–', raw: best ? best.p50_us / 1000 : null, id: 'total', note: best ? best.backend + ' · ' + best.threads + ' thr · ' + best.precision : '' },
      { label: 'baseline RSS', value: isNum(data.baseline_rss_kb) ? (data.baseline_rss_kb / 1024).toFixed(1) + ' MB' : '–' },
      { label: 'energy', value: data.energy_readable ? 'RAPL readable' : 'not readable' },
    ]);
    // Bars: p50 per configuration, grouped by model, coloured by backend.
    const chart = section('p50 latency per backend, thread count and precision', 'chart-section');
    const backends = Array.from(new Set(rows.map((r) => r.backend)));
    const palette = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#b07aa1', '#edc948', '#9c755f'];
    const colour = (b) => palette[backends.indexOf(b) % palette.length];
    const maxMs = maxOf(ok.map((r) => r.p50_us / 1000), 0);
    const BW = 760, LBL = 250, RH = 22;
    const models = Array.from(new Set(rows.map((r) => r.model)));
    let y = 10;
    const parts = [];
    for (const m of models) {
      parts.push(s('text', { x: 4, y: y + 12, 'font-weight': 600, text: clip(m, 60) }));
      y += 20;
      for (const r of rows.filter((x) => x.model === m)) {
        parts.push(s('text', { x: 14, y: y + 15, text: r.backend + ' · ' + r.threads + ' thr · ' + r.precision }));
        if (r.ok && maxMs > 0) {
          const w = Math.max(1, (BW - LBL - 90) * (r.p50_us / 1000) / maxMs);
          parts.push(s('rect', { class: 'cbar', x: LBL, y: y + 3, width: w, height: RH - 6, fill: colour(r.backend) }, [s('title', { text: ms(r.p50_us / 1000) + ' ms' })]));
          parts.push(s('text', { x: LBL + w + 4, y: y + 15, text: ms(r.p50_us / 1000) + ' ms' + (r.contended ? ' *' : '') }));
        } else {
          parts.push(s('text', { x: LBL, y: y + 15, fill: '#b3261e', text: clip('not run: ' + (r.why || ''), 70) }));
        }
        y += RH;
      }
      y += 6;
    }
    chart.appendChild(s('svg', { class: 'chart', id: 'bars', viewBox: '0 0 ' + BW + ' ' + y, width: BW, height: y }, parts));
    const tsec = section('Configurations', 'table-section');
    table(tsec, 'compare-table', [
      { label: 'model', get: (r) => r.model },
      { label: 'backend', get: (r) => r.backend },
      { label: 'threads', get: (r) => r.threads, num: true },
      { label: 'precision', get: (r) => r.precision },
      { label: 'p50 ms', get: (r) => (r.ok ? r.p50_us / 1000 : null), show: (r) => (r.ok ? ms(r.p50_us / 1000) + (r.contended ? ' *' : '') : 'not run'), bar: true },
      { label: 'inf/s', get: (r) => (r.ok ? r.throughput_per_s : null), show: (r) => (r.ok ? r.throughput_per_s.toFixed(1) : ''), bar: true, alt: true },
      { label: 'size MB', get: (r) => r.model_bytes / 1e6, show: (r) => (r.model_bytes / 1e6).toFixed(2), num: true },
      { label: 'peak RSS MB', get: (r) => (r.ok ? r.peak_rss_kb / 1024 : null), show: (r) => (r.ok ? (r.peak_rss_kb / 1024).toFixed(1) : ''), bar: true, alt: true },
      { label: 'mJ/inf', get: (r) => (r.ok && isNum(r.energy_mj_per_inference) ? r.energy_mj_per_inference : null), show: (r) => (r.ok && isNum(r.energy_mj_per_inference) ? r.energy_mj_per_inference.toFixed(2) : 'n/a'), num: true },
      { label: 'max |diff|', get: (r) => (r.drift && isNum(r.drift.max_abs_diff) ? r.drift.max_abs_diff : null), show: (r) => (r.drift && isNum(r.drift.max_abs_diff) ? r.drift.max_abs_diff.toPrecision(3) : 'n/a'), num: true },
      { label: 'cosine', get: (r) => (r.drift && isNum(r.drift.cosine) ? r.drift.cosine : null), show: (r) => (r.drift && isNum(r.drift.cosine) ? r.drift.cosine.toFixed(6) : 'n/a'), num: true },
      { label: 'why', get: (r) => r.why || '' },
    ], rows);
  }

  // ---- pareto --------------------------------------------------------------------------------
  function renderPareto() {
    const sols = data.solutions || [];
    const key = (id) => String(id);
    const byId = new Map(sols.map((p) => [key(p.id), p]));
    const front = (data.front || []).map((id) => byId.get(key(id))).filter(Boolean);
    const refs = Object.entries(data.references || {});
    subtitle((data.backends || []).join(' / ') + ' · op list of ' + (data.oplist || []).length + ' (' + data.mode + ' mode) · search ' + data.search + ' · ' + (data.device || ''));
    const np = data.not_predicted || [];
    if (np.length) problem('problem', np.length + ' node(s) no pack predicts: left out of every time alike', np.map((n) => n.node + ': ' + n.why));
    const lo = data.left_out || {};
    if (lo.assignments) problem('warning', lo.assignments + ' assignment(s) left out: a kernel only another backend\'s pack predicts', lo.examples || []);
    if (data.machine_note) problem('warning', 'note: ' + data.machine_note);
    const failed = (data.verify || []).filter((v) => !v.ok);
    if (failed.length) problem('warning', failed.length + ' verification run(s) failed', failed.map((v) => 'id ' + v.id + ': ' + v.why));
    const sum_ = section(null, 'summary');
    const fastest = front.length ? front[0] : null;
    stats(sum_, [
      { label: 'evaluated', value: int(sols.length), raw: sols.length, id: 'solution-count' },
      { label: 'on the front', value: int(front.length), raw: front.length, id: 'front-count' },
      { label: 'fastest on the front', value: fastest ? ms(fastest.time) + ' ms' : '–', raw: fastest ? fastest.time : null, id: 'total', note: fastest ? int(fastest.memory) + ' KB' : '' },
      ...refs.map(([role, r]) => ({ label: role, value: ms(r.time) + ' ms', note: int(r.memory) + ' KB' })),
    ]);
    const chart = section('Latency against memory (predicted)', 'chart-section');
    const verified = (data.verify || []).filter((v) => v.ok);
    scatter(chart, {
      id: 'front-plot', log: false, xLabel: 'latency ms', yLabel: 'memory KB',
      series: [
        { label: 'evaluated', color: '#bbb', r: 2.5, points: sols.map((p) => ({ x: p.time, y: p.memory, title: 'id ' + p.id })) },
        { label: 'front', color: '#c33', r: 4, line: true, points: front.slice().sort((a, b) => a.time - b.time).map((p) => ({ x: p.time, y: p.memory, title: 'id ' + p.id + ': ' + (data.configs[key(p.id)] || '') })) },
        { label: 'all on one backend', color: '#2f5fb3', r: 5, shape: 'diamond', points: refs.map(([role, r]) => ({ x: r.time, y: r.memory, title: role + ' (id ' + r.id + ')', label: role })) },
        verified.length ? { label: 'verified (measured)', color: '#2a2', r: 4, hollow: true, points: verified.map((v) => ({ x: v.measured_time, y: v.measured_memory, title: 'id ' + v.id + ' measured' })) } : null,
      ].filter(Boolean),
    });
    const ops = data.oplist || [];
    const backendsOf = (id) => {
      // "conv2d:xnnpack add:onednn": op list order; a key holding a space cannot be split.
      const parts = (data.configs[key(id)] || '').split(' ');
      return parts.length === ops.length ? parts.map((t) => t.slice(t.lastIndexOf(':') + 1)) : null;
    };
    const tsec = section('Front', 'table-section');
    let drawFor = null;
    table(tsec, 'front-table', [
      { label: 'id', get: (p) => key(p.id) },
      { label: 'time ms', get: (p) => p.time, show: (p) => ms(p.time), bar: true },
      { label: 'memory KB', get: (p) => p.memory, show: (p) => int(p.memory), bar: true, alt: true },
      { label: 'fallbacks', get: (p) => p.fallbacks, num: true },
      ...(data.drift_per_op ? [
        { label: 'int8 nodes', get: (p) => p.int8_nodes, num: true },
        { label: 'est. drift (1 − cos)', get: (p) => p.drift, show: (p) => (p.drift ? p.drift.toExponential(2) : '0') },
      ] : []),
      { label: 'assignment', get: (p) => data.configs[key(p.id)] || '' },
    ], front, (i) => drawFor && drawFor(front[i].id));
    const g = graphs && graphs[0];
    if (!g) return;
    const gsec = section('Graph (colour: backend of the assignment chosen in the table)', 'graph-section');
    const holder = h('div');
    gsec.appendChild(holder);
    const backends = data.backends || [];
    const palette = ['#9ecae1', '#fdae6b', '#a1d99b', '#d8b5e0', '#f7b6d2', '#c7c7c7'];
    drawFor = (id) => {
      holder.textContent = '';
      const chosen = backendsOf(id);
      const ofNode = g.oplist_of_node || [];
      const legend = h('span', { class: 'legend' }, ['id ' + id + ': '].concat(backends.map((b, k) => h('span', { style: 'background:' + palette[k % palette.length] + ';padding:0 6px;border-radius:3px', text: b }))));
      drawGraph(holder, g, (i) => {
        const b = chosen && isNum(ofNode[i]) ? chosen[ofNode[i]] : null;
        const k = backends.indexOf(b);
        return { fill: k >= 0 ? palette[k % palette.length] : '#eef1f4', sub: b || '' };
      }, (i) => {
        const b = chosen && isNum(ofNode[i]) ? chosen[ofNode[i]] : null;
        return [['backend', b || '?'], ['op list entry', isNum(ofNode[i]) ? ofNode[i] + ': ' + ops[ofNode[i]] : '?']];
      }, null, legend);
    };
    drawFor(front.length ? front[0].id : refs.length ? refs[0][1].id : 0);
  }

  const renderers = { inspect: renderInspect, predict: renderPredict, validate: renderValidate, compare: renderCompare, pareto: renderPareto };
  try {
    (renderers[kind] || (() => problem('problem', 'unknown report kind ' + kind)))();
    // When the page had drawn, style and layout forced (offsetHeight), in ms from the start of
    // navigation: bench/html_report.py reads it back to time opening a report.
    void document.body.offsetHeight;
    document.body.setAttribute('data-render-ms', performance.now().toFixed(1));
    document.body.setAttribute('data-rendered', 'yes');
  } catch (e) {
    problem('problem', 'this report failed to draw: ' + e);
    document.body.setAttribute('data-rendered', 'failed');
  }
})();
)latte_js";

}  // namespace latte
