// The step timeline (html_report.cc's TimelineBody), drawn on a canvas.
document.querySelectorAll('.timeline').forEach(function(box) {
  // One step at a time on a canvas: a lane per thread and stream (nested calls in rows),
  // the critical path on a lane of its own and drawn over the lanes it crosses, the
  // streams' gaps shaded by cause. Wheel or the buttons zoom, a drag pans, a click on a
  // lane's name shows all its rows; hovering names what is under the pointer.
  var data = JSON.parse(box.querySelector('script').textContent);
  var select = box.querySelector('select'), view = box.querySelector('.view'), canvas = box.querySelector('canvas');
  var info = box.querySelector('.info'), scope = box.querySelector('.scope'), ctx = canvas.getContext('2d');
  var LABEL = 200, ROW = 14, RULER = 18, CRIT = 16, MAXROWS = 6;
  // The colours are the legend's, written once (TimelineBody): after its first heading the
  // bounds' swatches, after its second the idle causes'.
  var bound = [], cause = [], into = null;
  box.querySelectorAll('.legend > span').forEach(function(span) {
    var swatch = span.querySelector('i');
    if (!swatch) {
      into = into ? cause : bound;
    } else {
      into.push(swatch.style.background);
    }
  });
  var s, v0, v1, lanes, total, index, expanded = {}, drag = null, W = 1000;
  var fmt = t2pDuration;  // as the tables write durations (format.js)
  function label(n) {
    return (s.labels[n] || s.names[n]) || '(no event open)';
  }
  function load(i) {
    s = data.steps[i];
    v0 = 0;
    v1 = s.length;
    expanded = {};
    // bars by (lane, depth): their first index, for the hit test's search
    index = {};
    for (var k = 0; k < s.bars.length; k += 6) {
      var key = s.bars[k] + ':' + s.bars[k + 1];
      if (!(key in index)) index[key] = [k, k];
      index[key][1] = k + 6;
    }
    box.dataset.step = s.step;
    scope.textContent = s.step + ': ' + fmt(s.length) + ', ' + s.events + ' events on ' + s.lanes.length + ' lanes' +
        (s.left_out ? ' (' + s.left_out + ' more lanes with the fewest events not drawn)' : '') +
        (s.merged ? '; ' + s.merged +
                 ' events too short to see at the closest zoom are drawn merged, a bar that says how many' :
                    '');
    layout();
    draw();
  }
  function layout() {
    var y = RULER + CRIT + 6;
    lanes = [];
    s.lanes.forEach(function(l, i) {
      var rows = Math.max(1, expanded[i] ? l[2] : Math.min(l[2], MAXROWS));
      lanes.push({y: y, rows: rows, h: rows * ROW + 6});
      y += rows * ROW + 6;
    });
    total = y;
  }
  function X(t) {
    return LABEL + (t - v0) / (v1 - v0) * (W - LABEL);
  }
  function T(x) {
    return v0 + (x - LABEL) / (W - LABEL) * (v1 - v0);
  }
  function color(n, device) {
    var str = s.names[n], h = 0;
    for (var k = 0; k < str.length; k++) h = (h * 31 + str.charCodeAt(k)) >>> 0;
    return device ? 'hsl(' + (20 + h % 35) + ',75%,' + (62 + h % 14) + '%)' :
                    'hsl(' + (200 + h % 40) + ',55%,' + (68 + h % 14) + '%)';
  }
  function text(str, x, y, w) {
    if (w < 24) return;
    var n = Math.floor((w - 4) / 6);
    ctx.fillText(str.length > n ? str.slice(0, Math.max(n - 1, 1)) + '\u2026' : str, x + 2, y);
  }
  function draw() {
    W = view.clientWidth || 1000;
    var dpr = window.devicePixelRatio || 1;
    canvas.width = W * dpr;
    canvas.height = total * dpr;
    canvas.style.height = total + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, total);
    ctx.font = '10.5px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    var drawn = 0, crossings = 0;
    // the ruler: ticks at a round step of time
    var span = v1 - v0, tick = Math.pow(10, Math.floor(Math.log10(span / 8)));
    if (span / tick > 16)
      tick *= 5;
    else if (span / tick > 8)
      tick *= 2;
    ctx.fillStyle = '#6b6b70';
    for (var t = Math.ceil(v0 / tick) * tick; t <= v1; t += tick) {
      ctx.fillRect(X(t), 0, 1, RULER - 4);
      ctx.fillText(fmt(t), X(t) + 3, 7);
    }
    ctx.fillStyle = '#1d1d1f';
    ctx.fillText('critical path', 6, RULER + CRIT / 2);
    lanes.forEach(function(L, i) {
      ctx.fillStyle = i % 2 ? '#fbfbfc' : '#f3f4f7';
      ctx.fillRect(0, L.y - 3, W, L.h);
      ctx.fillStyle = '#1d1d1f';
      var l = s.lanes[i], more = l[2] > L.rows ? ' [+' + (l[2] - L.rows) + ']' : '';
      text(l[0] + more, 2, L.y + ROW / 2, LABEL - 6);
    });
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL, 0, W - LABEL, total);
    ctx.clip();
    for (var k = 0; k < s.gaps.length; k += 5) {
      if (s.gaps[k + 2] < v0 || s.gaps[k + 1] > v1) continue;
      var L = lanes[s.gaps[k]], x = X(s.gaps[k + 1]);
      ctx.fillStyle = cause[s.gaps[k + 3]];
      ctx.fillRect(x, L.y - 3, Math.max(X(s.gaps[k + 2]) - x, 1), L.h);
    }
    for (k = 0; k < s.bars.length; k += 6) {
      var b = s.bars, L2 = lanes[b[k]];
      if (b[k + 3] < v0 || b[k + 2] > v1 || b[k + 1] >= L2.rows) continue;
      var x0 = X(b[k + 2]), w = Math.max(X(b[k + 3]) - x0, 1), y = L2.y + b[k + 1] * ROW;
      ctx.fillStyle = b[k + 5] > 1 ? '#c9ccd3' : color(b[k + 4], s.lanes[b[k]][1]);
      ctx.fillRect(x0, y, w, ROW - 1);
      ctx.fillStyle = '#1d1d1f';
      text(b[k + 5] > 1 ? b[k + 5] + ' events' : label(b[k + 4]), x0, y + ROW / 2, w);
      drawn++;
    }
    // the critical path: its lane, coloured by what bounds it, then a line over the lanes
    // (a crossing drawn within 3 px of the last one would only thicken it)
    var c = s.critical, prev = null, lastX = -10;
    for (k = 0; k < c.length; k += 6) {
      if (c[k + 2] < v0 || c[k + 1] > v1) {
        prev = null;
        continue;
      }
      var a = X(c[k + 1]), e = Math.max(X(c[k + 2]), a + 1), ly = lanes[c[k]].y - 2;
      ctx.fillStyle = bound[c[k + 3]];
      ctx.fillRect(a, RULER, e - a, CRIT);
      ctx.fillStyle = '#d62728';
      ctx.fillRect(a, ly, e - a, 3);
      if (prev !== null && prev !== c[k]) {
        crossings++;
        if (a - lastX >= 3) {
          ctx.globalAlpha = 0.7;
          ctx.fillRect(a, Math.min(ly, lanes[prev].y - 2), 1, Math.abs(ly - lanes[prev].y + 2) + 3);
          ctx.globalAlpha = 1;
          lastX = a;
        }
      }
      prev = c[k];
    }
    ctx.restore();
    view.dataset.drawn = drawn;
    view.dataset.crossings = crossings;
    view.dataset.view = Math.round(v0) + '-' + Math.round(v1);
  }
  // What is under (x, y): a bar, a gap, a stretch of the critical path.
  function at(x, y) {
    var t = T(x), k;
    if (y >= RULER && y < RULER + CRIT) {
      if (x < LABEL) return null;
      for (k = 0; k < s.critical.length; k += 6)
        if (s.critical[k + 1] <= t && t < s.critical[k + 2]) return {kind: 'critical', k: k};
      return null;
    }
    for (var i = 0; i < lanes.length; i++) {
      var L = lanes[i];
      if (y < L.y - 3 || y >= L.y - 3 + L.h) continue;
      if (x < LABEL) return {kind: 'lane', i: i};
      var depth = Math.floor((y - L.y) / ROW), r = index[i + ':' + depth], slop = 3 * (v1 - v0) / (W - LABEL);
      if (r && depth >= 0) {
        var lo = r[0] / 6, hi = r[1] / 6;  // the last bar starting at or before t + slop
        while (lo < hi) {
          var mid = (lo + hi) >> 1;
          if (s.bars[mid * 6 + 2] <= t + slop)
            lo = mid + 1;
          else
            hi = mid;
        }
        for (k = (lo - 1) * 6; k >= r[0] && k > (lo - 4) * 6; k -= 6)
          if (s.bars[k + 3] >= t - slop) return {kind: 'bar', k: k};
      }
      for (k = 0; k < s.gaps.length; k += 5)
        if (s.gaps[k] === i && s.gaps[k + 1] <= t && t < s.gaps[k + 2]) return {kind: 'gap', k: k};
      return {kind: 'lane', i: i};
    }
    return null;
  }
  function describe(h) {
    if (!h) return '';
    var k = h.k, b = s.bars, g = s.gaps, c = s.critical;
    if (h.kind === 'bar') {
      return (b[k + 5] > 1 ? b[k + 5] + ' events too short to draw, the longest ' + s.names[b[k + 4]] :
                             s.names[b[k + 4]]) +
          '\n' + fmt(b[k + 3] - b[k + 2]) + ' at ' + fmt(b[k + 2]) + ' on ' + s.lanes[b[k]][0];
    }
    if (h.kind === 'gap') {
      return s.lanes[g[k]][0] + ' idle ' + fmt(g[k + 2] - g[k + 1]) + ' at ' + fmt(g[k + 1]) + ': ' +
          data.causes[g[k + 3]] + (g[k + 4] ? '\nthe critical path was in ' + s.names[g[k + 4]] : '');
    }
    if (h.kind === 'critical') {
      return 'critical path: ' + data.bounds[c[k + 3]] + ', ' + fmt(c[k + 2] - c[k + 1]) + ' at ' + fmt(c[k + 1]) +
          ' on ' + s.lanes[c[k]][0] + '\n' + (c[k + 5] > 1 ? c[k + 5] + ' stretches, the longest in ' : 'in ') +
          (c[k + 4] ? s.names[c[k + 4]] : '(no event open on the thread)');
    }
    return s.lanes[h.i][0] +
        (s.lanes[h.i][2] > lanes[h.i].rows ? ': click its name for all ' + s.lanes[h.i][2] + ' rows' : '');
  }
  function zoom(f, t) {
    var min = Math.max(s.length / 40000 * 50, 1000), span = Math.min(Math.max((v1 - v0) * f, min), s.length);
    v0 = Math.min(Math.max(t - (t - v0) * span / (v1 - v0), 0), s.length - span);
    v1 = v0 + span;
    draw();
  }
  function pos(e) {
    var r = canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }
  canvas.addEventListener('wheel', function(e) {
    var p = pos(e);
    if (p[0] < LABEL) return;
    e.preventDefault();
    zoom(Math.exp(e.deltaY * 0.002), T(p[0]));
  }, {passive: false});
  canvas.addEventListener('mousedown', function(e) {
    var p = pos(e);
    drag = {x: p[0], v0: v0, moved: false};
  });
  window.addEventListener('mouseup', function() {
    setTimeout(function() {
      drag = null;
    }, 0);
  });
  canvas.addEventListener('mousemove', function(e) {
    var p = pos(e);
    if (drag && e.buttons === 1 && p[0] >= LABEL) {
      var d = (p[0] - drag.x) / (W - LABEL) * (v1 - v0);
      if (Math.abs(p[0] - drag.x) > 2) drag.moved = true;
      var span = v1 - v0;
      v0 = Math.min(Math.max(drag.v0 - d, 0), s.length - span);
      v1 = v0 + span;
      draw();
      return;
    }
    info.textContent = describe(at(p[0], p[1]));
  });
  canvas.addEventListener('click', function(e) {
    var p = pos(e);
    if (drag && drag.moved) return;
    var h = at(p[0], p[1]);
    if (h && h.kind === 'lane' && p[0] < LABEL) {
      expanded[h.i] = !expanded[h.i];
      layout();
      draw();
    }
    info.textContent = describe(h);
  });
  box.querySelectorAll('button').forEach(function(btn) {
    btn.addEventListener('click', function() {
      var f = btn.dataset.zoom;
      if (f === 'reset') {
        v0 = 0;
        v1 = s.length;
        draw();
      } else
        zoom(+f, (v0 + v1) / 2);
    });
  });
  select.addEventListener('change', function() {
    load(+select.value);
  });
  window.addEventListener('resize', function() {
    draw();
  });
  box.querySelector('.tools').hidden = false;
  load(0);
});
