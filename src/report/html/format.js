// Numbers as the C++ writes them in the same page (report/format.cc): FormatDuration and
// Bytes, digit for digit (printf rounds an exact tie to even, toFixed up: corrected).
function t2pFixed(x, digits) {
  // An exact tie at up to 3 digits is a multiple of 1/16 (the decimal half over a power of
  // two): only then are x * 16 and x * 10^digits exact, and the half seen is real.
  var m = Math.pow(10, digits), y = Math.abs(x) * m;
  if ((x * 16) % 1 === 0 && y % 1 === 0.5 && Math.floor(y) % 2 === 0) {
    return ((x < 0 ? -1 : 1) * Math.floor(y) / m).toFixed(digits);
  }
  return x.toFixed(digits);
}
function t2pDuration(ns) {
  var a = Math.abs(ns);
  if (a < 1e3) return ns + 'ns';
  if (a < 1e6) return t2pFixed(ns / 1e3, a < 1e4 ? 2 : a < 1e5 ? 1 : 0) + 'us';
  if (a < 1e9) return t2pFixed(ns / 1e6, a < 1e7 ? 2 : a < 1e8 ? 1 : 0) + 'ms';
  return t2pFixed(ns / 1e9, a < 1e10 ? 3 : 2) + 's';
}
function t2pBytes(b) {
  var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], v = Math.abs(b), u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return (b < 0 ? '-' : '') + (u === 0 ? Math.abs(b) + ' B' : t2pFixed(v, 2) + ' ' + units[u]);
}
