#!/bin/sh
# Each case: A B EXPECTED. Prints TAP, which horizon's gate parses into the
# set of failing tests.
fail=0
n=0
check() {
  n=$((n + 1))
  got=$(sh ./add.sh "$1" "$2")
  if [ "$got" = "$3" ]; then
    echo "ok $n - add $1 $2"
  else
    echo "not ok $n - add $1 $2"
    echo "# want $3, got $got"
    fail=1
  fi
}
check 2 3 5
check 10 0 10
echo "1..$n"
exit $fail
