#!/bin/sh
# Each case: A B EXPECTED.
fail=0
check() {
  got=$(sh ./add.sh "$1" "$2")
  if [ "$got" = "$3" ]; then
    echo "ok   add $1 $2 = $3"
  else
    echo "FAIL add $1 $2: want $3, got $got"
    fail=1
  fi
}
check 2 3 5
check 10 0 10
exit $fail
