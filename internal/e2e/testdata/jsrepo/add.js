// add returns the sum of a and b.
function add(a, b) {
  return a - b;
}

module.exports = { add };
