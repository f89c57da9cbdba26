var counter = 0; // top level of a script: a global property, left alone

function total(items, scale) {
  let sum = 0;
  let label = "total"
  ;[1, 2].forEach(function (n) {
    let doubled = n * 2;
    sum += doubled;
  });
  // Left alone: two declarators, a block-level var, a parameter,
  // a self-reference, a use before the declaration, a redeclaration.
  var a = 1, b = 2;
  if (scale) {
    var factor = scale;
  }
  var items = items || [];
  var cache = cache || {};
  console.log(early);
  var early = 3;
  var twice = 1;
  for (var i = 0; i < 2; i++) {
    var twice = i;
  }
  return [sum, label, a, b, factor, items, cache, early, twice];
}

const arrow = (x) => {
  let y = x + 1;
  return y;
};

class Box {
  size() {
    let s = 4;
    return s;
  }
}
