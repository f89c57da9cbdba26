//! The code under test; this variant (pass) is copied over the project by
//! TestLiveEcosystems.

pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

pub fn mul(a: i64, b: i64) -> i64 {
    a * b
}

pub fn sub(a: i64, b: i64) -> i64 {
    a - b
}
