// The timeline page's style and script, kept apart from the C++ that fills in the data. The
// script reads only the page's own JSON and puts input text into the document as text nodes
// and attribute values, never as markup.
#include "timeline_page_assets.hpp"

namespace viaduct::timeline::detail {

const char *const kPageErrorHook = R"JS(
(function () {
  'use strict';
  var errors = [];
  window.timelineErrors = errors;
  function note(text) {
    errors.push(String(text));
    if (document.body) document.body.setAttribute('data-errors', String(errors.length));
    var box = document.getElementById('errors');
    if (box) {
      box.hidden = false;
      box.textContent = errors.length + ' script error(s): ' + errors.join(' | ');
    }
  }
  window.onerror = function (message, source, line, column) {
    note(message + ' (line ' + line + ':' + column + ')');
    return false;
  };
  window.addEventListener('unhandledrejection', function (e) {
    note('unhandled rejection: ' + e.reason);
  });
  var original = console.error;
  console.error = function () {
    note(Array.prototype.map.call(arguments, String).join(' '));
    if (original) original.apply(console, arguments);
  };
})();
)JS";

const char *const kPageStyle = R"CSS(
:root { --ink: #1d2330; --muted: #5b6475; --line: #d5d9e0; --needle: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #f4f5f7;
       font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
header { padding: 12px 20px 8px; background: #fff; border-bottom: 1px solid var(--line); }
h1 { font-size: 19px; margin: 0 0 2px; overflow-wrap: anywhere; }
h2 { font-size: 15px; margin: 0 0 8px; }
#summary { margin: 0; color: var(--muted); }
.errors { background: #fdecea; color: var(--needle); padding: 6px 20px; }
.page { display: grid; grid-template-columns: minmax(0, 1fr) minmax(260px, 28%); gap: 14px;
        padding: 14px 20px; }
@media (max-width: 960px) { .page { grid-template-columns: minmax(0, 1fr); } }
main, aside { min-width: 0; }
section, aside { background: #fff; border: 1px solid var(--line); border-radius: 6px;
                 padding: 10px 12px; margin-bottom: 14px; }
.hint { font-weight: normal; color: var(--muted); font-size: 12px; }
#legend { display: flex; flex-wrap: wrap; gap: 2px 14px; font-size: 12px; color: var(--muted);
          margin-bottom: 6px; }
.key::before { content: ""; display: inline-block; width: 12px; height: 10px; margin-right: 4px;
               background: var(--c); vertical-align: -1px; }
.key.line::before { height: 3px; vertical-align: 3px; }
.lane, .bar-row { display: grid; grid-template-columns: 150px minmax(0, 1fr); align-items: center;
                  border-top: 1px solid #eef0f3; }
.lane-label, .bar-label { padding-right: 8px; overflow: hidden; }
.lane-label b, .bar-label b { display: block; }
.host { display: block; color: var(--muted); font-size: 12px; white-space: nowrap;
        overflow: hidden; text-overflow: ellipsis; }
.needle b { color: var(--needle); }
.needle b::after { content: " \2691 needle"; font-weight: normal; font-size: 11px; }
svg { display: block; overflow: visible; }
.phase-rule { stroke: #505050; stroke-dasharray: 3 3; stroke-width: 1; }
.phase-name { font-size: 10px; fill: #3a4252; }
.scale { font-size: 10px; fill: var(--muted); }
.cursor { stroke: #111; stroke-width: 1; pointer-events: none; }
.frame { fill: none; stroke: #b8bec8; }
.curve { fill: none; stroke-width: 1.6; stroke-linejoin: round; }
.tick { stroke: #9aa1ad; }
.tick-label { font-size: 11px; fill: var(--muted); }
#axis { margin-left: 150px; }
#tip { position: fixed; z-index: 10; pointer-events: none; background: rgba(255,255,255,.97);
       border: 1px solid #aab; border-radius: 4px; padding: 6px 8px; font-size: 12px;
       box-shadow: 0 2px 8px rgba(0,0,0,.15); max-width: 460px; }
#tip table { border-collapse: collapse; }
#tip td { padding: 1px 8px 1px 0; vertical-align: top; }
#tip td:first-child { color: var(--muted); white-space: nowrap; }
.controls { display: flex; align-items: center; gap: 10px; margin-bottom: 8px; flex-wrap: wrap; }
#slider { flex: 1; min-width: 200px; }
#clock { font-variant-numeric: tabular-nums; min-width: 150px; }
.bar-row { padding: 3px 0; }
.bar-phase { font-size: 11px; color: var(--muted); }
.bar-group { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 12px; }
.meter { display: grid; grid-template-columns: 32px minmax(0, 1fr) 78px; align-items: center;
         gap: 4px; font-size: 12px; }
.track { display: flex; height: 14px; background: #eceef2; border-radius: 2px; overflow: hidden; }
.seg { height: 100%; flex: none; }
.meter-value { font-variant-numeric: tabular-nums; color: var(--muted); text-align: right; }
#needles { padding-left: 18px; margin: 0 0 12px; }
#needles li { margin-bottom: 4px; color: var(--needle); overflow-wrap: anywhere; }
#needles li.none { color: var(--muted); }
#report { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; max-height: 80vh;
          overflow: auto; font: 12px/1.35 ui-monospace, "DejaVu Sans Mono", monospace; }
)CSS";

const char *const kPageBody = R"HTML(<div id="errors" class="errors" hidden></div>
<div class="page">
<main>
<section id="lanes-section">
<h2>Lanes
<span class="hint">one per node; hover for the values, click to replay from there</span></h2>
<div id="legend"></div>
<div id="lanes"></div>
<div id="axis"></div>
</section>
<section id="replay">
<h2>Replay <span class="hint">cpubar and diskbar of every node at one instant</span></h2>
<div class="controls">
<button id="play" type="button">Play</button>
<input id="slider" type="range" min="0" max="1000" step="1" value="0" aria-label="time">
<span id="clock"></span>
<label>speed <select id="speed"></select></label>
</div>
<div id="bars"></div>
</section>
<noscript><p>The lanes and the replay need JavaScript; timeline.png shows the lanes.</p></noscript>
<div id="tip" hidden></div>
</main>
)HTML";

// The script, in parts concatenated by the compiler.
const char *const kPageScript = R"JS(
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var BAND = ['#dde6f5', '#f7e9d2', '#dcefe0', '#f3dcea',
              '#e6e6e6', '#f5f0c8', '#d6eeee', '#e8ddf6'];
  var C = { user: '#3b6fc4', sys: '#d9534f', other: '#9a9a9a', iowait: '#e3b448',
            disk: '#1f8a3a', diskWrite: '#8fd19e', net: '#8e44ad', netReceived: '#c9a3dc' };
  var data = JSON.parse(document.getElementById('timeline-data').textContent);
  var nodes = data.nodes;
  var lanesBox = document.getElementById('lanes');
  var tip = document.getElementById('tip');
  var slider = document.getElementById('slider');
  var clock = document.getElementById('clock');
  var playButton = document.getElementById('play');
  var speedSelect = document.getElementById('speed');
  var LANE_H = nodes.length <= 4 ? 120 : nodes.length <= 8 ? 96 : 72;
  var SCALE_W = 70;  // right of each lane: its scales
  var state = { t: 0, playing: false, timer: null, cursors: [] };

  function svg(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }
  function fixed(v, d) { return Number(v || 0).toFixed(d); }
  function phaseName(p) { return data.phases[p] !== undefined ? data.phases[p] : 'phase ' + p; }
  function niceCeil(v) {
    if (!(v > 0)) return 1;
    var d = Math.pow(10, Math.floor(Math.log10(v)));
    var m = [1, 2, 5, 10];
    for (var i = 0; i < m.length; i++) if (v <= m[i] * d * 1.000001) return m[i] * d;
    return 10 * d;
  }
  function disk(n, i) { return n.cols.disk_read_mb_s[i] + n.cols.disk_write_mb_s[i]; }
  function net(n, i) { return n.cols.net_sent_mb_s[i] + n.cols.net_received_mb_s[i]; }

  var tEnd = 0, rateTop = 0;
  nodes.forEach(function (n) {
    if (n.t.length) tEnd = Math.max(tEnd, n.t[n.t.length - 1]);
    for (var i = 0; i < n.t.length; i++) rateTop = Math.max(rateTop, disk(n, i), net(n, i));
  });
  if (!(tEnd > 0)) tEnd = 1;
  // One MB/s scale for every lane and bar, so that a slow node looks slower.
  var rateMax = niceCeil(rateTop);

  // The sample whose interval holds time t: a sample's rates cover the time since the node's
  // previous sample, so the first sample at or after t (the last one past the node's end).
  // A node's first sample has no rates; until its second, the second's are shown.
  function sampleAt(n, t) {
    var lo = 0, hi = n.t.length - 1;
    if (hi < 0) return -1;
    if (t >= n.t[hi]) return hi;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (n.t[mid] < t) lo = mid + 1; else hi = mid;
    }
    return Math.max(lo, Math.min(1, n.t.length - 1));
  }
)JS"
                                R"JS(
  // A node's curves, at most about one point per pixel: where samples are denser, each point
  // keeps its bucket's highest values (a burst stays visible; stacked tops stay in order).
  function curves(n, width) {
    var c = n.cols, len = n.t.length;
    var out = { t: [], u: [], us: [], uso: [], usoi: [], disk: [], net: [] };
    var per = Math.max(1, Math.ceil(len / Math.max(1, width)));
    for (var i = 0; i < len; i += per) {
      var end = Math.min(len, i + per), m = { u: 0, us: 0, uso: 0, usoi: 0, disk: 0, net: 0 };
      for (var j = i; j < end; j++) {
        var u = c.cpu_user_pct[j], us = u + c.cpu_sys_pct[j], uso = us + c.cpu_other_pct[j];
        m.u = Math.max(m.u, u);
        m.us = Math.max(m.us, us);
        m.uso = Math.max(m.uso, uso);
        m.usoi = Math.max(m.usoi, uso + c.cpu_iowait_pct[j]);
        m.disk = Math.max(m.disk, disk(n, j));
        m.net = Math.max(m.net, net(n, j));
      }
      out.t.push(n.t[per === 1 ? i : Math.floor((i + end - 1) / 2)]);
      for (var k in m) out[k].push(m[k]);
    }
    return out;
  }

  // The node's phases: a band each, from its first sample to the next phase's first.
  function phaseSpans(n) {
    var spans = [];
    for (var i = 0; i < n.t.length;) {
      var j = i;
      while (j < n.t.length && n.phase[j] === n.phase[i]) j++;
      spans.push({ phase: n.phase[i], from: n.t[i], to: j < n.t.length ? n.t[j] : tEnd,
                   first: i === 0 });
      i = j;
    }
    return spans;
  }

  function drawLane(n, w) {
    var h = LANE_H, top = 14;
    var lane = html('div', 'lane', null, lanesBox);
    lane.setAttribute('data-lane', String(n.index));
    var label = html('div', 'lane-label', null, lane);
    html('b', null, 'node ' + n.index, label);
    html('span', 'host', n.host, label).title = n.host;
    var s = svg('svg', { width: w + SCALE_W, height: h, 'class': 'lane-plot' }, lane);
    function x(t) { return t / tEnd * w; }
    function y(v, full) { return h - 1 - Math.min(Math.max(v, 0), full) / full * (h - top - 1); }
    function yPct(p) { return y(p, 100); }
    function yRate(r) { return y(r, rateMax); }
    function point(t, yy) { return x(t).toFixed(1) + ',' + yy.toFixed(1); }
    var spans = phaseSpans(n);
    spans.forEach(function (p) {
      svg('rect', { x: x(p.from), y: 0, width: Math.max(0, x(p.to) - x(p.from)), height: h,
                    fill: BAND[p.phase % BAND.length] }, s);
    });
    var c = curves(n, w);
    function area(topKey, bottomKey, colour) {
      var pts = [];
      for (var i = 0; i < c.t.length; i++) pts.push(point(c.t[i], yPct(c[topKey][i])));
      for (var j = c.t.length - 1; j >= 0; j--)
        pts.push(point(c.t[j], yPct(bottomKey ? c[bottomKey][j] : 0)));
      if (pts.length)
        svg('polygon', { points: pts.join(' '), fill: colour, 'fill-opacity': 0.85 }, s);
    }
    function line(key, colour) {
      var pts = [];
      for (var i = 0; i < c.t.length; i++) pts.push(point(c.t[i], yRate(c[key][i])));
      if (pts.length)
        svg('polyline', { points: pts.join(' '), stroke: colour, 'class': 'curve' }, s);
    }
    area('u', null, C.user);
    area('us', 'u', C.sys);
    area('uso', 'us', C.other);
    area('usoi', 'uso', C.iowait);
    line('disk', C.disk);
    line('net', C.net);
    spans.forEach(function (p) {
      if (!p.first)
        svg('line', { x1: x(p.from), x2: x(p.from), y1: 0, y2: h, 'class': 'phase-rule' }, s);
      var name = phaseName(p.phase);
      if (x(p.to) - x(p.from) > 6.5 * (name.length + 1))
        svg('text', { x: x(p.from) + 3, y: 11, 'class': 'phase-name' }, s).textContent = name;
    });
    svg('rect', { x: 0, y: 0, width: w, height: h, 'class': 'frame' }, s);
    svg('text', { x: w + 5, y: 11, 'class': 'scale' }, s).textContent = 'CPU 100%';
    svg('text', { x: w + 5, y: 24, 'class': 'scale' }, s).textContent = rateMax + ' MB/s';
    svg('text', { x: w + 5, y: h - 2, 'class': 'scale' }, s).textContent = '0';
    var cursor = svg('line', { x1: 0, x2: 0, y1: 0, y2: h, 'class': 'cursor' }, s);
    state.cursors.push({ line: cursor, w: w });
    hover(s, n, w);
  }
)JS"
                                R"JS(
  function timeAt(s, w, ev) {
    var r = s.getBoundingClientRect();
    return Math.max(0, Math.min(tEnd, (ev.clientX - r.left) / w * tEnd));
  }
  function hover(s, n, w) {
    s.addEventListener('mousemove', function (ev) {
      var t = timeAt(s, w, ev);
      showCursor(t);
      showTip(n, t, ev.clientX, ev.clientY);
    });
    s.addEventListener('mouseleave', function () {
      tip.hidden = true;
      showCursor(state.t);
    });
    s.addEventListener('click', function (ev) { setTime(timeAt(s, w, ev)); });
  }
  function showCursor(t) {
    state.cursors.forEach(function (c) {
      var x = (t / tEnd * c.w).toFixed(1);
      c.line.setAttribute('x1', x);
      c.line.setAttribute('x2', x);
    });
  }

  // What the hover shows of node n's sample i: the exact figures, with their units.
  function tipRows(n, i) {
    var c = n.cols;
    function v(name, d) { return fixed(c[name][i], d); }
    function pair(a, b, d, unit) { return v(a, d) + ' / ' + v(b, d) + unit; }
    var from = i > 0 ? fixed(n.t[i - 1], 3) + ' to ' : 'at ';
    return [
      ['node', n.index + ' (' + n.host + ')'],
      ['sample', from + fixed(n.t[i], 3) + ' s'],
      ['phase', phaseName(n.phase[i])],
      ['CPU user / system',
       pair('cpu_user_pct', 'cpu_sys_pct', 1, ' %') + ' (' + v('proc_cpu', 2) + ' CPUs)'],
      ['CPU other / iowait', pair('cpu_other_pct', 'cpu_iowait_pct', 1, ' %') + ', steal ' +
       fixed(100 * c.host_steal[i], 1) + ' %'],
      ['disk read / write',
       pair('disk_read_mb_s', 'disk_write_mb_s', 1, ' MB/s') + ' (' + n.disk + ')'],
      ['process read / write', pair('proc_read_mb_s', 'proc_write_mb_s', 1, ' MB/s')],
      ['device read / write', pair('dev_read_mb_s', 'dev_write_mb_s', 1, ' MB/s')],
      ['device queue, busy',
       v('dev_in_flight', 0) + ' requests, ' + fixed(100 * c.dev_busy[i], 0) + ' %'],
      ['network sent / received', pair('net_sent_mb_s', 'net_received_mb_s', 1, ' MB/s')],
      ['faults major / minor', pair('major_faults_s', 'minor_faults_s', 0, ' per s')],
      ['resident memory', v('rss_mb', 1) + ' MB'],
      ['done', Number(c.records[i]).toLocaleString('en') + ' records, ' + v('mb_done', 1) + ' MB'],
      ['rate',
       Number(c.records_s[i]).toLocaleString('en') + ' records/s, ' + v('mb_s', 1) + ' MB/s']
    ];
  }
  function showTip(n, t, cx, cy) {
    var i = sampleAt(n, t);
    tip.textContent = '';
    if (i < 0) {
      tip.textContent = 'node ' + n.index + ': no samples';
    } else {
      html('div', 'hint', 't = ' + fixed(t, 3) + ' s', tip);
      var table = html('table', null, null, tip);
      tipRows(n, i).forEach(function (r) {
        var tr = html('tr', null, null, table);
        html('td', null, r[0], tr);
        html('td', null, r[1], tr);
      });
    }
    tip.hidden = false;
    var x = cx + 16, y = cy + 12;
    if (x + tip.offsetWidth > window.innerWidth - 4) x = Math.max(4, cx - tip.offsetWidth - 16);
    if (y + tip.offsetHeight > window.innerHeight - 4)
      y = Math.max(4, window.innerHeight - tip.offsetHeight - 4);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
)JS"
                                R"JS(
  function drawAxis(w) {
    var box = document.getElementById('axis');
    box.textContent = '';
    var s = svg('svg', { width: w + SCALE_W, height: 34 }, box);
    var step = niceCeil(tEnd / 10);
    for (var t = 0; t <= tEnd + step * 1e-6; t += step) {
      var x = t / tEnd * w;
      svg('line', { x1: x, x2: x, y1: 0, y2: 5, 'class': 'tick' }, s);
      svg('text', { x: x, y: 17, 'text-anchor': 'middle', 'class': 'tick-label' }, s).textContent =
        Number(t.toPrecision(6)).toString();
    }
    var title = svg('text', { x: w / 2, y: 31, 'text-anchor': 'middle', 'class': 'tick-label' }, s);
    title.textContent = "seconds since the job's first sample";
  }

  function markNeedles() {
    (data.needles || []).forEach(function (line) {
      var m = /node (\d+)/.exec(line);
      if (!m) return;
      var found =
        document.querySelectorAll('[data-lane="' + m[1] + '"], [data-bar="' + m[1] + '"]');
      for (var i = 0; i < found.length; i++) found[i].classList.add('needle');
    });
  }

  function drawLanes() {
    lanesBox.textContent = '';
    state.cursors = [];
    var w = Math.max(240, lanesBox.clientWidth - 150 - SCALE_W);
    if (!nodes.length) html('p', 'hint', 'no nodes', lanesBox);
    nodes.forEach(function (n) { drawLane(n, w); });
    drawAxis(w);
    markNeedles();
    showCursor(state.t);
  }

  function drawLegend() {
    var box = document.getElementById('legend');
    [['CPU user (this process)', C.user, ''], ['CPU system (this process)', C.sys, ''],
     ['CPU other processes', C.other, ''], ['CPU iowait', C.iowait, ''],
     ['disk MB/s (read + write)', C.disk, 'line'],
     ['network MB/s (sent + received)', C.net, 'line']]
      .forEach(function (k) {
        var e = html('span', 'key ' + k[2], k[0], box);
        e.style.setProperty('--c', k[1]);
      });
    var used = {};
    nodes.forEach(function (n) { n.phase.forEach(function (p) { used[p] = true; }); });
    Object.keys(used).map(Number).sort(function (a, b) { return a - b; }).forEach(function (p) {
      var e = html('span', 'key', 'phase ' + phaseName(p), box);
      e.style.setProperty('--c', BAND[p % BAND.length]);
    });
  }

  function drawSummary() {
    var samples = 0;
    nodes.forEach(function (n) { samples += n.t.length; });
    document.getElementById('summary').textContent = nodes.length + ' node' +
      (nodes.length === 1 ? '' : 's') + ', ' + fixed(tEnd, 2) + ' s, ' + samples +
      ' samples; MB/s scale common to all nodes: ' + rateMax + ' MB/s';
  }
)JS"
                                R"JS(
  // The replay: per node, a cpubar (user, system, other, iowait as shares of the host's CPUs)
  // and diskbar (read, write) and a network bar (sent, received) at the slider's time.
  function meter(parent, name, colours) {
    var m = html('div', 'meter', null, parent);
    html('span', null, name, m);
    var track = html('div', 'track', null, m);
    var value = html('span', 'meter-value', '', m);
    var segs = colours.map(function (c) {
      var seg = html('div', 'seg', null, track);
      seg.style.background = c;
      return seg;
    });
    return { segs: segs, value: value };
  }
  function drawBars() {
    var box = document.getElementById('bars');
    return nodes.map(function (n) {
      var row = html('div', 'bar-row', null, box);
      row.setAttribute('data-bar', String(n.index));
      var label = html('div', 'bar-label', null, row);
      html('b', null, 'node ' + n.index, label);
      html('span', 'host', n.host, label).title = n.host;
      var phase = html('span', 'bar-phase', '', label);
      var group = html('div', 'bar-group', null, row);
      return { node: n, phase: phase,
               cpu: meter(group, 'CPU', [C.user, C.sys, C.other, C.iowait]),
               disk: meter(group, 'disk', [C.disk, C.diskWrite]),
               net: meter(group, 'net', [C.net, C.netReceived]) };
    });
  }
  function fill(m, values, full, text, detail) {
    values.forEach(function (v, i) {
      m.segs[i].style.width = Math.max(0, Math.min(100, 100 * v / full)).toFixed(2) + '%';
    });
    m.value.textContent = text;
    m.value.title = detail;
  }
  var bars = [];
  function setTime(t) {
    state.t = Math.max(0, Math.min(tEnd, t));
    slider.value = String(Math.round(state.t / tEnd * 1000));
    clock.textContent = fixed(state.t, 2) + ' s of ' + fixed(tEnd, 2) + ' s';
    bars.forEach(function (b) {
      var n = b.node, i = sampleAt(n, state.t), c = n.cols;
      function v(name) { return i < 0 ? 0 : c[name][i]; }
      var cpu = [v('cpu_user_pct'), v('cpu_sys_pct'), v('cpu_other_pct'), v('cpu_iowait_pct')];
      fill(b.cpu, cpu, 100, fixed(cpu[0] + cpu[1] + cpu[2] + cpu[3], 0) + ' %',
           'user ' + fixed(cpu[0], 1) + ' %, system ' + fixed(cpu[1], 1) + ' %, other ' +
           fixed(cpu[2], 1) + ' %, iowait ' + fixed(cpu[3], 1) + ' %');
      var d = [v('disk_read_mb_s'), v('disk_write_mb_s')];
      var s = [v('net_sent_mb_s'), v('net_received_mb_s')];
      fill(b.disk, d, rateMax, fixed(d[0] + d[1], 1) + ' MB/s',
           'read ' + fixed(d[0], 1) + ' MB/s, write ' + fixed(d[1], 1) + ' MB/s');
      fill(b.net, s, rateMax, fixed(s[0] + s[1], 1) + ' MB/s',
           'sent ' + fixed(s[0], 1) + ' MB/s, received ' + fixed(s[1], 1) + ' MB/s');
      b.phase.textContent = i < 0 ? 'no samples' : 'phase ' + phaseName(n.phase[i]);
    });
    showCursor(state.t);
  }
  function speed() { return Number(speedSelect.value) || 1; }
  function stop() {
    state.playing = false;
    clearInterval(state.timer);
    playButton.textContent = 'Play';
  }
  function play() {
    if (state.t >= tEnd) setTime(0);
    state.playing = true;
    playButton.textContent = 'Pause';
    var last = performance.now();
    state.timer = setInterval(function () {
      var now = performance.now(), t = state.t + (now - last) / 1000 * speed();
      last = now;
      setTime(t);
      if (t >= tEnd) stop();
    }, 50);
  }
  function setUpReplay() {
    var speeds = [1, 2, 5, 10, 20, 50, 100], chosen = speeds[speeds.length - 1];
    for (var i = speeds.length - 1; i >= 0; i--) if (tEnd / speeds[i] <= 30) chosen = speeds[i];
    speeds.forEach(function (s) {
      var o = html('option', null, s + '\u00d7', speedSelect);
      o.value = String(s);
      if (s === chosen) o.selected = true;
    });
    playButton.addEventListener('click', function () { if (state.playing) stop(); else play(); });
    slider.addEventListener('input', function () { setTime(Number(slider.value) / 1000 * tEnd); });
    bars = drawBars();
    // "timeline.html#t=12.5" opens the replay at that time (a link to an instant).
    var start = /^#t=([0-9.]+)$/.exec(window.location.hash);
    setTime(start ? Number(start[1]) : 0);
  }

  try {
    drawSummary();
    drawLegend();
    drawLanes();
    setUpReplay();
    markNeedles();
    var resizeTimer = null;
    window.addEventListener('resize', function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(drawLanes, 150);
    });
  } catch (e) {
    console.error('timeline: ' + (e && e.stack ? e.stack : e));
  } finally {
    document.body.setAttribute('data-ready', '1');
    document.body.setAttribute('data-errors', String(window.timelineErrors.length));
  }
})();
)JS";

}  // namespace viaduct::timeline::detail
