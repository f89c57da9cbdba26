#!/bin/sh
# The gate: add(2, 3) must be 5. Prints TAP.
cd "$(dirname "$0")/.."
node -e '
const { add } = require("./add.js");
if (add(2, 3) !== 5) { console.log("not ok 1 - add 2 3"); console.log("1..1"); process.exit(1); }
console.log("ok 1 - add 2 3"); console.log("1..1");
'
