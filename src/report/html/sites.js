// Memory by site over time (html_report.cc's SitesOverTime): a click on a band or its name.
document.querySelectorAll('.sites').forEach(function(box) {
  // A site's band or name, clicked: it is outlined and the stack of its largest
  // allocation is shown (innermost frame first, as _memory_viz lists it).
  var data = JSON.parse(box.querySelector('script').textContent), out = box.querySelector('pre.stack');
  function show(i) {
    box.querySelectorAll('.on').forEach(function(e) {
      e.classList.remove('on');
    });
    box.querySelectorAll('[data-i="' + i + '"]').forEach(function(e) {
      e.classList.add('on');
    });
    var s = data[i];
    out.textContent = s.site + '\n' + (s.stack.length ? s.stack.join('\n') : '(no stack recorded)');
    box.dataset.shown = i;
  }
  box.querySelectorAll('[data-i]').forEach(function(e) {
    e.addEventListener('click', function() {
      show(+e.dataset.i);
    });
  });
});
