// Live updates for ironbench view pages: progressive enhancement over server-rendered HTML.
// The server pushes the store's events (server-sent events, `id:` = sequence number); the
// browser resumes a dropped stream from the last id it saw (Last-Event-ID), exactly.
(function () {
  var body = document.body, url = body.getAttribute('data-stream');
  var state = document.getElementById('live-state');
  var seen = {}, view = window.ironbenchView = {seqs: [], repeats: 0, last: Number(body.getAttribute('data-after') || 0)};
  var pending = body.hasAttribute('data-pending');
  // A comparison still being rendered: the page asks again (a run's page fetches its sections).
  if (pending && !url) { setTimeout(function () { location.reload(); }, 1500); return; }
  if (!url || !window.EventSource) return;
  var facts = document.getElementById('facts'), refreshing = false, lastRefresh = Date.now(), decisions = null;
  var status = document.getElementById('run-status');
  function show(on, text) { if (state) { state.className = 'live-state ' + (on ? 'on' : 'off'); state.textContent = text; } }
  function parse(html) { var t = document.createElement('template'); t.innerHTML = html; return t.content.firstElementChild; }
  // What arrives is shown a few times a second, not message by message: a run of no-op
  // invocations sends dozens a second, and each change of the page costs the browser a frame.
  var arrived = [], progressed = {}, flushing = false;
  function later() { if (!flushing) { flushing = true; setTimeout(flush, 250); } }
  function flush() {
    flushing = false;
    if (facts && arrived.length) {
      var batch = document.createDocumentFragment(), now = String(Date.now());
      for (var i = arrived.length - 1; i >= 0; i--) {
        var item = parse(arrived[i]); item.setAttribute('data-shown', now); batch.appendChild(item);
      }
      facts.insertBefore(batch, facts.firstChild);
      while (facts.children.length > 500) facts.removeChild(facts.lastChild);
    }
    arrived = [];
    var runs = progressed; progressed = {};
    Object.keys(runs).forEach(function (run) { showProgress(runs[run]); });
  }
  function onFact(e) {
    var d = JSON.parse(e.data);
    if (seen[d.seq]) { view.repeats++; return; }
    seen[d.seq] = true; view.seqs.push(d.seq); view.last = Math.max(view.last, d.seq);
    arrived.push(d.html); later();
  }
  function refresh(pace) {
    // The report's sections, rendered again by the server, at most every `pace` seconds.
    if (refreshing || Date.now() - lastRefresh < pace * 1000) return;
    refreshing = true; lastRefresh = Date.now();
    fetch(url.replace(/\/stream$/, '/sections'), {credentials: 'same-origin'}).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      var main = document.getElementById('report');
      if (html !== null && main) {
        var open = {};
        main.querySelectorAll('details[open]').forEach(function (x, i) { open[i] = true; });
        main.innerHTML = html;
        main.querySelectorAll('details').forEach(function (x, i) { if (open[i]) x.open = true; });
        if (pending) {  // the report arrived after the page: its sections join the navigation
          pending = false; body.removeAttribute('data-pending');
          var nav = document.querySelector('nav');
          if (nav) main.querySelectorAll('section[id]').forEach(function (s) {
            if (s.id === 'drill') return;  // linked already, last
            var h = s.querySelector('h2'), a = document.createElement('a');
            a.href = '#' + s.id; a.textContent = h ? h.textContent : s.id; nav.insertBefore(a, nav.lastElementChild);
          });
        }
        var again = document.createElement('script'); again.src = '/static/report.js'; body.appendChild(again);
      }
    }).finally(function () { refreshing = false; lastRefresh = Date.now(); });
  }
  function onProgress(e) {
    var d = JSON.parse(e.data);
    view.last = Math.max(view.last, Number(e.lastEventId || 0));
    progressed[d.run] = d; later();
  }
  function showProgress(d) {
    var row = document.querySelector('tr[data-run="' + CSS.escape(d.run) + '"]');
    if (row) row.replaceWith(parse(d.row));
    else if (body.getAttribute('data-page') === 'runs' && !body.hasAttribute('data-filtered')) {
      var tbody = document.querySelector('#runs tbody');
      if (tbody) tbody.insertBefore(parse(d.row), tbody.firstChild);
    }
    if (body.getAttribute('data-run') !== d.run) return;
    var bar = document.getElementById('progress');
    if (bar) { if (d.planned) bar.max = d.planned; bar.value = d.done; }
    var text = document.getElementById('progress-text'); if (text) text.textContent = d.text;
    if (status) { status.textContent = d.status; status.className = 'badge s-' + d.status; }
    if (decisions !== null && (d.decisions !== decisions || d.status !== 'running')) refresh(d.status === 'running' ? d.pace : 0);
    decisions = d.decisions;
  }
  function connect(after) {
    if (view.source) view.source.close();
    var source = new EventSource(url + '?after=' + after);
    source.addEventListener('open', function () { show(true, 'live'); });
    source.addEventListener('fact', onFact);
    source.addEventListener('progress', onProgress);
    source.addEventListener('error', function () {
      if (view.source !== source) return;
      show(false, 'reconnecting…');
      // The browser retries by itself, sending Last-Event-ID; a stream it gave up on starts again here.
      if (source.readyState === EventSource.CLOSED) setTimeout(function () {
        if (view.source === source && !document.hidden) connect(view.last);
      }, 2000);
    });
    view.source = source;
  }
  // A browser keeps at most six connections to one server (HTTP/1.1), whatever the tabs: a
  // hidden tab gives its stream back, and catches up from the last event it saw when shown.
  document.addEventListener('visibilitychange', function () {
    if (document.hidden && view.source) { view.source.close(); view.source = null; show(false, 'paused'); }
    else if (!document.hidden && !view.source) connect(view.last);
  });
  if (document.hidden) show(false, 'paused'); else connect(view.last);
  if (pending) refresh(0);
})();
