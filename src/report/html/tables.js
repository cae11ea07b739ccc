// Sorting, filtering and "show all" for the tables: the rows are all in the page, the
// ones past -top hidden until asked for.
document.querySelectorAll('.tbl.sortable').forEach(function(box) {
  var table = box.querySelector('table'), body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows), heads = table.tHead.rows[0].cells;
  var filter = box.querySelector('input'), more = box.querySelector('button.more');
  var count = box.querySelector('.count'), top = +box.dataset.top || rows.length;
  var limit = top, col = -1, asc = false;
  function key(r) {
    var td = r.cells[col];
    if (td.dataset.v === undefined) return td.textContent.toLowerCase();
    return td.dataset.v === '' ? -Infinity : parseFloat(td.dataset.v);
  }
  function render() {
    var q = filter.value.trim().toLowerCase(), order = rows;
    if (col >= 0) {
      order = rows.map(function(r, i) {
        return [key(r), i, r];
      });
      order.sort(function(a, b) {
        var c = a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
        return (asc ? c : -c) || a[1] - b[1];
      });
      order = order.map(function(x) {
        return x[2];
      });
    }
    var shown = 0, match = 0, frag = document.createDocumentFragment();
    order.forEach(function(r) {
      var ok = !q || r.cells[0].textContent.toLowerCase().indexOf(q) >= 0;
      if (ok) match++;
      r.hidden = !(ok && shown < limit);
      if (!r.hidden) shown++;
      frag.appendChild(r);
    });
    body.appendChild(frag);
    count.textContent = shown + ' of ' + match + (q ? ' matching' : '') + ' rows';
    more.hidden = shown >= match;
    more.textContent = 'Show all ' + match + ' rows';
  }
  Array.prototype.forEach.call(heads, function(th, i) {
    th.addEventListener('click', function() {
      asc = col === i ? !asc : rows.length > 0 && rows[0].cells[i].dataset.v === undefined;
      col = i;
      Array.prototype.forEach.call(heads, function(h) {
        h.className = '';
      });
      th.className = asc ? 'asc' : 'desc';
      render();
    });
  });
  filter.addEventListener('input', render);
  more.addEventListener('click', function() {
    limit = Infinity;
    render();
  });
  box.querySelector('.tools').hidden = false;
  render();
});
