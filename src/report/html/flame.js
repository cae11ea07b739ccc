// The flame graph (report/html_page.cc's FlameBody): an icicle of the profile's call tree,
// zoom, regex search, the sandwich, and a differential graph's colours.
document.querySelectorAll('.flame').forEach(function(box) {
  // The profile's call tree as an icicle: the root on top, each frame as wide as its
  // share of the chosen value. A click zooms into a frame (its ancestors stay above, to
  // click back up); search marks the frames whose names match and their share.
  var data = JSON.parse(box.querySelector('script').textContent);
  var graph = box.querySelector('.graph'), info = box.querySelector('.info');
  var select = box.querySelector('select.type'), search = box.querySelector('input');
  var match = box.querySelector('.match'), reset = box.querySelector('button'), chains = box.querySelector('.chain');
  var n = data.parent.length, kids = [];
  for (var i = 0; i < n; i++) kids.push([]);
  for (i = 1; i < n; i++) kids[data.parent[i]].push(i);
  kids.forEach(function(k) {
    k.sort(function(a, b) {
      return data.names[data.name[a]] < data.names[data.name[b]] ? -1 : 1;
    });
  });
  var type = 0, root = 0, rowH = 18, maxRows = 160;
  function fmt(v) {  // as the tables write them (format.js)
    var u = data.units[type];
    return u === 'nanoseconds' ? t2pDuration(v) : u === 'bytes' ? t2pBytes(v) : String(v);
  }
  function name(i) {
    return i === 0 ? 'all' : data.names[data.name[i]];
  }
  // As the tables write names: kernels without their argument lists, paths cut to …/a/b.py.
  function label(i) {
    return i === 0 ? 'all' : (data.labels && data.labels[data.name[i]]) || data.names[data.name[i]];
  }
  // pprof's -focus syntax (a regular expression, case-insensitive), else the plain text.
  function matcher(q) {
    if (!q) return null;
    try {
      var re = new RegExp(q, 'i');
      return function(s) {
        return re.test(s);
      };
    } catch (e) {
      q = q.toLowerCase();
      return function(s) {
        return s.toLowerCase().indexOf(q) >= 0;
      };
    }
  }
  function hit(m, i) {
    return m && i !== 0 && (m(name(i)) || m(label(i)));
  }
  // A differential graph (compare): red where the new run spends more than the base, blue
  // less, deeper with the share of the change; grey where it is under 0.1% of the root.
  var side = box.querySelector('select.side');
  function values(t, other) {
    return data.base && (side.value === 'base') !== !!other ? data.base[t] : data.total[t];
  }
  function change(i) {
    var b = data.base[type][i], n = data.total[type][i];
    return fmt(b) + ' \u2192 ' + fmt(n) + ' (' + (n >= b ? '+' : '\u2212') + fmt(Math.abs(n - b)) +
        (b ? ', ' + (n >= b ? '+' : '') + (100 * (n - b) / b).toFixed(1) + '%' : ', new') + ')';
  }
  function color(i) {
    if (data.base) {
      var b = data.base[type][i], n = data.total[type][i], m = Math.max(b, n);
      var root = Math.max(data.base[type][0], data.total[type][0]);
      if (!m || Math.abs(n - b) < 0.001 * root) return 'hsl(0,0%,86%)';
      var r = Math.min(Math.abs(n - b) / m, 1);
      return n > b ? 'hsl(0,80%,' + (88 - 38 * r) + '%)' : 'hsl(215,80%,' + (88 - 38 * r) + '%)';
    }
    var s = name(i), h = 0;
    for (var k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) >>> 0;
    if (/\.py:\d+$/.test(s)) return 'hsl(' + (200 + h % 40) + ',60%,' + (72 + h % 12) + '%)';
    if (/^\[/.test(s)) return 'hsl(0,0%,' + (78 + h % 10) + '%)';
    return 'hsl(' + (20 + h % 40) + ',75%,' + (68 + h % 14) + '%)';
  }
  // The sandwich: every frame matching the search (the outermost where one holds
  // another), merged into one row; above it their callers, merged by name up to the
  // root (the nearest caller first), below them their callees merged down. Its row is a
  // function's total over all its callers, as pprof's -peek gives it.
  var sandwich = box.querySelector('.sandwich');
  function merged(tot, roots, up) {
    var top = {label: '', title: '', v: 0, kids: {}, order: []};
    function child(node, i) {
      var key = name(i), c = node.kids[key];
      if (!c) {
        c = node.kids[key] = {label: label(i), title: name(i), v: 0, kids: {}, order: [], first: i};
        node.order.push(c);
      }
      return c;
    }
    roots.forEach(function(r) {
      top.v += tot[r];
      if (up) {
        for (var a = data.parent[r], cur = top; a !== 0; a = data.parent[a]) {
          cur = child(cur, a);
          cur.v += tot[r];
        }
      } else {
        (function down(i, cur) {
          kids[i].forEach(function(c) {
            if (tot[c] > 0) {
              var k = child(cur, c);
              k.v += tot[c];
              down(c, k);
            }
          });
        })(r, top);
      }
    });
    return top;
  }
  function depthOf(node) {
    var d = 0;
    node.order.forEach(function(c) {
      d = Math.max(d, 1 + depthOf(c));
    });
    return d;
  }
  function drawSandwich(tot, m) {
    var roots = [];
    (function find(i) {
      if (tot[i] > 0 && hit(m, i)) {
        roots.push(i);
        return;
      }
      kids[i].forEach(find);
    })(0);
    var callers = merged(tot, roots, true), callees = merged(tot, roots, false);
    var up = Math.min(depthOf(callers), maxRows), width = graph.clientWidth || 1000,
        frag = document.createDocumentFragment();
    var names = {};
    roots.forEach(function(r) {
      names[label(r)] = 1;
    });
    function div(node, x, w, row, text) {
      var d = document.createElement('div');
      d.className = 'f';
      d.style.left = x + 'px';
      d.style.width = Math.max(w, 1) + 'px';
      d.style.top = row * rowH + 'px';
      d.style.background = node.first !== undefined ? color(node.first) : 'hsl(45,90%,70%)';
      d.textContent = w > 14 ? text : '';
      d.title = (node.title || text) + '\n' + fmt(node.v) + ' (' +
          (callers.v ? (100 * node.v / callers.v).toFixed(1) : '0') + '% of the matches)';
      if (node.first !== undefined) d.dataset.name = node.title;
      frag.appendChild(d);
    }
    function lay(node, x, w, row, dir, depth) {
      if (depth > maxRows) return;
      var cx = x;
      node.order.forEach(function(c) {
        var cw = node.v ? w * c.v / node.v : 0;
        if (cw >= 1) {
          div(c, cx, cw, row + dir, c.label);
          lay(c, cx, cw, row + dir, dir, depth + 1);
        }
        cx += cw;
      });
    }
    div(callers, 0, width, up,
        roots.length + ' frames matching: ' + Object.keys(names).slice(0, 3).join(', ') + ' \u2014 ' + fmt(callers.v));
    lay(callers, 0, width, up, -1, 1);
    lay(callees, 0, width, up, 1, 1);
    graph.textContent = '';
    graph.appendChild(frag);
    var rows = up + 1 + Math.min(depthOf(callees), maxRows);
    graph.style.height = rows * rowH + 2 + 'px';
    graph.dataset.root = 'sandwich';
    graph.dataset.frames = graph.childNodes.length;
    graph.dataset.sandwich = callers.v;
    match.textContent = roots.length + ' matching frames hold ' + fmt(callers.v) + ' (' +
        (tot[0] ? (100 * callers.v / tot[0]).toFixed(1) : '0') + '% of ' + data.types[type] +
        '): their callers above, their callees below';
    info.textContent = 'Click a caller or callee for its own sandwich.';
  }
  function draw() {
    var tot = values(type), q = search.value.trim(), m = matcher(q);
    if (m && sandwich && sandwich.checked) return drawSandwich(tot, m);
    var width = graph.clientWidth || 1000, frag = document.createDocumentFragment(), rows = 0;
    var path = [], hits = 0, hitSum = 0;
    for (var a = root;; a = data.parent[a]) {
      path.unshift(a);
      if (a === 0) break;
    }
    function box(i, x, w, depth, up, chain) {
      var d = document.createElement('div');
      d.className = 'f' + (up ? ' up' : '');
      d.style.left = x + 'px';
      d.style.width = Math.max(w, 1) + 'px';
      d.style.top = depth * rowH + 'px';
      d.style.background = color(i);
      d.textContent = w > 14 ? (chain ? chain.map(label).join(' \u203a ') : label(i)) : '';
      d.dataset.node = i;
      if (chain) d.dataset.zoom = chain[chain.length - 1];
      var share = tot[0] ? (100 * tot[i] / tot[0]).toFixed(2) : '0';
      d.title = (chain ? chain.map(name).join('\n') : name(i)) + '\n' + (data.base ? change(i) + '\n' : '') +
          fmt(tot[i]) + ' (' + share + '% of all' +
          (i ? ', ' + (tot[data.parent[i]] ? (100 * tot[i] / tot[data.parent[i]]).toFixed(1) : '0') +
                   '% of its caller' :
               '') +
          ')';
      if (hit(m, i)) d.className += ' hit';
      frag.appendChild(d);
      rows = Math.max(rows, depth + 1);
    }
    path.forEach(function(a, depth) {
      if (a !== root) box(a, 0, width, depth, true);
    });
    var base = path.length - 1;
    function walk(i, x, w, depth) {
      if (w < 1 || depth - base >= maxRows) return;
      box(i, x, w, depth, false);
      var cx = x;
      kids[i].forEach(function(c) {
        var cw = tot[root] ? w * tot[c] / tot[i] : 0;
        if (tot[c] > 0) walk(c, cx, cw, depth + 1);
        cx += cw;
      });
    }
    if (m) {  // every match in the tree holding some of this value, drawn or not; one nested in another counts once
      (function count(i, under) {
        var h = tot[i] > 0 && hit(m, i);
        if (h && !under) {
          hits++;
          hitSum += tot[i];
        }
        kids[i].forEach(function(c) {
          count(c, under || h);
        });
      })(0, false);
    }
    // From the frame shown at the top down to the first branch, a chain of frames with
    // one caller each (all -> <module> -> train -> ProfilerStep -> ...) is one row.
    var chain = [root];
    if (chains && chains.checked) {
      for (;;) {
        var live = kids[chain[chain.length - 1]].filter(function(c) {
          return tot[c] > 0;
        });
        if (live.length !== 1 || tot[live[0]] !== tot[chain[chain.length - 1]]) break;
        chain.push(live[0]);
      }
    }
    if (chain.length > 1) {
      var last = chain[chain.length - 1], cx = 0;
      box(root, 0, width, base, false, chain);
      kids[last].forEach(function(c) {
        var cw = tot[last] ? width * tot[c] / tot[last] : 0;
        if (tot[c] > 0) walk(c, cx, cw, base + 1);
        cx += cw;
      });
    } else {
      walk(root, 0, width, base);
    }
    graph.textContent = '';
    graph.appendChild(frag);
    graph.style.height = rows * rowH + 2 + 'px';
    graph.dataset.root = root;
    graph.dataset.frames = graph.childNodes.length;
    match.textContent = q ? hits + ' matching frames hold ' + fmt(hitSum) + ' (' +
            (tot[0] ? (100 * hitSum / tot[0]).toFixed(1) : '0') + '% of ' + data.types[type] + ')' :
                            '';
    info.textContent = label(root) + ': ' + fmt(tot[root]) + ' of ' + fmt(tot[0]) + ' ' + data.types[type] +
        (data.base ? '; base \u2192 new: ' + change(root) : '');
  }
  function exactly(text) {
    return '^' + text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
  }
  // A second click within 400 ms (a double click; the first one has redrawn the graph,
  // so the browser sees no dblclick): the sandwich of the frame first clicked, all its
  // callers and callees.
  var last = {t: 0, node: -1, root: 0};
  graph.addEventListener('click', function(e) {
    var d = e.target.closest('.f');
    if (!d) return;
    if (graph.dataset.root === 'sandwich') {
      if (d.dataset.name) {
        search.value = exactly(d.dataset.name);
        draw();
      }
      return;
    }
    var now = Date.now();
    if (sandwich && now - last.t < 400) {  // the frame first clicked: the redraw may have moved it
      root = last.root;
      search.value = exactly(name(last.node));
      sandwich.checked = true;
      last.t = 0;
      draw();
      return;
    }
    last = {t: now, node: +d.dataset.node, root: root};
    root = +(d.dataset.zoom || d.dataset.node);
    draw();
  });
  // A right click: the same, at once (no timing to meet).
  graph.addEventListener('contextmenu', function(e) {
    var d = e.target.closest('.f');
    if (!d || !sandwich || graph.dataset.root === 'sandwich') return;
    e.preventDefault();
    search.value = exactly(name(+d.dataset.node));
    sandwich.checked = true;
    draw();
  });
  if (sandwich) sandwich.addEventListener('change', draw);
  select.addEventListener('change', function() {
    type = +select.value;
    root = 0;
    draw();
  });
  if (side) side.addEventListener('change', draw);
  search.addEventListener('input', draw);
  if (chains) chains.addEventListener('change', draw);
  reset.addEventListener('click', function() {
    root = 0;
    search.value = '';
    draw();
  });
  // Links elsewhere on the page to a frame under the root ("rank 2"): zoom there.
  document.querySelectorAll('a.flame-root').forEach(function(a) {
    a.addEventListener('click', function() {
      kids[0].forEach(function(c) {
        if (name(c) === a.dataset.frame) root = c;
      });
      if (sandwich) sandwich.checked = false;
      draw();
    });
  });
  box.querySelector('.tools').hidden = false;
  draw();
});
