// The report page's script (src/report/assets/report.js): draws the JSON
// that `tailor report` inlined (src/report/report_data.cpp writes it) with
// Chart.js. No data is computed here beyond grouping and formatting: the
// series arrive downsampled. When done it sets data-rendered on <body> and
// window.tailorReport = {charts, renderMs} for the browser tests.
(function () {
  'use strict';
  const started = performance.now();
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const charts = {};
  const palette = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
                   '#9c755f', '#bab0ac'];
  const color = (i) => palette[i % palette.length];
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 12;

  function bytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let u = 0;
    while (Math.abs(n) >= 1024 && u < units.length - 1) { n /= 1024; ++u; }
    return (u ? n.toFixed(1) : String(Math.round(n))) + ' ' + units[u];
  }
  function count(n) { return Number(n).toLocaleString('en-US'); }
  function duration(ns) {
    if (ns < 1e3) return ns + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(0) + ' us';
    if (ns < 1e9) return (ns / 1e6).toFixed(0) + ' ms';
    return (ns / 1e9).toFixed(1) + ' s';
  }
  function el(tag, text) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; }
  function chart(id, config) { charts[id] = new Chart(document.getElementById(id), config); return charts[id]; }
  function title(text) { return { display: true, text: text }; }
  // Labels of power-of-two buckets: bucket k holds 2^(k-1) < v <= 2^k.
  function log2Labels(n, fmt) { return Array.from({ length: n }, (_, k) => '\u2264 ' + fmt(Math.pow(2, k))); }

  // Header.
  const t = data.trace;
  document.getElementById('trace-line').textContent =
    t.path + ' \u2014 ' + (t.command || '?') + ' (pid ' + t.pid + '), ' + count(t.events) + ' events over ' +
    t.duration_s.toFixed(3) + ' s';
  if (!t.complete) {
    const cut = document.getElementById('cut-line');
    cut.textContent = 'Cut trace: ' + t.cut;
    cut.hidden = false;
  }
  const s = data.summary;
  const sampled = s.sampling && s.sampling.interval > 0;
  // A sampled trace's amounts are estimates: "≈ value ± one standard error".
  const est = (v, err) => sampled ? '\u2248 ' + bytes(v) + ' \u00b1 ' + bytes(Math.round(err)) : bytes(v);
  if (sampled) {
    const line = document.getElementById('sampled-line');
    line.textContent = 'Sampled trace: one allocation per ' + bytes(s.sampling.interval) + ' on average (' +
      count(s.sampling.samples) + ' sampled allocations). Counts and bytes are estimates for the whole run, ' +
      '\u00b1 one standard error; lifetimes are those of the sampled blocks.';
    line.hidden = false;
  }
  const summary = [['objects', count(s.objects)], ['total bytes', est(s.total_bytes, s.sampling.total_bytes_error)],
    ['max in use', est(s.max_in_use_bytes, s.sampling.max_in_use_error)], ['average size', s.average_size.toFixed(1) + ' B'],
    ['memory operations', count(s.memory_ops)], ['max live objects', count(s.max_live_objects)],
    ['never freed', est(s.live_bytes_at_end, s.sampling.live_bytes_at_end_error)], ['distinct sizes', count(s.distinct_sizes)],
    ['distinct call sites', count(s.distinct_callsites)], ['cross-thread frees', count(s.cross_thread_releases)]];
  const srow = el('tr');
  for (const [k, v] of summary) { const td = el('td'); td.append(el('b', v), el('br'), k); srow.append(td); }
  document.getElementById('summary').append(srow);

  // Memory in use over time.
  const pts = data.in_use.points;
  chart('chart-in-use', {
    type: 'line',
    data: { datasets: [
      { label: 'highest in run', data: pts.map(p => ({ x: p[0], y: p[2] })), borderColor: color(0), borderWidth: 1.5,
        pointRadius: 0, fill: false },
      { label: 'lowest in run', data: pts.map(p => ({ x: p[0], y: p[1] })), borderColor: 'rgba(78,121,167,0.35)',
        backgroundColor: 'rgba(78,121,167,0.2)', borderWidth: 1, pointRadius: 0, fill: '-1' },
      { label: 'peak ' + bytes(data.in_use.peak.bytes), type: 'scatter', data: s.objects ?
        [{ x: data.in_use.peak.time_s, y: data.in_use.peak.bytes }] : [], pointRadius: 6, backgroundColor: '#d62728',
        borderColor: '#d62728' }] },
    options: { parsing: false, normalized: true, interaction: { mode: 'nearest', intersect: false },
      scales: { x: { type: 'linear', title: title('time (s)') },
                y: { beginAtZero: true, title: title('requested bytes in use'), ticks: { callback: v => bytes(v) } } },
      plugins: { tooltip: { callbacks: { label: c => c.dataset.label + ': ' + bytes(c.parsed.y) } } } } });

  // Simulated DMMs' bytes held from the system.
  if (data.dmms.length) {
    document.getElementById('dmm-memory').hidden = false;
    const first = data.dmms[0].series;
    const ds = [{ label: 'requested', data: first.map(p => ({ x: p[0], y: p[1] })), borderColor: '#444',
      borderDash: [4, 3], borderWidth: 1.5, pointRadius: 0 }];
    data.dmms.forEach((d, i) => {
      ds.push({ label: d.name + ' held', data: d.series.map(p => ({ x: p[0], y: p[2] })), borderColor: color(i),
        borderWidth: 1.5, pointRadius: 0 });
      ds.push({ label: d.name + ' peak ' + bytes(d.memory_usage_bytes), type: 'scatter',
        data: [{ x: d.peak_operation, y: d.memory_usage_bytes }], pointRadius: 5, backgroundColor: color(i),
        borderColor: '#000' });
    });
    chart('chart-dmm-memory', { type: 'line', data: { datasets: ds },
      options: { parsing: false, normalized: true, interaction: { mode: 'nearest', intersect: false },
        scales: { x: { type: 'linear', title: title('operation') },
                  y: { beginAtZero: true, title: title('bytes'), ticks: { callback: v => bytes(v) } } },
        plugins: { tooltip: { callbacks: { label: c => c.dataset.label + ': ' + bytes(c.parsed.y) } } } } });
  }

  // Sizes and lifetimes (counts span orders of magnitude: log scales).
  const buckets = data.sizes.buckets;
  chart('chart-sizes', { type: 'bar',
    data: { labels: buckets.map(b => '\u2264 ' + bytes(b[0])), datasets: [
      { label: 'objects', data: buckets.map(b => b[1]), backgroundColor: color(0), yAxisID: 'y' },
      { label: 'bytes', data: buckets.map(b => b[2]), backgroundColor: color(1), yAxisID: 'y2' }] },
    options: { plugins: { title: title('Request sizes (power-of-two buckets)') },
      scales: { x: { title: title('size') }, y: { type: 'logarithmic', title: title('objects') },
                y2: { type: 'logarithmic', position: 'right', title: title('bytes'), grid: { drawOnChartArea: false },
                      ticks: { callback: v => bytes(v) } } } } });
  const lifeEvents = data.lifetimes.events, lifeNs = data.lifetimes.ns;
  chart('chart-lifetime-events', { type: 'bar',
    data: { labels: log2Labels(lifeEvents.length, count),
            datasets: [{ label: 'released objects', data: lifeEvents, backgroundColor: color(2) }] },
    options: { plugins: { title: title('Lifetime in events (allocation to release)') },
      scales: { x: { title: title('events') }, y: { type: 'logarithmic', title: title('objects') } } } });
  chart('chart-lifetime-time', { type: 'bar',
    data: { labels: log2Labels(lifeNs.length, duration),
            datasets: [{ label: 'released objects', data: lifeNs, backgroundColor: color(3) }] },
    options: { plugins: { title: title('Lifetime in time') },
      scales: { x: { title: title('time') }, y: { type: 'logarithmic', title: title('objects') } } } });

  // Call sites: the sortable table.
  const sites = data.sites;
  document.getElementById('sites-note').textContent = sites.rows.length + ' of ' + count(sites.distinct) +
    ' call sites (the top by calls and by bytes). The trace records one return address per call, so the icicle ' +
    'goes module \u2192 function \u2192 call site.';
  const columns = [
    { key: 'symbol', label: 'call site', text: r => r.symbol, cls: 'symbol' },
    { key: 'module', label: 'module', text: r => r.module || '?' },
    { key: 'calls', label: 'calls', text: r => count(r.calls) },
    { key: 'calls_pct', label: '% calls', value: r => r.calls / Math.max(1, sites.total_calls),
      text: r => (100 * r.calls / Math.max(1, sites.total_calls)).toFixed(1) },
    { key: 'bytes', label: 'bytes', text: r => bytes(r.bytes) },
    { key: 'bytes_pct', label: '% bytes', value: r => r.bytes / Math.max(1, sites.total_bytes),
      text: r => (100 * r.bytes / Math.max(1, sites.total_bytes)).toFixed(1) },
    { key: 'peak_live_bytes', label: 'peak live', text: r => bytes(r.peak_live_bytes) }];
  const table = document.getElementById('sites-table');
  const head = el('tr');
  let sortKey = 'bytes', sortDir = -1;
  columns.forEach(c => {
    const th = el('th', c.label);
    th.dataset.key = c.key;
    th.addEventListener('click', () => {
      sortDir = sortKey === c.key ? -sortDir : (c.key === 'symbol' || c.key === 'module' ? 1 : -1);
      sortKey = c.key;
      fillSites();
    });
    head.append(th);
  });
  table.tHead.append(head);
  function fillSites() {
    const col = columns.find(c => c.key === sortKey);
    const value = col.value || (r => r[col.key]);
    const rows = sites.rows.slice().sort((a, b) => {
      const x = value(a), y = value(b);
      return (typeof x === 'string' ? x.localeCompare(y) : x - y) * sortDir;
    });
    const body = document.createElement('tbody');
    for (const r of rows) {
      const tr = el('tr');
      tr.dataset.address = r.address;
      for (const c of columns) { const td = el('td', c.text(r)); if (c.cls) { td.className = c.cls; td.title = r.symbol; } tr.append(td); }
      body.append(tr);
    }
    table.replaceChild(body, table.tBodies[0]);
    for (const th of head.children)
      th.setAttribute('aria-sort', th.dataset.key === sortKey ? (sortDir > 0 ? 'ascending' : 'descending') : 'none');
  }
  fillSites();

  // Stacks (traces recorded with --stacks): flame graphs by d3-flame-graph,
  // of bytes allocated or in use at the peak; a click zooms into a box.
  if (data.stacks) {
    document.getElementById('stacks').hidden = false;
    document.getElementById('stacks-note').textContent = 'By whole call stack, outermost frame at the bottom, ' +
      'frames named by function (boxes under 1/2000 of the total are left out): ' + bytes(data.stacks.allocated_bytes) +
      ' allocated, ' + bytes(data.stacks.peak_bytes) + ' in use at the peak. Click a box to zoom in.';
    const box = document.getElementById('flame');
    const metric = document.getElementById('flame-metric');
    const search = document.getElementById('flame-search');
    let flame = null;
    const drawFlame = () => {
      if (flame) flame.destroy();
      box.textContent = '';
      const total = Math.max(1, data.stacks[metric.value].value);
      flame = flamegraph.default().width(Math.max(600, box.clientWidth)).cellHeight(18).minFrameSize(2)
        .transitionDuration(0).sort(true)
        .setLabelHandler(d => d.data.name + ': ' + bytes(d.value) + ' (' + (100 * d.value / total).toFixed(1) + '%)')
        .setDetailsElement(document.getElementById('flame-details'));
      d3.select(box).datum(structuredClone(data.stacks[metric.value])).call(flame);
      if (search.value) flame.search(search.value);
      window.tailorReport.flame = flame;
    };
    metric.addEventListener('change', drawFlame);
    search.addEventListener('input', () => (search.value ? flame.search(search.value) : flame.clear()));
    document.getElementById('flame-reset').addEventListener('click', () => flame.resetZoom());
    window.tailorReport = window.tailorReport || {};
    drawFlame();
  }

  // Leaks: the blocks live at the end, by the call site that allocated them.
  const leaks = data.leaks;
  document.getElementById('leaks-note').textContent = leaks.objects === 0 ? 'Every block was freed.' :
    count(leaks.objects) + ' blocks, ' + bytes(leaks.bytes) + ' live ' + leaks.end + ', allocated at ' +
    count(leaks.sites) + ' call sites' + (leaks.rows.length < leaks.sites ? ' (the top ' + leaks.rows.length +
    ' by bytes)' : '') + '.';
  const leaksTable = document.getElementById('leaks-table');
  const leaksHead = el('tr');
  for (const label of ['call site', 'module', 'bytes', '% bytes', 'blocks', 'largest']) leaksHead.append(el('th', label));
  leaksTable.tHead.append(leaksHead);
  for (const r of leaks.rows) {
    const tr = el('tr');
    tr.dataset.address = r.address;
    const name = el('td', r.symbol);
    name.className = 'symbol';
    name.title = r.stack.length ? r.stack.join('\n\u2190 ') : r.symbol;  // the whole stack, when recorded
    tr.append(name, el('td', r.module || '?'), el('td', bytes(r.bytes)),
              el('td', (100 * r.bytes / Math.max(1, leaks.bytes)).toFixed(1)), el('td', count(r.blocks)),
              el('td', bytes(r.largest_bytes)));
    leaksTable.tBodies[0].append(tr);
  }

  // Call sites: the icicle, as floating horizontal bars, one row per level.
  const levels = ['all', 'module', 'function', 'call site'];
  function icicleData(metric) {
    const total = metric === 'bytes' ? sites.total_bytes : sites.total_calls;
    const nodes = [{ level: 0, name: 'all', start: 0, end: total, value: total, color: '#888' }];
    const byModule = new Map();
    for (const r of sites.rows) {
      const m = r.module || '?', f = r.function || r.symbol;
      if (!byModule.has(m)) byModule.set(m, new Map());
      const fs = byModule.get(m);
      if (!fs.has(f)) fs.set(f, []);
      fs.get(f).push(r);
    }
    const sum = rs => rs.reduce((a, r) => a + r[metric], 0);
    const modules = [...byModule.entries()].map(([m, fs]) => [m, fs, [...fs.values()].reduce((a, rs) => a + sum(rs), 0)])
      .sort((a, b) => b[2] - a[2]);
    let at = 0;
    modules.forEach(([m, fs, mv], mi) => {
      nodes.push({ level: 1, name: m, start: at, end: at + mv, value: mv, color: color(mi) });
      let fat = at;
      [...fs.entries()].map(([f, rs]) => [f, rs, sum(rs)]).sort((a, b) => b[2] - a[2]).forEach(([f, rs, fv], fi) => {
        nodes.push({ level: 2, name: f, start: fat, end: fat + fv, value: fv, color: fi % 2 ? color(mi) + 'bb' : color(mi) + '88' });
        let sat = fat;
        rs.slice().sort((a, b) => b[metric] - a[metric]).forEach((r, ri) => {
          nodes.push({ level: 3, name: r.symbol, start: sat, end: sat + r[metric], value: r[metric],
            color: ri % 2 ? color(mi) + '99' : color(mi) + '66' });
          sat += r[metric];
        });
        fat += fv;
      });
      at += mv;
    });
    if (at < total) nodes.push({ level: 1, name: 'other call sites', start: at, end: total, value: total - at, color: '#ccc' });
    return { nodes, total };
  }
  function drawIcicle(metric) {
    const { nodes, total } = icicleData(metric);
    if (charts['chart-icicle']) charts['chart-icicle'].destroy();
    chart('chart-icicle', { type: 'bar',
      data: { labels: levels, datasets: [{ label: metric, data: nodes.map(n => ({ y: levels[n.level], x: [n.start, n.end] })),
        backgroundColor: nodes.map(n => n.color), borderColor: '#fff', borderWidth: 1, barPercentage: 1,
        categoryPercentage: 1, borderSkipped: false }] },
      options: { indexAxis: 'y', plugins: { legend: { display: false },
          tooltip: { callbacks: { label: c => { const n = nodes[c.dataIndex];
            return n.name + ': ' + (metric === 'bytes' ? bytes(n.value) : count(n.value) + ' calls') + ' (' +
              (100 * n.value / Math.max(1, total)).toFixed(1) + '%)'; } } } },
        scales: { x: { min: 0, max: Math.max(1, total), title: title(metric),
                       ticks: { callback: v => metric === 'bytes' ? bytes(v) : count(v) } },
                  y: { reverse: false } } } });
  }
  const icicleMetric = document.getElementById('icicle-metric');
  icicleMetric.addEventListener('change', () => drawIcicle(icicleMetric.value));
  drawIcicle('bytes');

  // Threads.
  const th = data.threads;
  chart('chart-threads', { type: 'bar',
    data: { labels: th.threads.map(x => 'T' + x.thread + (x.tid ? ' (tid ' + x.tid + ')' : '')), datasets: [
      { label: 'allocations', data: th.threads.map(x => x.allocations), backgroundColor: color(0) },
      { label: 'releases', data: th.threads.map(x => x.releases), backgroundColor: color(1) }] },
    options: { plugins: { title: title('Allocations and releases per thread') },
      scales: { y: { beginAtZero: true, title: title('calls') } } } });
  chart('chart-cross', { type: 'bar',
    data: { labels: th.cross.map(c => 'T' + c[0] + ' \u2192 T' + c[1]),
            datasets: [{ label: 'cross-thread frees', data: th.cross.map(c => c[2]), backgroundColor: color(2) }] },
    options: { plugins: { title: title(th.cross.length ? 'Frees by another thread (allocating \u2192 releasing)'
                                                       : 'No cross-thread frees') },
      scales: { y: { beginAtZero: true, title: title('releases') } } } });

  // Simulated DMMs compared (the DMM simulator paper's Figures 5-8).
  const withNorm = data.dmms.filter(d => d.normalized_to_kng);
  if (data.dmms.length) {
    document.getElementById('dmms').hidden = false;
    const metrics = [['time_complexity', 'time complexity'], ['memory_accesses', 'memory accesses'],
                     ['memory_usage', 'memory usage'], ['energy', 'energy']];
    chart('chart-dmms', { type: 'bar',
      data: { labels: metrics.map(m => m[1]), datasets: withNorm.map((d, i) => ({ label: d.name,
        data: metrics.map(m => d.normalized_to_kng[m[0]]), backgroundColor: color(i) })) },
      options: { plugins: { title: title(withNorm.length ? 'Kingsley / DMM (higher is better)'
                                                          : 'Add kng to --dmm to normalize') },
        scales: { y: { beginAtZero: true, title: title('normalized to Kingsley') } } } });
    const dt = document.getElementById('dmms-table');
    const hr = el('tr');
    ['DMM', 'steps', 'memory accesses', 'memory usage', 'energy (mJ)', 'internal frag.', 'external frag.']
      .forEach(h => hr.append(el('th', h)));
    dt.append(hr);
    for (const d of data.dmms) {
      const tr = el('tr');
      [d.name, count(d.steps), count(d.memory_accesses), bytes(d.memory_usage_bytes), (d.energy_nj / 1e6).toFixed(3),
       bytes(d.internal_fragmentation_bytes), bytes(d.external_fragmentation_bytes)].forEach(v => tr.append(el('td', v)));
      dt.append(tr);
    }
  }

  // The found DMM (the DMM simulator paper's Table 4) and the fitness over generations.
  if (data.search) {
    const sr = data.search;
    document.getElementById('search').hidden = false;
    const n = sr.normalized_to_kng;
    const pct = v => (100 * (1 - v)).toFixed(1) + '%';
    document.getElementById('search-note').textContent = count(sr.evaluations) + ' evaluations in ' +
      sr.seconds.toFixed(1) + ' s. Improvement over Kingsley: fitness ' + pct(n.fitness) + ', time ' + pct(n.time) +
      ', memory ' + pct(n.memory) + ', energy ' + pct(n.energy) + '.';
    const ft = document.getElementById('found-table');
    const hr = el('tr');
    ['sizes', 'mechanism', 'structure', 'fit', 'policy', 'classes', 'split', 'coalesce', 'alignment', 'chunk',
     'returns'].forEach(h => hr.append(el('th', h)));
    ft.append(hr);
    for (const a of sr.found.allocators) {
      const tr = el('tr');
      const classes = a.classes === undefined ? '-' : Array.isArray(a.classes) ? a.classes.join(', ') : a.classes;
      ['(' + a.sizes.min + ', ' + (a.sizes.max === null ? '\u221e' : a.sizes.max) + ']', a.mechanism, a.structure,
       a.fit, a.policy, classes, a.split ? 'yes' : 'no', a.coalesce ? 'yes' : 'no', a.alignment, a.system.chunk,
       a.system.returns ? 'yes' : 'no'].forEach(v => tr.append(el('td', String(v))));
      ft.append(tr);
    }
    chart('chart-fitness', { type: 'line',
      data: { datasets: [{ label: 'best weighted fitness (normalized to Kingsley, lower is better)',
        data: sr.history.map(h => ({ x: h[0], y: h[1] })), borderColor: color(4), pointRadius: 0, stepped: true }] },
      options: { parsing: false, plugins: { title: title('Fitness over generations') },
        scales: { x: { type: 'linear', title: title('generation') }, y: { title: title('fitness') } } } });
  }

  // Heap map.
  if (data.dmms.length && data.moments.length) {
    document.getElementById('heap').hidden = false;
    const dmmSelect = document.getElementById('heap-dmm'), momentSelect = document.getElementById('heap-moment');
    data.dmms.forEach((d, i) => dmmSelect.append(new Option(d.name, i)));
    data.moments.forEach((m, i) => momentSelect.append(new Option(m.label + ' (operation ' + count(m.operation) + ')', i)));
    const drawHeap = () => {
      const map = data.dmms[dmmSelect.value].heap_maps[momentSelect.value];
      document.getElementById('heap-note').textContent = bytes(map.held_bytes) + ' held in ' + map.regions +
        ' region(s); ' + count(map.live_blocks) + ' live blocks of ' + bytes(map.block_bytes) + ' (' +
        bytes(map.requested_bytes) + ' requested): ' + (map.held_bytes ? (100 * map.block_bytes / map.held_bytes).toFixed(1) : '0') +
        '% of held memory in blocks. One cell is ' + bytes(map.cell_bytes) + ', one row ' + bytes(map.row_bytes) + '.';
      const rows = Array.from({ length: Math.max(1, map.rows) }, (_, r) => bytes(r * map.row_bytes));
      const classes = [...new Set(map.runs.map(r => r[3]))].sort((a, b) => a - b);
      const datasets = classes.map((c, i) => ({ label: '\u2264 ' + bytes(Math.pow(2, c)),
        data: map.runs.filter(r => r[3] === c).map(r => ({ y: rows[r[0]], x: [r[1], r[2]] })),
        backgroundColor: `hsl(${(i * 360 / Math.max(1, classes.length)) | 0}, 65%, 55%)`, barPercentage: 1,
        categoryPercentage: 1, grouped: false, borderSkipped: false }));
      if (charts['chart-heap']) charts['chart-heap'].destroy();
      chart('chart-heap', { type: 'bar', data: { labels: rows, datasets: datasets },
        options: { indexAxis: 'y', plugins: { title: title('block size classes'),
            tooltip: { callbacks: { label: c => c.dataset.label + ' blocks, row bytes ' + bytes(c.raw.x[0]) + ' to ' + bytes(c.raw.x[1]) } } },
          scales: { x: { min: 0, max: map.row_bytes, title: title('offset in row'), ticks: { callback: v => bytes(v) } },
                    y: { title: title('row start (held bytes)') } } } });
    };
    dmmSelect.addEventListener('change', drawHeap);
    momentSelect.addEventListener('change', drawHeap);
    drawHeap();
  }

  window.tailorReport = Object.assign(window.tailorReport || {}, { charts: Object.keys(charts), renderMs: performance.now() - started });
  document.body.dataset.rendered = String(Object.keys(charts).length);
})();
