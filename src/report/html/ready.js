// The page's last script: every part above ran (the tests wait for data-ready).
document.body.dataset.ready = '1';
