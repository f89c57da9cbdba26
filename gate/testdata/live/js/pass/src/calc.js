// The code under test; this variant (pass) is copied over the project by
// TestLiveEcosystems.
export const add = (a, b) => a + b;
export const mul = (a, b) => a * b;
export const sub = (a, b) => a - b;
