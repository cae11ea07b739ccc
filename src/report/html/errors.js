// The page's first script: an error anywhere is written on <body> (data-errors), where
// the tests read it.
window.addEventListener('error', function(e) {
  document.body.dataset.errors = (document.body.dataset.errors || '') + e.message + ';';
});
